//! SQLite test stores: a fresh database file in a temporary directory per test.
//!
//! A real file rather than `:memory:`, so the tests exercise what the local server runs on: WAL,
//! the busy timeout, and a second connection (another process) on the same file. The conformance
//! suite itself runs against SQLite in its own crate's tests (`cargo test -p token-store-conformance`).

use std::time::Duration;

use tempfile::TempDir;
use token_store::sqlite::SqliteStore;

/// A directory for tests that open the database file themselves (two stores on one file).
pub fn temp_dir() -> TempDir {
    tempfile::Builder::new()
        .prefix("token-service-sqlite-")
        .tempdir()
        .expect("create a temporary directory")
}

/// A fresh, empty store on a new database file, and the directory that holds it. Keep the
/// directory as long as the store is used: dropping it deletes the database.
pub fn fresh_store() -> (SqliteStore, TempDir) {
    let dir = temp_dir();
    let store = SqliteStore::open_in_dir(dir.path()).expect("open the SQLite store");
    (store, dir)
}

/// As [`fresh_store`], with a short busy timeout: for tests that lock the file from another
/// connection on purpose, so that each refused write answers in a fraction of a second.
pub fn fresh_store_with_busy_timeout(busy_timeout: Duration) -> (SqliteStore, TempDir) {
    let dir = temp_dir();
    let store = SqliteStore::open_with_busy_timeout(&dir.path().join("tokens.db"), busy_timeout)
        .expect("open the SQLite store");
    (store, dir)
}
