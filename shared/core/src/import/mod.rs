//! The legacy-token import: JSON Lines of old refresh tokens (docs/decisions.md, "Administration
//! (tokenctl)") into the store.
//!
//! One object a line:
//!
//! ```text
//! {"token", "consumer_key", "principal_type": "user"|"company", "principal_id",
//!  "scopes": [...], "wsadmin": bool, "company_id"?, "expires_at"? (epoch s)}
//! ```
//!
//! - Streaming: one line is held at a time, plus at most two batches of parsed records, so memory
//!   stays flat however long the file is. A line longer than [`MAX_LINE_BYTES`] is skipped without
//!   being buffered.
//! - Old tokens are stored only as SHA-256 digests ([`TokenHash`]); the clear token is dropped as
//!   soon as the line is parsed, and never appears in a skip reason.
//! - An invalid line is skipped and reported with its line number and reason; the import goes on.
//!   Blank lines are ignored. Tokens that already expired are skipped too.
//! - Records are written [`BATCH_SIZE`] at a time through [`LegacyStore::put_legacy_tokens`], which
//!   upserts by hash, so running the same file again creates no duplicates. While one batch is
//!   being written the next one is parsed.
//!
//! [`LegacyStore::put_legacy_tokens`]: crate::store::LegacyStore::put_legacy_tokens

use std::collections::HashMap;
use std::io::BufRead;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::clock::UnixTime;
use crate::context::Context;
use crate::domain::audit::AuditKind;
use crate::domain::LegacyToken;
use crate::secrets::TokenHash;
use crate::store::{LegacyStore, StoreError};

/// Records handed to the store per call; the backends split further as they need.
pub const BATCH_SIZE: usize = 1_000;
/// Skip reasons kept in the report; the counts are always exact.
pub const MAX_REPORTED_SKIPS: usize = 1_000;
/// Longest accepted line. Real lines are a few hundred bytes.
pub const MAX_LINE_BYTES: usize = 64 * 1024;
/// Longest accepted old token.
pub const MAX_TOKEN_BYTES: usize = 4 * 1024;
/// How often (in lines) the progress callback is called, besides once at the end.
pub const PROGRESS_EVERY_LINES: u64 = 1_000;

/// One line that was not imported.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SkippedLine {
    /// 1-based, as an editor shows it.
    pub line: u64,
    pub reason: String,
}

/// What an import did. `lines_read == imported + skipped + blank`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportReport {
    pub lines_read: u64,
    /// Valid lines written to the store (a token repeated in the file is written again and
    /// counted again; the store keeps one record per token).
    pub imported: u64,
    pub skipped: u64,
    pub blank: u64,
    /// The first [`MAX_REPORTED_SKIPS`] skipped lines, in file order.
    pub skipped_lines: Vec<SkippedLine>,
    pub elapsed: Duration,
}

impl ImportReport {
    /// Whether `skipped_lines` lists every skipped line.
    pub fn all_skips_listed(&self) -> bool {
        self.skipped_lines.len() as u64 == self.skipped
    }
}

/// Where an import stands, for a progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImportProgress {
    pub lines: u64,
    /// Bytes consumed from the reader, line terminators included.
    pub bytes: u64,
    /// Records confirmed written so far.
    pub imported: u64,
    pub skipped: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("reading line {line}: {source}")]
    Read {
        line: u64,
        #[source]
        source: std::io::Error,
    },
    /// The store failed; `imported` records were written before it did. The import is
    /// idempotent, so running it again is safe.
    #[error("{source} ({imported} tokens were imported before the failure; the import can be re-run safely)")]
    Store {
        imported: u64,
        #[source]
        source: StoreError,
    },
}

/// Imports every line of `reader`. `progress` is called every [`PROGRESS_EVERY_LINES`] lines and
/// once at the end. Fails only when the reader or the store fails; invalid lines are reported in
/// the returned [`ImportReport`]. A finished import is an audit event (`legacy_tokens.imported`,
/// filed under the deployment).
pub async fn import_legacy_tokens<R, F>(
    ctx: &Context,
    reader: R,
    progress: F,
) -> Result<ImportReport, ImportError>
where
    R: BufRead,
    F: FnMut(ImportProgress),
{
    let store = ctx.store.clone();
    let report = import_legacy_tokens_into(
        store,
        |store| store.legacy(),
        ctx.clock.now(),
        reader,
        progress,
    )
    .await?;
    let kind = AuditKind::LegacyTokensImported {
        imported: report.imported,
        skipped: report.skipped,
    };
    crate::audit::record(ctx, crate::audit::event(ctx, kind)).await;
    Ok(report)
}

/// [`import_legacy_tokens`] on the legacy aggregate alone, which `legacy` finds in `store`, with
/// tokens expired at `now` skipped: the import needs nothing else from the store. The writes run
/// on a task of their own, hence an owned `store`.
pub async fn import_legacy_tokens_into<S, R, F>(
    store: Arc<S>,
    legacy: LegacyOf<S>,
    now: UnixTime,
    mut reader: R,
    mut progress: F,
) -> Result<ImportReport, ImportError>
where
    S: ?Sized + Send + Sync + 'static,
    R: BufRead,
    F: FnMut(ImportProgress),
{
    let started = Instant::now();
    let mut report = ImportReport::default();
    let mut bytes_read: u64 = 0;
    let mut line = Vec::with_capacity(1024);
    let mut batch = Batch::default();
    let mut writer = Writer::new(store, legacy);

    loop {
        line.clear();
        let line_number = report.lines_read + 1;
        let read =
            read_line_capped(&mut reader, &mut line).map_err(|source| ImportError::Read {
                line: line_number,
                source,
            })?;
        let Some(read) = read else { break };
        bytes_read += read.bytes;
        report.lines_read = line_number;

        let outcome = if read.too_long {
            Err(format!("line is longer than {MAX_LINE_BYTES} bytes"))
        } else {
            let text = trim_ascii_whitespace(&line);
            if text.is_empty() {
                report.blank += 1;
                Ok(None)
            } else {
                parse_line(text, now).map(Some)
            }
        };
        match outcome {
            Ok(None) => {}
            Ok(Some(token)) => batch.push(token),
            Err(reason) => {
                report.skipped += 1;
                if report.skipped_lines.len() < MAX_REPORTED_SKIPS {
                    report.skipped_lines.push(SkippedLine {
                        line: line_number,
                        reason,
                    });
                }
            }
        }

        if batch.len() >= BATCH_SIZE {
            writer.submit(batch.take()).await?;
        }
        if line_number % PROGRESS_EVERY_LINES == 0 {
            progress(ImportProgress {
                lines: report.lines_read,
                bytes: bytes_read,
                imported: writer.written,
                skipped: report.skipped,
            });
        }
    }

    if !batch.is_empty() {
        writer.submit(batch.take()).await?;
    }
    report.imported = writer.finish().await?;
    report.elapsed = started.elapsed();
    progress(ImportProgress {
        lines: report.lines_read,
        bytes: bytes_read,
        imported: report.imported,
        skipped: report.skipped,
    });
    Ok(report)
}

/// Parsed records waiting to be written. A token repeated within one batch keeps only its last
/// occurrence (DynamoDB refuses a batch that names one key twice), but every line is counted.
#[derive(Default)]
struct Batch {
    tokens: Vec<LegacyToken>,
    index: HashMap<TokenHash, usize>,
    lines: u64,
}

impl Batch {
    fn push(&mut self, token: LegacyToken) {
        self.lines += 1;
        match self.index.get(&token.token_hash) {
            Some(&at) => self.tokens[at] = token,
            None => {
                self.index
                    .insert(token.token_hash.clone(), self.tokens.len());
                self.tokens.push(token);
            }
        }
    }

    fn len(&self) -> usize {
        self.lines as usize
    }

    fn is_empty(&self) -> bool {
        self.lines == 0
    }

    fn take(&mut self) -> (Vec<LegacyToken>, u64) {
        self.index.clear();
        let lines = std::mem::take(&mut self.lines);
        (std::mem::take(&mut self.tokens), lines)
    }
}

type WriteTask = tokio::task::JoinHandle<(Result<(), StoreError>, u64)>;

/// Where the import finds the legacy aggregate in the store it is given.
pub type LegacyOf<S> = fn(&S) -> &dyn LegacyStore;

/// Writes batches in the background, one at a time, so that parsing the next batch overlaps
/// the store's write of the previous one.
struct Writer<S: ?Sized> {
    store: Arc<S>,
    legacy: LegacyOf<S>,
    in_flight: Option<WriteTask>,
    /// Lines of batches confirmed written.
    written: u64,
}

impl<S: ?Sized + Send + Sync + 'static> Writer<S> {
    fn new(store: Arc<S>, legacy: LegacyOf<S>) -> Self {
        Self {
            store,
            legacy,
            in_flight: None,
            written: 0,
        }
    }

    async fn submit(
        &mut self,
        (tokens, lines): (Vec<LegacyToken>, u64),
    ) -> Result<(), ImportError> {
        self.wait().await?;
        let (store, legacy) = (Arc::clone(&self.store), self.legacy);
        self.in_flight = Some(tokio::spawn(async move {
            (legacy(&store).put_legacy_tokens(&tokens).await, lines)
        }));
        Ok(())
    }

    async fn wait(&mut self) -> Result<(), ImportError> {
        let Some(task) = self.in_flight.take() else {
            return Ok(());
        };
        let (result, lines) = match task.await {
            Ok(done) => done,
            Err(join) if join.is_panic() => std::panic::resume_unwind(join.into_panic()),
            Err(join) => (Err(StoreError::internal(join.to_string())), 0),
        };
        match result {
            Ok(()) => {
                self.written += lines;
                Ok(())
            }
            Err(source) => Err(ImportError::Store {
                imported: self.written,
                source,
            }),
        }
    }

    async fn finish(mut self) -> Result<u64, ImportError> {
        self.wait().await?;
        Ok(self.written)
    }
}

mod lines;
mod parse;

use lines::{read_line_capped, trim_ascii_whitespace};
pub use parse::parse_line;
#[cfg(test)]
mod tests;
