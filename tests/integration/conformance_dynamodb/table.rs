//! The table itself and the endpoint behind it: creating the table is idempotent and safe to
//! race, an unreachable or hung endpoint fails fast as `Unavailable`, and the legacy import's
//! full size fits.

use std::time::{Duration, Instant};

use crate::support::dynamodb::{fresh_table, unique_table_name};
use token_domain::ClientId;
use token_store::dynamodb::{sdk, DynamoStore, OPERATION_TIMEOUT};
use token_store::prelude::*;
use token_store::StoreError;
use token_store_conformance::fixtures::stored_application_token;
use token_store_conformance::records::{legacy_token, now};
use uuid::Uuid;

#[tokio::test]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn create_table_if_missing_is_idempotent() {
    let Some(store) = fresh_table().await else {
        return;
    };
    let now = now();
    let application = stored_application_token(&store, now).await;

    // Again on the same store, and from a second process's view (a new client).
    store
        .create_table_if_missing()
        .await
        .expect("create_table_if_missing on an existing table");
    let endpoint = crate::support::dynamodb::endpoint().expect("endpoint");
    let second = DynamoStore::connect(store.table_name(), Some(&endpoint)).await;
    second
        .create_table_if_missing()
        .await
        .expect("create_table_if_missing from another client");
    assert_eq!(
        second
            .families()
            .get_access_token(&application.jti, now)
            .await
            .expect("get_access_token"),
        Some(application),
        "creating an existing table again keeps its items"
    );

    // Two first-time creations racing: both succeed.
    let name = unique_table_name();
    let (a, b) = tokio::join!(
        DynamoStore::connect(&name, Some(&endpoint)),
        DynamoStore::connect(&name, Some(&endpoint))
    );
    let (ra, rb) = tokio::join!(a.create_table_if_missing(), b.create_table_if_missing());
    ra.expect("first concurrent create");
    rb.expect("second concurrent create");
}

/// A store at `endpoint` fails as `Unavailable` (503) with a message that says why, and does
/// not hang: the SDK gives up after [`OPERATION_TIMEOUT`] (5 s), well inside the functions' 10 s.
///
/// That bound is the client's configuration, checked exactly; the wall clock is checked only
/// against a hang, with a margin (12 x the timeout) that no load on a test machine comes near,
/// so that a busy machine cannot fail the test while a missing timeout still does.
async fn assert_unavailable(endpoint: &str, expected_message: &str) {
    let store = DynamoStore::connect("tokens", Some(endpoint)).await;
    assert_eq!(
        store
            .client()
            .config()
            .timeout_config()
            .and_then(|timeouts| timeouts.operation_timeout()),
        Some(OPERATION_TIMEOUT),
        "every request is bounded in time, retries included"
    );
    let started = Instant::now();
    let result = store
        .clients()
        .get_client(&ClientId::new(Uuid::new_v4()))
        .await;
    let elapsed = started.elapsed();
    match &result {
        Err(StoreError::Unavailable(failure)) => assert!(
            failure.context().contains(expected_message),
            "a store at {endpoint}: expected {expected_message:?} in {failure:?}"
        ),
        other => panic!("a store at {endpoint} must fail as Unavailable (503), got {other:?}"),
    }
    let hang = OPERATION_TIMEOUT * 12;
    assert!(
        elapsed < hang,
        "a failing store must give up, not hang: {elapsed:?}"
    );
}

/// Needs no emulator: the port is bound but not listening, so connections are refused, and
/// while the socket is held no other test can take the port and answer on it.
#[tokio::test]
async fn unreachable_endpoint_is_unavailable() {
    let held = tokio::net::TcpSocket::new_v4().expect("a TCP socket");
    held.bind("127.0.0.1:0".parse().unwrap()).expect("bind");
    let port = held.local_addr().expect("local addr").port();
    assert_unavailable(
        &format!("http://127.0.0.1:{port}"),
        "GetClient: cannot reach DynamoDB",
    )
    .await;
    drop(held);
}

/// Needs no emulator: the port accepts connections (the kernel completes them into the backlog)
/// but never answers, like a hung store.
#[tokio::test]
async fn hung_endpoint_is_unavailable() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("local addr").port();
    assert_unavailable(&format!("http://127.0.0.1:{port}"), "GetClient: timed out").await;
    drop(listener);
}

/// The migration's size: 100,000 tokens in one call. Minutes on DynamoDB Local (a single-threaded
/// emulator on this machine), so run on demand: `cargo test conformance_dynamodb -- --ignored`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "slow on DynamoDB Local; run on demand"]
async fn legacy_import_of_100000_tokens() {
    let Some(store) = fresh_table().await else {
        return;
    };
    let tokens: Vec<_> = (0..100_000).map(|_| legacy_token(None)).collect();
    let started = Instant::now();
    store
        .legacy()
        .put_legacy_tokens(&tokens)
        .await
        .expect("put_legacy_tokens");
    eprintln!(
        "imported {} legacy tokens in {:?}",
        tokens.len(),
        started.elapsed()
    );
    // Counted with a generous timeout: a full scan is slow on the emulator.
    let patient = sdk::config::Builder::default().timeout_config(
        sdk::config::timeout::TimeoutConfig::builder()
            .operation_attempt_timeout(Duration::from_secs(60))
            .operation_timeout(Duration::from_secs(120))
            .build(),
    );
    let (mut count, mut start) = (0, None);
    loop {
        let page = store
            .client()
            .scan()
            .table_name(store.table_name())
            .select(sdk::types::Select::Count)
            .set_exclusive_start_key(start)
            .customize()
            .config_override(patient.clone())
            .send()
            .await
            .expect("Scan");
        count += page.count;
        match page.last_evaluated_key {
            Some(next) if !next.is_empty() => start = Some(next),
            _ => break,
        }
    }
    assert_eq!(count, 100_000, "every token is stored once");
}
