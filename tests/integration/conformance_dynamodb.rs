//! The storage conformance suite against DynamoDB Local, and what only DynamoDB has: the TTL
//! attribute on stored items, the table's TTL setting, table creation, and how an unreachable or
//! hung endpoint fails. Records come from the suite's own builders.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use integration_tests::dynamodb::{fresh_table, unique_table_name};
use token_service::clock::UnixTime;
use token_service::domain::{ClientId, Login, ACCESS_TOKEN_TTL_SECONDS, AUTH_TOKEN_TTL_SECONDS};
use token_service::secrets::TokenHash;
use token_service::store::conformance::fixtures::stored_application_token;
use token_service::store::conformance::records::{
    auth_token, legacy_token, now, rotation, unique_login, Bundle,
};
use token_service::store::dynamodb::sdk;
use token_service::store::dynamodb::sdk::types::{AttributeValue, TimeToLiveStatus};
use token_service::store::dynamodb::{DynamoStore, OPERATION_TIMEOUT, TTL_ATTRIBUTE};
use token_service::store::prelude::*;
use token_service::store::{AttemptLimit, Rotated, StoreError};
use uuid::Uuid;

token_service::conformance_suite!(
    fresh_table,
    #[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
);

/// The expansion above registers every suite function, once: the test binary's own list of its
/// tests holds exactly the suite's functions under this module.
#[test]
fn the_expansion_registers_every_suite_function() {
    let listing = std::process::Command::new(std::env::current_exe().expect("the test binary"))
        .args(["--list", "conformance_dynamodb::"])
        .output()
        .expect("list the test binary's tests");
    assert!(listing.status.success(), "--list failed: {listing:?}");
    let mut registered: Vec<String> = String::from_utf8(listing.stdout)
        .expect("UTF-8")
        .lines()
        .filter_map(|line| line.strip_suffix(": test"))
        .filter_map(|name| name.strip_prefix("conformance_dynamodb::"))
        .map(str::to_owned)
        .filter(|name| !name.contains("::"))
        .collect();
    registered.sort();
    let suite = token_service::store::conformance::registry::suite_functions();
    // The module's own DynamoDB-only tests are not the suite's.
    registered.retain(|name| suite.contains(name));
    assert_eq!(
        registered, suite,
        "conformance_dynamodb registers every suite function"
    );
}

// ---------------------------------------------------------------------------------------------
// Raw items.

type Item = HashMap<String, AttributeValue>;

async fn raw_item(store: &DynamoStore, pk: &str, sk: &str) -> Item {
    store
        .client()
        .get_item()
        .table_name(store.table_name())
        .key("pk", AttributeValue::S(pk.to_owned()))
        .key("sk", AttributeValue::S(sk.to_owned()))
        .consistent_read(true)
        .send()
        .await
        .expect("GetItem")
        .item
        .unwrap_or_else(|| panic!("no item {pk} / {sk}"))
}

/// The item a record keyed by a token hash is stored as: partition `{kind}#{hex}`, sort `kind`.
async fn hashed_item(store: &DynamoStore, kind: &str, hash: &TokenHash) -> Item {
    raw_item(store, &format!("{kind}#{}", hash.to_hex()), kind).await
}

#[track_caller]
fn assert_ttl(item: &Item, expected: UnixTime, what: &str) {
    assert_eq!(
        item.get(TTL_ATTRIBUTE),
        Some(&AttributeValue::N(expected.to_string())),
        "{what}: `{TTL_ATTRIBUTE}` must be a top-level number holding the expiry in epoch seconds"
    );
}

#[tokio::test]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn expiring_items_carry_the_ttl_attribute() {
    let Some(store) = fresh_table().await else {
        return;
    };
    let now = now();
    let refresh_expires_at = now + 180 * 86_400;

    let bundle = Bundle::new(now, refresh_expires_at);
    bundle.create(&store).await;
    let (family, refresh) = (&bundle.family, &bundle.refresh);
    let family_pk = format!("FAMILY#{}", family.id);
    let family_item = raw_item(&store, &family_pk, "FAMILY").await;
    assert_ttl(&family_item, refresh_expires_at, "family");
    assert_eq!(
        family_item.get("current_token"),
        Some(&AttributeValue::S(refresh.token_hash.to_hex())),
        "rotation's condition attribute is top-level"
    );
    assert_eq!(
        family_item.get("generation"),
        Some(&AttributeValue::N("0".into()))
    );
    assert!(
        !family_item.contains_key("revoked_at"),
        "a live family has no revoked_at attribute (not even NULL)"
    );
    assert_ttl(
        &hashed_item(&store, "REFRESH", &refresh.token_hash).await,
        refresh_expires_at,
        "refresh token",
    );
    assert_ttl(
        &raw_item(&store, &format!("ACCESS#{}", bundle.access.jti), "ACCESS").await,
        now + ACCESS_TOKEN_TTL_SECONDS,
        "access token of a family",
    );

    // Rotation renews the family's expiry and gives the successor its own.
    let later = now + 10;
    let (successor, rotated_access) = bundle.successor(later, 1);
    assert_eq!(
        store
            .families()
            .rotate_refresh_token(rotation(
                family.id,
                &refresh.token_hash,
                &successor,
                &rotated_access,
                later,
            ))
            .await
            .expect("rotate_refresh_token"),
        Rotated::Rotated
    );
    let family_item = raw_item(&store, &family_pk, "FAMILY").await;
    assert_ttl(&family_item, successor.expires_at, "family after rotation");
    assert_eq!(
        family_item.get("generation"),
        Some(&AttributeValue::N("1".into()))
    );
    assert_ttl(
        &hashed_item(&store, "REFRESH", &successor.token_hash).await,
        successor.expires_at,
        "successor refresh token",
    );
    assert_eq!(
        hashed_item(&store, "REFRESH", &refresh.token_hash)
            .await
            .get("rotated_at"),
        Some(&AttributeValue::N(later.to_string())),
        "the rotated token records when"
    );

    store
        .families()
        .revoke_family(&family.id, later + 1)
        .await
        .expect("revoke_family");
    assert_eq!(
        raw_item(&store, &family_pk, "FAMILY")
            .await
            .get("revoked_at"),
        Some(&AttributeValue::N((later + 1).to_string()))
    );

    let application = stored_application_token(&store, now).await;
    assert_ttl(
        &raw_item(&store, &format!("ACCESS#{}", application.jti), "ACCESS").await,
        application.expires_at,
        "application access token",
    );

    let auth = auth_token(now, now + AUTH_TOKEN_TTL_SECONDS);
    store
        .auth_tokens()
        .put_auth_token(&auth)
        .await
        .expect("put_auth_token");
    assert_ttl(
        &hashed_item(&store, "AUTHTOKEN", &auth.token_hash).await,
        now + AUTH_TOKEN_TTL_SECONDS,
        "company auth token",
    );

    let (expiring, forever) = (legacy_token(Some(now + 3600)), legacy_token(None));
    store
        .legacy()
        .put_legacy_tokens(&[expiring.clone(), forever.clone()])
        .await
        .expect("put_legacy_tokens");
    assert_ttl(
        &hashed_item(&store, "LEGACY", &expiring.token_hash).await,
        now + 3600,
        "legacy token with an expiry",
    );
    assert!(
        !hashed_item(&store, "LEGACY", &forever.token_hash)
            .await
            .contains_key(TTL_ATTRIBUTE),
        "a legacy token valid until exchanged has no TTL attribute"
    );

    let login = Login::parse(&unique_login()).unwrap();
    let limit = AttemptLimit {
        threshold: 5,
        window_seconds: 900,
    };
    store
        .lockout()
        .register_login_attempt(&login, limit, now)
        .await
        .expect("register_login_attempt");
    let failures = store
        .client()
        .query()
        .table_name(store.table_name())
        .key_condition_expression("pk = :pk")
        .expression_attribute_values(":pk", AttributeValue::S(format!("FAILEDLOGIN#{login}")))
        .send()
        .await
        .expect("Query")
        .items
        .unwrap_or_default();
    assert_eq!(failures.len(), 1, "one counter item per login");
    assert_ttl(&failures[0], now + 900, "login attempt counter");
}

#[tokio::test]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn ttl_is_enabled_on_expires_at() {
    let Some(store) = fresh_table().await else {
        return;
    };
    let description = store
        .client()
        .describe_time_to_live()
        .table_name(store.table_name())
        .send()
        .await
        .expect("DescribeTimeToLive")
        .time_to_live_description
        .expect("a TTL description");
    assert_eq!(
        description.time_to_live_status,
        Some(TimeToLiveStatus::Enabled)
    );
    assert_eq!(description.attribute_name.as_deref(), Some(TTL_ATTRIBUTE));
}

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
    let endpoint = integration_tests::dynamodb::endpoint().expect("endpoint");
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
