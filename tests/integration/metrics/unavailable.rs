//! A 503 is counted as a server error and as unavailable: the SQLite file write-locked by a
//! second connection, DynamoDB behind the fault proxy refusing every connection.

use std::sync::Arc;
use std::time::Duration;

use crate::support::app::{AppOptions, Backend, TestApp};
use crate::support::ddb_proxy::{DdbProxy, Fault};
use reqwest::StatusCode;

use super::own_recorder::counted;
use super::{client_credentials, PrometheusHandle, Scrape};

/// A token request answered 503 while the store is broken counts once in each.
async fn assert_counted(
    app: &TestApp,
    metrics: &PrometheusHandle,
    break_store: impl FnOnce(),
    heal_store: impl FnOnce(),
) {
    let client = app.create_client("read").await;
    let labels = [("endpoint", "/v0/token"), ("grant", "client_credentials")];
    let before = Scrape::of_recorder(metrics);
    break_store();
    let (status, body) = app.token(&client_credentials(&client)).await;
    heal_store();
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    let after = Scrape::of_recorder(metrics);
    after.grew_by(&before, "unavailable_total", &labels, 1.0);
    after.grew_by(&before, "server_errors_total", &labels, 1.0);
    after.grew_by(&before, "requests_total", &labels, 1.0);
    after.assert_holds_none_of(&[&client.secret]);
}

#[test]
fn sqlite_write_locked_503_is_counted() {
    counted(|metrics| async move {
        let (store, _dir) =
            crate::support::sqlite::fresh_store_with_busy_timeout(Duration::from_millis(250));
        let path = store.path().to_owned();
        let app =
            TestApp::with_store(Arc::new(store), Backend::Sqlite, AppOptions::default()).await;
        let lock = std::sync::Mutex::new(None);
        assert_counted(
            &app,
            &metrics,
            || {
                let connection = rusqlite::Connection::open(&path).unwrap();
                connection.execute_batch("BEGIN IMMEDIATE").unwrap();
                *lock.lock().unwrap() = Some(connection);
            },
            || drop(lock.lock().unwrap().take()),
        )
        .await;
    });
}

#[test]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
fn dynamodb_refused_503_is_counted() {
    counted(|metrics| async move {
        let Some((proxy, store)) = DdbProxy::start_with_fresh_table().await else {
            return;
        };
        let app =
            TestApp::with_store(Arc::new(store), Backend::DynamoDb, AppOptions::default()).await;
        assert_counted(
            &app,
            &metrics,
            || proxy.inject(Fault::RefuseConnections),
            || proxy.clear_fault(),
        )
        .await;
    });
}
