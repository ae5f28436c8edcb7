//! The legacy-token import: JSON Lines of old refresh tokens (contract part 6) into the store.
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

use serde::Deserialize;

use crate::clock::UnixTime;
use crate::context::Context;
use crate::domain::{ConsumerKey, LegacyToken, PrincipalId, PrincipalType, Scopes};
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

/// A line as it appears in the file, before validation. Unknown fields are ignored.
#[derive(Deserialize)]
struct RawLine {
    token: TokenField,
    consumer_key: String,
    principal_type: String,
    principal_id: String,
    scopes: Vec<String>,
    wsadmin: bool,
    #[serde(default)]
    company_id: Option<String>,
    #[serde(default)]
    expires_at: Option<i64>,
}

/// The `token` field, read so that a wrong type is reported without its value: serde's own
/// "invalid type" message would quote a number or other scalar given as the token.
#[derive(Deserialize)]
#[serde(untagged)]
enum TokenField {
    Text(String),
    NotText(serde::de::IgnoredAny),
}

/// Parses and validates one non-blank line. The error is the skip reason; it never contains the
/// token.
pub fn parse_line(line: &[u8], now: UnixTime) -> Result<LegacyToken, String> {
    let raw: RawLine = serde_json::from_slice(line).map_err(describe_json_error)?;
    validate(raw, now)
}

fn validate(raw: RawLine, now: UnixTime) -> Result<LegacyToken, String> {
    let TokenField::Text(token) = raw.token else {
        return Err("token must be a string".into());
    };
    if token.is_empty() {
        return Err("token is empty".into());
    }
    if token.len() > MAX_TOKEN_BYTES {
        return Err(format!("token is longer than {MAX_TOKEN_BYTES} bytes"));
    }
    if token.trim() != token || token.chars().any(char::is_control) {
        return Err("token has surrounding whitespace or control characters".into());
    }
    let consumer_key =
        ConsumerKey::parse(&raw.consumer_key).map_err(|e| format!("consumer_key: {e}"))?;
    let principal_type = match raw.principal_type.as_str() {
        "user" => PrincipalType::User,
        "company" => PrincipalType::Company,
        _ => return Err("principal_type must be \"user\" or \"company\"".into()),
    };
    let principal_id = PrincipalId::parse(&raw.principal_id).map_err(|e| e.to_string())?;
    let scopes = Scopes::from_list(&raw.scopes).map_err(|e| format!("scopes: {e}"))?;
    let company_id = match raw.company_id.as_deref() {
        None => None,
        Some(text) => {
            Some(PrincipalId::parse(text).map_err(|_| "company_id must be a UUID".to_owned())?)
        }
    };
    if raw.wsadmin && company_id.is_none() {
        return Err("company_id is required when wsadmin is true".into());
    }
    if let Some(at) = raw.expires_at {
        if at <= 0 {
            return Err("expires_at must be a positive number of seconds since the epoch".into());
        }
        if at <= now {
            return Err(format!("token already expired (expires_at {at})"));
        }
    }
    Ok(LegacyToken {
        token_hash: TokenHash::of(&token),
        consumer_key,
        principal_type,
        principal_id,
        scopes,
        wsadmin: raw.wsadmin,
        company_id,
        expires_at: raw.expires_at,
    })
}

/// serde_json's message without its "at line 1 column N" suffix (always line 1 here: one line is
/// parsed at a time), with the column kept.
fn describe_json_error(error: serde_json::Error) -> String {
    let text = error.to_string();
    let message = match text.rfind(" at line ") {
        Some(at) => &text[..at],
        None => text.as_str(),
    };
    match error.classify() {
        serde_json::error::Category::Data => message.to_owned(),
        _ => format!("not a JSON object: {message} (column {})", error.column()),
    }
}

/// Imports every line of `reader`. `progress` is called every [`PROGRESS_EVERY_LINES`] lines and
/// once at the end. Fails only when the reader or the store fails; invalid lines are reported in
/// the returned [`ImportReport`].
pub async fn import_legacy_tokens<R, F>(
    ctx: &Context,
    reader: R,
    progress: F,
) -> Result<ImportReport, ImportError>
where
    R: BufRead,
    F: FnMut(ImportProgress),
{
    import_legacy_tokens_into(ctx.store.clone(), ctx.clock.now(), reader, progress).await
}

/// [`import_legacy_tokens`] on the legacy aggregate alone, with tokens expired at `now` skipped:
/// the import needs nothing else from the store.
pub async fn import_legacy_tokens_into<R, F>(
    store: Arc<dyn LegacyStore>,
    now: UnixTime,
    mut reader: R,
    mut progress: F,
) -> Result<ImportReport, ImportError>
where
    R: BufRead,
    F: FnMut(ImportProgress),
{
    let started = Instant::now();
    let mut report = ImportReport::default();
    let mut bytes_read: u64 = 0;
    let mut line = Vec::with_capacity(1024);
    let mut batch = Batch::default();
    let mut writer = Writer::new(store);

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

/// Writes batches in the background, one at a time, so that parsing the next batch overlaps
/// the store's write of the previous one.
struct Writer {
    store: Arc<dyn LegacyStore>,
    in_flight: Option<WriteTask>,
    /// Lines of batches confirmed written.
    written: u64,
}

impl Writer {
    fn new(store: Arc<dyn LegacyStore>) -> Self {
        Self {
            store,
            in_flight: None,
            written: 0,
        }
    }

    async fn submit(
        &mut self,
        (tokens, lines): (Vec<LegacyToken>, u64),
    ) -> Result<(), ImportError> {
        self.wait().await?;
        let store = Arc::clone(&self.store);
        self.in_flight = Some(tokio::spawn(async move {
            (store.put_legacy_tokens(&tokens).await, lines)
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
            Err(join) => (Err(StoreError::Internal(join.to_string())), 0),
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

struct LineRead {
    /// Bytes consumed, terminator included.
    bytes: u64,
    /// The line exceeded [`MAX_LINE_BYTES`]; `buf` holds only its beginning.
    too_long: bool,
}

/// Reads one line (without its `\n`) into `buf`, keeping at most [`MAX_LINE_BYTES`] + 1 bytes of
/// it and discarding the rest. `None` at end of input.
fn read_line_capped<R: BufRead>(
    reader: &mut R,
    buf: &mut Vec<u8>,
) -> std::io::Result<Option<LineRead>> {
    let mut consumed: u64 = 0;
    let mut too_long = false;
    loop {
        let available = match reader.fill_buf() {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok((consumed > 0).then_some(LineRead {
                bytes: consumed,
                too_long,
            }));
        }
        let (chunk, used, done) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (&available[..at], at + 1, true),
            None => (available, available.len(), false),
        };
        if !too_long {
            let room = MAX_LINE_BYTES + 1 - buf.len();
            if chunk.len() > room {
                buf.extend_from_slice(&chunk[..room]);
                too_long = true;
            } else {
                buf.extend_from_slice(chunk);
                too_long = buf.len() > MAX_LINE_BYTES;
            }
        }
        reader.consume(used);
        consumed += used as u64;
        if done {
            return Ok(Some(LineRead {
                bytes: consumed,
                too_long,
            }));
        }
    }
}

fn trim_ascii_whitespace(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |at| at + 1);
    &bytes[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    use async_trait::async_trait;

    use crate::domain::{LegacyApp, LegacyExchange};
    use crate::store::StoreResult;

    const NOW: UnixTime = 1_700_000_000;
    const USER: &str = "6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b";
    const COMPANY: &str = "0e8f3c4a-1b2c-4d5e-8f90-a1b2c3d4e5f6";

    fn line(token: &str) -> String {
        format!(
            r#"{{"token":"{token}","consumer_key":"qyprd-OLD","principal_type":"user","principal_id":"{USER}","scopes":["read","write"],"wsadmin":false}}"#
        )
    }

    fn parse(text: &str) -> Result<LegacyToken, String> {
        parse_line(text.as_bytes(), NOW)
    }

    #[test]
    fn parses_a_valid_line_and_keeps_only_the_hash() {
        let token = parse(&line("old-secret-token")).unwrap();
        assert_eq!(token.token_hash, TokenHash::of("old-secret-token"));
        assert_eq!(token.consumer_key.as_str(), "qyprd-OLD");
        assert_eq!(token.principal_type, PrincipalType::User);
        assert_eq!(token.principal_id.to_string(), USER);
        assert_eq!(token.scopes.to_string(), "read write");
        assert!(!token.wsadmin);
        assert_eq!(token.company_id, None);
        assert_eq!(token.expires_at, None);
    }

    #[test]
    fn parses_wsadmin_company_and_expiry() {
        let text = format!(
            r#"{{"token":"t","consumer_key":"k","principal_type":"company","principal_id":"{COMPANY}","scopes":[],"wsadmin":true,"company_id":"{COMPANY}","expires_at":{},"extra":"ignored"}}"#,
            NOW + 60
        );
        let token = parse(&text).unwrap();
        assert_eq!(token.principal_type, PrincipalType::Company);
        assert!(token.wsadmin);
        assert_eq!(token.company_id.unwrap().to_string(), COMPANY);
        assert_eq!(token.expires_at, Some(NOW + 60));
        assert!(token.scopes.is_empty());
    }

    fn reason(text: &str) -> String {
        parse(text).unwrap_err()
    }

    #[test]
    fn rejects_invalid_lines_with_a_reason() {
        let valid: serde_json::Value = serde_json::from_str(&line("tok")).unwrap();
        let with = |key: &str, value: serde_json::Value| {
            let mut v = valid.clone();
            v[key] = value;
            v.to_string()
        };
        let without = |key: &str| {
            let mut v = valid.clone();
            v.as_object_mut().unwrap().remove(key);
            v.to_string()
        };
        assert!(reason("not json").contains("not a JSON object"));
        assert!(reason("[1,2]").contains("invalid type"));
        assert!(reason(&without("token")).contains("missing field `token`"));
        assert!(reason(&without("wsadmin")).contains("missing field `wsadmin`"));
        assert!(reason(&without("scopes")).contains("missing field `scopes`"));
        assert_eq!(reason(&with("token", "".into())), "token is empty");
        assert!(reason(&with("token", " tok".into())).contains("whitespace"));
        assert!(reason(&with("consumer_key", "".into())).starts_with("consumer_key"));
        assert!(reason(&with("principal_type", "application".into())).contains("principal_type"));
        assert_eq!(
            reason(&with("principal_id", "nope".into())),
            "principal id must be a UUID"
        );
        assert!(reason(&with("scopes", serde_json::json!(["a b"]))).starts_with("scopes"));
        assert!(reason(&with("scopes", serde_json::json!(["a\"b"]))).starts_with("scopes"));
        assert!(reason(&with("scopes", "read".into())).contains("invalid type"));
        assert!(reason(&with("wsadmin", "yes".into())).contains("invalid type"));
        assert_eq!(
            reason(&with("wsadmin", true.into())),
            "company_id is required when wsadmin is true"
        );
        assert_eq!(
            reason(&with("company_id", "x".into())),
            "company_id must be a UUID"
        );
        assert!(reason(&with("expires_at", NOW.into())).contains("expired"));
        assert!(reason(&with("expires_at", (-5).into())).contains("positive"));
        assert!(reason(&with("expires_at", "soon".into())).contains("invalid type"));
    }

    #[test]
    fn reasons_never_contain_the_token() {
        let secret = "very-secret-old-token";
        let text = line(secret).replace(USER, "not-a-uuid");
        assert!(!reason(&text).contains(secret));
        let text = line(secret).replace("\"user\"", "\"robot\"");
        assert!(!reason(&text).contains(secret));
    }

    #[test]
    fn a_token_of_another_type_is_refused_without_echoing_it() {
        let valid: serde_json::Value = serde_json::from_str(&line("tok")).unwrap();
        for (secret, token) in [
            (
                "918273645546372819",
                serde_json::json!(918273645546372819_u64),
            ),
            ("-918273645546", serde_json::json!(-918273645546_i64)),
            ("1234.5678", serde_json::json!(1234.5678)),
            ("true", serde_json::json!(true)),
            ("hidden-in-array", serde_json::json!(["hidden-in-array"])),
            (
                "hidden-in-object",
                serde_json::json!({"value": "hidden-in-object"}),
            ),
        ] {
            let mut value = valid.clone();
            value["token"] = token;
            let reason = reason(&value.to_string());
            assert_eq!(reason, "token must be a string", "{secret}");
            assert!(!reason.contains(secret), "{reason}");
        }
        assert!(reason(&line("tok").replace("\"tok\"", "null")).contains("must be a string"));
    }

    #[test]
    fn long_lines_are_cut_and_the_rest_discarded() {
        let mut input = vec![b'x'; MAX_LINE_BYTES + 10];
        input.extend_from_slice(b"\nnext\n");
        let mut reader = std::io::BufReader::with_capacity(16, input.as_slice());
        let mut buf = Vec::new();
        let first = read_line_capped(&mut reader, &mut buf).unwrap().unwrap();
        assert!(first.too_long);
        assert_eq!(first.bytes, (MAX_LINE_BYTES + 11) as u64);
        assert_eq!(buf.len(), MAX_LINE_BYTES + 1);
        buf.clear();
        let second = read_line_capped(&mut reader, &mut buf).unwrap().unwrap();
        assert!(!second.too_long);
        assert_eq!(buf, b"next");
        buf.clear();
        assert!(read_line_capped(&mut reader, &mut buf).unwrap().is_none());
    }

    #[test]
    fn last_line_without_newline_is_read() {
        let mut reader = "a\r\nb".as_bytes();
        let mut buf = Vec::new();
        read_line_capped(&mut reader, &mut buf).unwrap().unwrap();
        assert_eq!(trim_ascii_whitespace(&buf), b"a");
        buf.clear();
        let last = read_line_capped(&mut reader, &mut buf).unwrap().unwrap();
        assert_eq!((buf.as_slice(), last.bytes), (b"b".as_slice(), 1));
    }

    /// Only the legacy-token calls are implemented; the import uses nothing else.
    #[derive(Debug, Default)]
    struct RecordingStore {
        calls: Mutex<Vec<usize>>,
        tokens: Mutex<HashMap<TokenHash, LegacyToken>>,
        fail_after_calls: Option<usize>,
    }

    #[async_trait]
    impl LegacyStore for RecordingStore {
        async fn put_legacy_tokens(&self, tokens: &[LegacyToken]) -> StoreResult<()> {
            let mut calls = self.calls.lock().unwrap();
            if self.fail_after_calls == Some(calls.len()) {
                return Err(StoreError::Unavailable("test outage".into()));
            }
            calls.push(tokens.len());
            let mut stored = self.tokens.lock().unwrap();
            for token in tokens {
                stored.insert(token.token_hash.clone(), token.clone());
            }
            Ok(())
        }
        async fn get_legacy_token(
            &self,
            hash: &TokenHash,
            _now: UnixTime,
        ) -> StoreResult<Option<LegacyToken>> {
            Ok(self.tokens.lock().unwrap().get(hash).cloned())
        }
        async fn put_legacy_app(&self, _: &LegacyApp) -> StoreResult<()> {
            unimplemented!()
        }
        async fn get_legacy_app(&self, _: &ConsumerKey) -> StoreResult<Option<LegacyApp>> {
            unimplemented!()
        }
        async fn get_legacy_exchange(&self, _: &TokenHash) -> StoreResult<Option<LegacyExchange>> {
            unimplemented!()
        }
    }

    /// The import at [`NOW`] into `store`.
    async fn import<R: BufRead, F: FnMut(ImportProgress)>(
        store: &Arc<RecordingStore>,
        reader: R,
        progress: F,
    ) -> Result<ImportReport, ImportError> {
        import_legacy_tokens_into(store.clone(), NOW, reader, progress).await
    }

    fn file(lines: usize, bad_every: usize) -> String {
        let mut text = String::new();
        for i in 1..=lines {
            if bad_every > 0 && i % bad_every == 0 {
                text.push_str("{\"token\":\"x\"}\n");
            } else if i % 7 == 0 {
                text.push_str("   \n");
            } else {
                text.push_str(&line(&format!("token-{i}")));
                text.push('\n');
            }
        }
        text
    }

    #[tokio::test]
    async fn imports_in_batches_and_reports_every_line() {
        let store = Arc::new(RecordingStore::default());
        let input = file(2_500, 100);
        let mut seen = Vec::new();
        let report = import(&store, input.as_bytes(), |p| seen.push(p))
            .await
            .unwrap();

        let bad = 2_500 / 100;
        let blank = (1..=2_500).filter(|i| i % 7 == 0 && i % 100 != 0).count() as u64;
        assert_eq!(report.lines_read, 2_500);
        assert_eq!(report.skipped, bad as u64);
        assert_eq!(report.blank, blank);
        assert_eq!(report.imported, 2_500 - bad as u64 - blank);
        assert_eq!(
            report.lines_read,
            report.imported + report.skipped + report.blank
        );
        assert!(report.all_skips_listed());
        assert_eq!(report.skipped_lines[0].line, 100);
        assert!(report.skipped_lines[0].reason.contains("missing field"));

        let calls = store.calls.lock().unwrap().clone();
        assert_eq!(calls.iter().sum::<usize>() as u64, report.imported);
        assert!(calls.iter().all(|&n| n <= BATCH_SIZE), "{calls:?}");
        assert_eq!(store.tokens.lock().unwrap().len() as u64, report.imported);
        assert!(store
            .tokens
            .lock()
            .unwrap()
            .contains_key(&TokenHash::of("token-1")));

        assert_eq!(seen.len(), 3);
        let last = *seen.last().unwrap();
        assert_eq!(last.lines, 2_500);
        assert_eq!(last.bytes, input.len() as u64);
        assert_eq!(last.imported, report.imported);
    }

    #[tokio::test]
    async fn reimport_and_repeated_tokens_leave_one_record_each() {
        let store = Arc::new(RecordingStore::default());
        let input = format!("{}\n{}\n\n{}\n", line("a"), line("b"), line("a"));
        let first = import(&store, input.as_bytes(), |_| {}).await.unwrap();
        let second = import(&store, input.as_bytes(), |_| {}).await.unwrap();
        assert_eq!((first.imported, first.blank, first.skipped), (3, 1, 0));
        assert_eq!(
            (first.lines_read, first.imported, first.skipped),
            (second.lines_read, second.imported, second.skipped)
        );
        assert_eq!(store.tokens.lock().unwrap().len(), 2);
        // Within a batch, a repeated token is written once.
        assert_eq!(*store.calls.lock().unwrap(), vec![2, 2]);
    }

    #[tokio::test]
    async fn skip_reasons_are_capped_but_counted() {
        let store = Arc::new(RecordingStore::default());
        let input = "nope\n".repeat(MAX_REPORTED_SKIPS + 5);
        let report = import(&store, input.as_bytes(), |_| {}).await.unwrap();
        assert_eq!(report.skipped, (MAX_REPORTED_SKIPS + 5) as u64);
        assert_eq!(report.skipped_lines.len(), MAX_REPORTED_SKIPS);
        assert!(!report.all_skips_listed());
        assert_eq!(report.imported, 0);
    }

    #[tokio::test]
    async fn a_store_failure_stops_the_import_and_says_how_far_it_got() {
        let store = Arc::new(RecordingStore {
            fail_after_calls: Some(1),
            ..Default::default()
        });
        let input = file(2_500, 0);
        let err = import(&store, input.as_bytes(), |_| {}).await.unwrap_err();
        match err {
            ImportError::Store { imported, .. } => assert_eq!(imported, BATCH_SIZE as u64),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_read_failure_names_the_line() {
        struct Broken;
        impl std::io::Read for Broken {
            fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("disk on fire"))
            }
        }
        use std::io::Read as _;
        let store = Arc::new(RecordingStore::default());
        let first = format!("{}\n", line("a"));
        let reader = std::io::BufReader::new(first.as_bytes().chain(Broken));
        let err = import(&store, reader, |_| {}).await.unwrap_err();
        assert!(matches!(err, ImportError::Read { line: 2, .. }), "{err:?}");
    }
}
