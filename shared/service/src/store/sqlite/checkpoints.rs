//! WAL checkpoints, on a thread of their own.
//!
//! By default SQLite checkpoints in the connection that commits once the WAL passes 1,000
//! pages: it copies the pages back into the database and `fsync`s both files, several
//! milliseconds that would hold up the runtime thread the write runs on (`writer.rs`). So the
//! write connection's automatic checkpoints are off, and this thread runs a passive checkpoint
//! (one that never waits for, nor blocks, the writer or the readers) every
//! [`CHECKPOINT_INTERVAL`] after a commit. It stops when the store is dropped.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::Connection;

use super::map_err;
use crate::store::{StoreError, StoreResult};

/// How often the WAL is copied back: bounds its size to what a busy server writes meanwhile.
const CHECKPOINT_INTERVAL: Duration = Duration::from_millis(250);

/// Commits since the last checkpoint, counted by the writer; the thread skips a quiet interval.
#[derive(Default)]
pub(super) struct Commits(AtomicU64);

impl Commits {
    pub(super) fn counted(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

pub(super) struct Checkpoints {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Checkpoints {
    /// Starts the thread on a connection of its own to `path`.
    pub(super) fn spawn(path: &Path, commits: Arc<Commits>) -> StoreResult<Self> {
        let conn = Connection::open(path).map_err(map_err)?;
        let (stop, stopped) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("sqlite-checkpoints".into())
            .spawn(move || run(&conn, &commits, &stopped))
            .map_err(|e| {
                StoreError::internal(format!("cannot start the checkpoint thread: {e}"))
            })?;
        Ok(Self {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for Checkpoints {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn run(conn: &Connection, commits: &Commits, stopped: &mpsc::Receiver<()>) {
    while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(CHECKPOINT_INTERVAL) {
        if commits.0.swap(0, Ordering::Relaxed) == 0 {
            continue;
        }
        // Passive: copies what no reader still needs; a later checkpoint copies the rest.
        if let Err(error) = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
            tracing::warn!(error = %map_err(error), "WAL checkpoint failed");
        }
    }
}
