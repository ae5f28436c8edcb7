//! What only the SQLite backend has: WAL, the busy timeout, its own error mapping.

use rusqlite::params;
use tempfile::TempDir;

use super::*;
use crate::domain::{ClientId, Login, PrincipalId, TokenId};
use crate::prelude::*;
use crate::{AllowedAttempt, Attempt, AttemptLimit};

fn temp_dir() -> TempDir {
    tempfile::Builder::new()
        .prefix("sqlite-store-")
        .tempdir()
        .expect("create a temporary directory")
}

#[test]
fn opens_in_wal_mode_and_reopens() {
    let dir = temp_dir();
    drop(SqliteStore::open_in_dir(dir.path()).unwrap());
    let store = SqliteStore::open_in_dir(dir.path()).expect("the schema is created idempotently");
    let raw = Connection::open(store.path()).unwrap();
    let mode: String = raw
        .query_row("PRAGMA journal_mode", [], |row| row.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    assert!(!format!("{store:?}").contains("Connection"));
}

/// The group's savepoints journal every page a write changes; kept in memory, a large write's
/// journal never spills into a temporary file (`2` is `MEMORY`).
#[tokio::test]
async fn the_write_connection_keeps_temporary_data_in_memory() {
    let dir = temp_dir();
    let store = SqliteStore::open_in_dir(dir.path()).unwrap();
    let temp_store: i64 = store
        .write_tx(|tx| {
            tx.query_row("PRAGMA temp_store", [], |row| row.get(0))
                .map_err(map_err)
        })
        .await
        .unwrap();
    assert_eq!(temp_store, 2);
}

/// Stores opened on one file share its write connection (`open_files.rs`): with no wait for a
/// lock allowed at all, two stores writing at once never find the file locked, where two write
/// connections would (a sweep beside the server's requests). Once both are gone, the next open
/// makes a new writer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stores_on_one_file_share_one_writer_and_never_wait_for_each_other() {
    let dir = temp_dir();
    let path = dir.path().join(FILE_NAME);
    let first = SqliteStore::open_with_busy_timeout(&path, Duration::ZERO).unwrap();
    let second =
        SqliteStore::open_with_busy_timeout(&dir.path().join(".").join(FILE_NAME), Duration::ZERO)
            .unwrap();
    assert!(Arc::ptr_eq(&first.writer, &second.writer));
    let elsewhere = temp_dir();
    let other = SqliteStore::open_in_dir(elsewhere.path()).unwrap();
    assert!(!Arc::ptr_eq(&first.writer, &other.writer));

    let writes = (0..400).map(|i| {
        let store = if i % 2 == 0 {
            first.clone()
        } else {
            second.clone()
        };
        tokio::spawn(async move {
            store
                .execute(
                    "INSERT INTO clients (id, body) VALUES (?1, ?2)",
                    (format!("client-{i}"), "{}".to_owned()),
                )
                .await
        })
    });
    for write in futures::future::join_all(writes).await {
        write
            .unwrap()
            .expect("no write waits for the other store's lock");
    }
    let count: i64 = first
        .read(|conn| {
            conn.query_row("SELECT count(*) FROM clients", [], |row| row.get(0))
                .map_err(map_err)
        })
        .await
        .unwrap();
    assert_eq!(count, 400);

    let writer = Arc::downgrade(&first.writer);
    drop((first, second));
    assert!(
        writer.upgrade().is_none(),
        "no store holds the writer any more"
    );
    let reopened = SqliteStore::open(&path).unwrap();
    reopened
        .execute("INSERT INTO clients (id, body) VALUES ('after', '{}')", ())
        .await
        .expect("the new writer writes");
}

/// Checkpoints run beside the writer (`checkpoints.rs`): no commit of the write connection
/// checkpoints, and yet under a steady stream of writes the WAL file starts over rather than
/// growing with everything written, and every write is still there afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wal_starts_over_under_steady_writes_that_never_checkpoint() {
    let dir = temp_dir();
    let path = dir.path().join(FILE_NAME);
    let store = SqliteStore::open_with(&path, BUSY_TIMEOUT, 256).unwrap();
    let autocheckpoint: i64 = store
        .write_tx(|tx| {
            tx.query_row("PRAGMA wal_autocheckpoint", [], |row| row.get(0))
                .map_err(map_err)
        })
        .await
        .unwrap();
    assert_eq!(autocheckpoint, 0, "a commit never checkpoints");
    // Every commit appends at least one 4 KiB frame to the WAL (the leaf page it changed): without
    // a restart the WAL would hold them all, more than 40 MB (93 MB measured); with one it holds
    // 256 frames and what the writes append between two passes of the checkpoint thread (more
    // when a loaded machine delays the thread, hence the margin).
    let body = "x".repeat(100);
    let started = std::time::Instant::now();
    let mut written: u64 = 0;
    while written < 10_000 || started.elapsed() < checkpoints::IDLE_INTERVAL * 10 {
        store
            .execute(
                "INSERT INTO clients (id, body) VALUES (?1, ?2)",
                (format!("client-{written}"), body.clone()),
            )
            .await
            .unwrap();
        written += 1;
    }
    let wal = std::fs::metadata(dir.path().join(format!("{FILE_NAME}-wal")))
        .unwrap()
        .len();
    assert!(
        wal < written * 4_096 * 3 / 4,
        "a WAL of {wal} bytes after {written} commits: it never started over"
    );
    let rows: u64 = Connection::open(&path)
        .unwrap()
        .query_row("SELECT COUNT(*) FROM clients", [], |row| row.get(0))
        .unwrap();
    assert_eq!(rows, written);
}

/// The checkpoint thread syncs the database file after its passes that copied frames, so that
/// the writer's pass before the WAL starts over finds few dirty pages left to sync (SQLite syncs
/// the database file only in a checkpoint that copies the whole WAL).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_checkpoint_thread_syncs_the_pages_it_copied() {
    let dir = temp_dir();
    let path = dir.path().join(FILE_NAME);
    // A WAL that never starts over within the test: only the thread's passes copy.
    let store = SqliteStore::open_with(&path, BUSY_TIMEOUT, u32::MAX).unwrap();
    let wal = Arc::clone(store.writer.wal());
    // The first passes copy the schema's frames; after them nothing is written.
    std::thread::sleep(checkpoints::IDLE_INTERVAL * 3);
    let idle_syncs = wal.database_syncs();
    std::thread::sleep(checkpoints::IDLE_INTERVAL * 3);
    assert_eq!(wal.database_syncs(), idle_syncs, "no sync without writes");
    let started = std::time::Instant::now();
    let mut written = 0;
    while wal.database_syncs() == idle_syncs && started.elapsed() < Duration::from_secs(30) {
        store
            .execute(
                "INSERT INTO clients (id, body) VALUES (?1, '{}')",
                (format!("client-{written}"),),
            )
            .await
            .unwrap();
        written += 1;
    }
    assert!(
        wal.database_syncs() > idle_syncs,
        "{written} writes over 30 s, and the thread never synced what it copied"
    );
}

/// One checkpoint thread per database file: stores opened on the same file (the local server's
/// and its sweeper's) share it, a store on another file has its own.
#[test]
fn stores_on_one_file_share_its_checkpoint_thread() {
    let dir = temp_dir();
    let first = SqliteStore::open_in_dir(dir.path()).unwrap();
    let second = SqliteStore::open_in_dir(dir.path()).unwrap();
    let other_dir = temp_dir();
    let other = SqliteStore::open_in_dir(other_dir.path()).unwrap();
    assert!(Arc::ptr_eq(first.writer.wal(), second.writer.wal()));
    assert!(!Arc::ptr_eq(first.writer.wal(), other.writer.wal()));
}

const ATTEMPTS: AttemptLimit = AttemptLimit {
    threshold: 5,
    window_seconds: 10,
};

/// A store, and another connection to its file holding the write lock (as tokenctl would).
fn store_locked_by_another_connection(
    busy_timeout: Duration,
) -> (TempDir, SqliteStore, Connection) {
    let dir = temp_dir();
    let path = dir.path().join(FILE_NAME);
    let store = SqliteStore::open_with_busy_timeout(&path, busy_timeout).unwrap();
    let other = Connection::open(&path).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    (dir, store, other)
}

/// Another process holding the write lock past the busy timeout is a 503, not a 500; and
/// WAL keeps reads working meanwhile.
#[tokio::test]
async fn a_write_lock_held_too_long_is_unavailable() {
    let (_dir, store, other) = store_locked_by_another_connection(Duration::from_millis(50));
    let login = Login::parse("someone").unwrap();
    let outcome = store
        .lockout()
        .register_login_attempt(&login, ATTEMPTS, 10)
        .await;
    assert!(
        matches!(outcome, Err(StoreError::Unavailable(_))),
        "transaction: {outcome:?}"
    );
    let company = PrincipalId::new(uuid::Uuid::nil());
    let client = ClientId::new(uuid::Uuid::nil());
    let outcome = store
        .principals()
        .enable_company_for_client(&company, &client)
        .await;
    assert!(
        matches!(outcome, Err(StoreError::Unavailable(_))),
        "single statement: {outcome:?}"
    );

    other.execute_batch("COMMIT").unwrap();
    assert_eq!(
        store
            .lockout()
            .register_login_attempt(&login, ATTEMPTS, 10)
            .await
            .unwrap(),
        Attempt::Allowed(AllowedAttempt {
            count: 1,
            window_start: 10
        }),
        "the failed transaction counted nothing"
    );
}

#[tokio::test]
async fn a_malformed_row_is_internal_and_not_echoed() {
    let dir = temp_dir();
    let store = SqliteStore::open_in_dir(dir.path()).unwrap();
    let jti = TokenId::new(uuid::Uuid::nil());
    Connection::open(store.path())
        .unwrap()
        .execute(
            "INSERT INTO access_tokens (jti, expires_at, body) VALUES (?1, ?2, ?3)",
            params![jti.to_string(), i64::MAX, r#"{"jti": "hunter2-secret"}"#],
        )
        .unwrap();
    match store.families().get_access_token(&jti, 0).await {
        Err(StoreError::Internal(failure)) => {
            assert!(!failure.to_string().contains("hunter2"), "{failure}")
        }
        other => panic!("expected an internal error, got {other:?}"),
    }
}

/// Writes from many tasks on several runtime threads are group-committed by whichever caller
/// finds the connection free: each is answered once, with its own result, and every one lands.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writes_from_every_thread_all_commit() {
    use crate::{Hit, RateKey, RateLimit};
    let dir = temp_dir();
    let store = Arc::new(SqliteStore::open_in_dir(dir.path()).unwrap());
    let limit = RateLimit {
        max: 10_000,
        window_seconds: 60,
    };
    let writes = (0..400).map(|_| {
        let store = Arc::clone(&store);
        tokio::spawn(async move {
            store
                .rate_limits()
                .count_hit(&RateKey::new("client", "one-client"), limit, 1_000)
                .await
                .unwrap()
        })
    });
    let mut counts: Vec<u32> = futures::future::join_all(writes)
        .await
        .into_iter()
        .map(|hit| match hit.unwrap() {
            Hit::Counted { count } => count,
            refused @ Hit::Refused { .. } => panic!("{refused:?}"),
        })
        .collect();
    counts.sort_unstable();
    assert_eq!(counts, (1..=400).collect::<Vec<_>>(), "one count per write");
    let stored: u32 = Connection::open(store.path())
        .unwrap()
        .query_row("SELECT SUM(hits) FROM rate_windows", [], |row| row.get(0))
        .unwrap();
    assert_eq!(stored, 400);
}

/// A write that finds another process's write lock waits for it off the runtime's threads (a
/// read meanwhile is answered at once), and commits once the lock is let go within the busy
/// timeout; writes queued behind it commit too.
#[tokio::test]
async fn a_write_waits_for_a_lock_let_go_within_the_busy_timeout() {
    let (_dir, store, other) = store_locked_by_another_connection(Duration::from_secs(5));
    let login = Login::parse("someone").unwrap();
    let waiting = {
        let store = store.clone();
        let login = login.clone();
        tokio::spawn(async move {
            store
                .lockout()
                .register_login_attempt(&login, ATTEMPTS, 10)
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!waiting.is_finished(), "the write waits for the lock");
    let client = ClientId::new(uuid::Uuid::nil());
    assert!(
        store.clients().get_client(&client).await.unwrap().is_none(),
        "reads go on meanwhile"
    );
    let behind = {
        let store = store.clone();
        tokio::spawn(async move {
            let company = PrincipalId::new(uuid::Uuid::nil());
            store
                .principals()
                .enable_company_for_client(&company, &client)
                .await
        })
    };
    other.execute_batch("COMMIT").unwrap();

    let settled = Duration::from_secs(5);
    let attempt = tokio::time::timeout(settled, waiting)
        .await
        .expect("the waiting write is answered")
        .unwrap()
        .unwrap();
    assert_eq!(
        attempt,
        Attempt::Allowed(AllowedAttempt {
            count: 1,
            window_start: 10
        })
    );
    tokio::time::timeout(settled, behind)
        .await
        .expect("the write queued behind it is answered")
        .unwrap()
        .unwrap();
    let company = PrincipalId::new(uuid::Uuid::nil());
    assert!(store
        .principals()
        .is_company_enabled_for_client(&company, &client)
        .await
        .unwrap());
}

/// A request dropped while its write waits its turn (the client went away) leaves no write in
/// the queue for a later request to run: it is committed at once, as it would have been.
#[tokio::test]
async fn a_write_whose_caller_is_dropped_is_not_left_queued() {
    use crate::{RateKey, RateLimit};
    use futures::FutureExt;
    let dir = temp_dir();
    let store = SqliteStore::open_in_dir(dir.path()).unwrap();
    let limit = RateLimit {
        max: 10,
        window_seconds: 60,
    };
    let key = RateKey::new("client", "gone");
    let dropped = store
        .rate_limits()
        .count_hit(&key, limit, 1_000)
        .now_or_never();
    assert!(dropped.is_none(), "the write was still waiting its turn");
    let stored: u32 = Connection::open(store.path())
        .unwrap()
        .query_row("SELECT COUNT(*) FROM rate_windows", [], |row| row.get(0))
        .unwrap();
    assert_eq!(stored, 1);
}
