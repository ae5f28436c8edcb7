//! The sweeper keeps the file bounded: once tokens expire, a sweep removes them, and only them.

use rusqlite::Connection;

use std::sync::Arc;
use std::time::Duration;

use token_domain::clock::UnixTime;

use crate::domain::{ClientId, Login};
use crate::random::{OsRandom, RandomExt};
use crate::records::{self, Bundle};
use token_store::prelude::*;
use token_store::sqlite::sweeper::*;
use token_store::sqlite::SqliteStore;
use token_store::AttemptLimit;

fn store() -> (tempfile::TempDir, SqliteStore) {
    let dir = tempfile::Builder::new()
        .prefix("sweeper-")
        .tempdir()
        .unwrap();
    let store = SqliteStore::open_in_dir(dir.path()).unwrap();
    (dir, store)
}

fn rows(store: &SqliteStore) -> u64 {
    let conn = Connection::open(store.path()).unwrap();
    EXPIRING_TABLES
        .iter()
        .map(|t| {
            conn.query_row(&format!("SELECT COUNT(*) FROM {}", t.table), [], |row| {
                row.get::<_, u64>(0)
            })
            .unwrap()
        })
        .sum()
}

/// `count` application tokens, families (family, refresh and access token each) and login
/// attempt counters, all expiring at `expires_at`.
async fn issue(store: &SqliteStore, now: UnixTime, expires_at: UnixTime, count: usize) {
    let client = ClientId::new(OsRandom.uuid());
    let limit = AttemptLimit {
        threshold: 5,
        window_seconds: expires_at - now,
    };
    for _ in 0..count {
        let app_token = records::access_token(now, client, None, expires_at);
        store.families().put_access_token(&app_token).await.unwrap();
        Bundle::new(now, expires_at).create(store).await;
        let login = Login::parse(&records::unique_login()).unwrap();
        store
            .lockout()
            .register_login_attempt(&login, limit, now)
            .await
            .unwrap();
    }
}

#[test]
fn every_listed_table_is_in_the_schema() {
    let (_dir, store) = store();
    let conn = Connection::open(store.path()).unwrap();
    for table in EXPIRING_TABLES {
        assert!(table_exists(&conn, table.table), "{table:?}");
    }
}

#[tokio::test]
async fn the_database_stops_growing_once_tokens_expire() {
    let (_dir, store) = store();
    let now = records::now();
    let ttl = 3_600;
    // More than one batch per table, so batching is exercised.
    let per_round = BATCH_SIZE as usize + 100;
    issue(&store, now, now + ttl, per_round).await;
    let after_one_round = rows(&store);
    assert_eq!(after_one_round, 5 * per_round as u64);

    assert_eq!(
        store.sweep_expired(now).await.unwrap(),
        0,
        "nothing live is swept"
    );
    assert_eq!(rows(&store), after_one_round);

    // Later rounds, each after the previous one expired: the row count stays at one round's.
    let mut clock = now;
    for _ in 0..3 {
        clock += ttl + 1;
        issue(&store, clock, clock + ttl, per_round).await;
        let swept = store.sweep_expired(clock).await.unwrap();
        // Login-attempt counters whose window ended are also dropped by the next attempt
        // (sqlite/lockout.rs), so the sweep finds the other four tables' rows.
        assert_eq!(swept, after_one_round - per_round as u64);
        assert_eq!(rows(&store), after_one_round, "bounded by what is live");
    }
}

#[tokio::test]
async fn a_row_expiring_this_second_is_kept_one_more_sweep() {
    let (_dir, store) = store();
    let now = records::now();
    issue(&store, now, now + 10, 1).await;
    assert_eq!(store.sweep_expired(now + 10).await.unwrap(), 0);
    assert_eq!(store.sweep_expired(now + 11).await.unwrap(), 5);
}

#[tokio::test]
async fn the_background_sweeper_indexes_and_sweeps() {
    let (_dir, store) = store();
    let now = records::now();
    issue(&store, now, now + 10, 3).await;
    let clock = Arc::new(crate::clock::ManualClock::new(now + 11));
    let task = store
        .clone()
        .spawn_sweeper(clock, Duration::from_millis(10));
    for _ in 0..200 {
        if rows(&store) == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    task.abort();
    assert_eq!(rows(&store), 0);
    let conn = Connection::open(store.path()).unwrap();
    let indexed: u32 = conn
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = 'access_tokens_by_expires_at'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(indexed, 1);
}

fn table_exists(conn: &Connection, table: &str) -> bool {
    conn.query_row(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1",
        [table],
        |_| Ok(()),
    )
    .is_ok()
}
