//! Read-only connections for reads, run on the caller's thread.
//!
//! WAL lets any number of readers proceed beside the writer, each on the last committed state,
//! so a read needs neither the write connection nor another thread: it borrows an idle
//! read-only connection (opening one when none is idle), runs, and gives it back. A write is
//! answered only after its commit, so a read that follows it always sees it. Readers never wait
//! for the write lock; they wait (up to the busy timeout) only in SQLite's rare recovery of the
//! WAL index after a crash.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use super::{lock, map_err};
use crate::{StoreError, StoreResult};

/// Idle connections kept; more may be open at once under load, and are closed after use.
const MAX_IDLE: usize = 8;

pub(super) struct Readers {
    path: PathBuf,
    busy_timeout: Duration,
    idle: Mutex<Vec<Connection>>,
}

impl Readers {
    pub(super) fn new(path: PathBuf, busy_timeout: Duration) -> Self {
        Self {
            path,
            busy_timeout,
            idle: Mutex::new(Vec::with_capacity(MAX_IDLE)),
        }
    }

    /// The database file.
    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `op` on a read-only connection. A panic in `op` is an internal error, as a failed
    /// write's is, and does not return the connection to the pool.
    pub(super) fn read<T>(&self, op: impl FnOnce(&Connection) -> StoreResult<T>) -> StoreResult<T> {
        let idle = lock(&self.idle).pop();
        let conn = match idle {
            Some(conn) => conn,
            None => self.open()?,
        };
        let result = catch_unwind(AssertUnwindSafe(|| op(&conn)))
            .map_err(|_| StoreError::Internal("SQLite read panicked".into()))?;
        let mut idle = lock(&self.idle);
        if idle.len() < MAX_IDLE {
            idle.push(conn);
        }
        result
    }

    fn open(&self) -> StoreResult<Connection> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        let conn = Connection::open_with_flags(&self.path, flags).map_err(map_err)?;
        conn.busy_timeout(self.busy_timeout).map_err(map_err)?;
        Ok(conn)
    }
}
