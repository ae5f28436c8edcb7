//! One write connection per database file in a process.
//!
//! The local server opens its file more than once: its store, the signing-key ring's and the
//! sweeper's. Each open had a write connection of its own, so they contended for SQLite's write
//! lock: a group that found the lock taken was handed to the blocking pool, where SQLite's busy
//! handler sleeps 1 to 100 ms between tries, and a sweep's back-to-back batches (once a minute)
//! held every request's write for up to hundreds of milliseconds (docs/benchmarks.md,
//! "Checkpoints every 5 ms, and the sweeper's stall"). Stores opened on one file now share the
//! first opener's writer: their writes go through one group commit and never wait for each
//! other's lock. Another process (`tokenctl`) still takes the lock as before, and is waited for
//! as before.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use super::lock;
use super::writer::Writer;
use crate::StoreResult;

/// The writer of each database file this process has open, by its canonical path.
static WRITERS: Mutex<Vec<(PathBuf, Weak<Writer>)>> = Mutex::new(Vec::new());

/// The live writer of the file at `path`, or the one `open` makes (then kept for the next
/// opener while any store holds it). The first opener's settings (busy timeout, WAL restart)
/// are the file's. Opens of one file are serialised, so that two never make two writers.
pub(super) fn writer_for(
    path: &Path,
    open: impl FnOnce() -> StoreResult<Arc<Writer>>,
) -> StoreResult<Arc<Writer>> {
    let mut writers = lock(&WRITERS);
    writers.retain(|(_, writer)| writer.strong_count() > 0);
    // A file that does not exist yet has no writer; once opened, it has a canonical path.
    let existing = std::fs::canonicalize(path).ok();
    if let Some(file) = &existing {
        if let Some(writer) = writers
            .iter()
            .filter(|(open_file, _)| open_file == file)
            .find_map(|(_, writer)| writer.upgrade())
        {
            return Ok(writer);
        }
    }
    let writer = open()?;
    let file = existing
        .or_else(|| std::fs::canonicalize(path).ok())
        .unwrap_or_else(|| path.to_owned());
    writers.push((file, Arc::downgrade(&writer)));
    Ok(writer)
}
