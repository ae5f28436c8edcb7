//! What only the SQLite backend has: WAL, the busy timeout, its own error mapping.

use rusqlite::params;
use tempfile::TempDir;

use super::*;
use crate::domain::{ClientId, Login, PrincipalId, TokenId};
use crate::store::prelude::*;
use crate::store::{AllowedAttempt, Attempt, AttemptLimit};

fn temp_dir() -> TempDir {
    tempfile::Builder::new()
        .prefix("sqlite-store-")
        .tempdir()
        .expect("create a temporary directory")
}

#[test]
fn opens_in_wal_mode_and_reopens() {
    let dir = temp_dir();
    let store = SqliteStore::open_in_dir(dir.path()).unwrap();
    SqliteStore::open_in_dir(dir.path()).expect("the schema is created idempotently");
    let raw = Connection::open(store.path()).unwrap();
    let mode: String = raw
        .query_row("PRAGMA journal_mode", [], |row| row.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    assert!(!format!("{store:?}").contains("Connection"));
}

/// Another process holding the write lock past the busy timeout is a 503, not a 500; and
/// WAL keeps reads working meanwhile.
#[tokio::test]
async fn a_write_lock_held_too_long_is_unavailable() {
    let dir = temp_dir();
    let path = dir.path().join(FILE_NAME);
    let store = SqliteStore::open_with_busy_timeout(&path, Duration::from_millis(50)).unwrap();
    let other = Connection::open(&path).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();

    let login = Login::parse("someone").unwrap();
    let limit = AttemptLimit {
        threshold: 5,
        window_seconds: 10,
    };
    let outcome = store
        .lockout()
        .register_login_attempt(&login, limit, 10)
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
            .register_login_attempt(&login, limit, 10)
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
