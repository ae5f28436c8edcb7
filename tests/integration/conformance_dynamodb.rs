//! The storage conformance suite against DynamoDB Local, and what only DynamoDB has: the TTL
//! attribute on stored items, the table's TTL setting, table creation, and how an unreachable or
//! hung endpoint fails.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use integration_tests::dynamodb::{fresh_table, unique_table_name};
use token_service::clock::{Clock, SystemClock, UnixTime};
use token_service::domain::{
    AccessTokenRecord, AuthToken, ClientId, ConsumerKey, Family, FamilyId, Geolocation,
    LegacyToken, Login, PrincipalId, PrincipalType, RefreshTokenRecord, Scopes, TokenId,
    ACCESS_TOKEN_TTL_SECONDS, AUTH_TOKEN_TTL_SECONDS,
};
use token_service::secrets::TokenHash;
use token_service::store::dynamodb::sdk;
use token_service::store::dynamodb::sdk::types::{AttributeValue, TimeToLiveStatus};
use token_service::store::dynamodb::{DynamoStore, OPERATION_TIMEOUT, TTL_ATTRIBUTE};
use token_service::store::prelude::*;
use token_service::store::{AttemptLimit, NewFamily, Rotated, Rotation, StoreError};
use uuid::Uuid;

token_service::conformance_suite!(fresh_table);

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

#[track_caller]
fn assert_ttl(item: &Item, expected: UnixTime, what: &str) {
    assert_eq!(
        item.get(TTL_ATTRIBUTE),
        Some(&AttributeValue::N(expected.to_string())),
        "{what}: `{TTL_ATTRIBUTE}` must be a top-level number holding the expiry in epoch seconds"
    );
}

fn hash(label: &str) -> TokenHash {
    TokenHash::of(&format!("{label}-{}", Uuid::new_v4()))
}

fn family_bundle(
    now: UnixTime,
    refresh_expires_at: UnixTime,
) -> (Family, RefreshTokenRecord, AccessTokenRecord) {
    let client_id = ClientId::new(Uuid::new_v4());
    let principal = PrincipalId::new(Uuid::new_v4());
    let family = Family {
        id: FamilyId::new(Uuid::new_v4()),
        client_id,
        principal_type: PrincipalType::User,
        principal_id: principal,
        scopes: Scopes::parse("read write").unwrap(),
        geolocation: Geolocation::parse("https://us.api.example.com").unwrap(),
        current_token: hash("refresh"),
        generation: 0,
        created_at: now,
        expires_at: refresh_expires_at,
        revoked_at: None,
    };
    let refresh = RefreshTokenRecord {
        token_hash: family.current_token.clone(),
        family_id: family.id,
        client_id,
        generation: 0,
        issued_at: now,
        expires_at: refresh_expires_at,
        rotated_at: None,
    };
    let access = access_token(now, client_id, principal, Some(family.id));
    (family, refresh, access)
}

fn access_token(
    now: UnixTime,
    client_id: ClientId,
    subject: PrincipalId,
    family_id: Option<FamilyId>,
) -> AccessTokenRecord {
    AccessTokenRecord {
        jti: TokenId::new(Uuid::new_v4()),
        client_id,
        principal_type: PrincipalType::User,
        subject: *subject.as_uuid(),
        family_id,
        scopes: Scopes::parse("read").unwrap(),
        issued_at: now,
        expires_at: now + ACCESS_TOKEN_TTL_SECONDS,
        revoked: false,
    }
}

#[tokio::test]
async fn expiring_items_carry_the_ttl_attribute() {
    let Some(store) = fresh_table().await else {
        return;
    };
    let now = SystemClock.now();
    let refresh_expires_at = now + 180 * 86_400;

    let (family, refresh, access) = family_bundle(now, refresh_expires_at);
    store
        .create_family(NewFamily {
            family: &family,
            refresh_token: &refresh,
            access_token: &access,
            legacy_exchange: None,
        })
        .await
        .expect("create_family");
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
    let refresh_pk = format!("REFRESH#{}", refresh.token_hash.to_hex());
    assert_ttl(
        &raw_item(&store, &refresh_pk, "REFRESH").await,
        refresh_expires_at,
        "refresh token",
    );
    assert_ttl(
        &raw_item(&store, &format!("ACCESS#{}", access.jti), "ACCESS").await,
        now + ACCESS_TOKEN_TTL_SECONDS,
        "access token of a family",
    );

    // Rotation renews the family's expiry and gives the successor its own.
    let later = now + 10;
    let successor = RefreshTokenRecord {
        token_hash: hash("successor"),
        generation: 1,
        issued_at: later,
        expires_at: later + 180 * 86_400,
        ..refresh.clone()
    };
    let rotated_access = access_token(
        later,
        family.client_id,
        family.principal_id,
        Some(family.id),
    );
    assert_eq!(
        store
            .rotate_refresh_token(Rotation {
                family_id: family.id,
                presented: &refresh.token_hash,
                successor: &successor,
                access_token: &rotated_access,
                now: later,
                origin: None,
            })
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
        &raw_item(
            &store,
            &format!("REFRESH#{}", successor.token_hash.to_hex()),
            "REFRESH",
        )
        .await,
        successor.expires_at,
        "successor refresh token",
    );
    assert_eq!(
        raw_item(&store, &refresh_pk, "REFRESH")
            .await
            .get("rotated_at"),
        Some(&AttributeValue::N(later.to_string())),
        "the rotated token records when"
    );

    store
        .revoke_family(&family.id, later + 1)
        .await
        .expect("revoke_family");
    assert_eq!(
        raw_item(&store, &family_pk, "FAMILY")
            .await
            .get("revoked_at"),
        Some(&AttributeValue::N((later + 1).to_string()))
    );

    let application = access_token(
        now,
        ClientId::new(Uuid::new_v4()),
        PrincipalId::new(Uuid::new_v4()),
        None,
    );
    store
        .put_access_token(&application)
        .await
        .expect("put_access_token");
    assert_ttl(
        &raw_item(&store, &format!("ACCESS#{}", application.jti), "ACCESS").await,
        application.expires_at,
        "application access token",
    );

    let auth = AuthToken {
        token_hash: hash("auth"),
        company_id: PrincipalId::new(Uuid::new_v4()),
        client_id: ClientId::new(Uuid::new_v4()),
        issued_by: PrincipalId::new(Uuid::new_v4()),
        issued_at: now,
        expires_at: now + AUTH_TOKEN_TTL_SECONDS,
    };
    store.put_auth_token(&auth).await.expect("put_auth_token");
    assert_ttl(
        &raw_item(
            &store,
            &format!("AUTHTOKEN#{}", auth.token_hash.to_hex()),
            "AUTHTOKEN",
        )
        .await,
        now + AUTH_TOKEN_TTL_SECONDS,
        "company auth token",
    );

    let legacy = |expires_at| LegacyToken {
        token_hash: hash("legacy"),
        consumer_key: ConsumerKey::parse("old-app").unwrap(),
        principal_type: PrincipalType::User,
        principal_id: PrincipalId::new(Uuid::new_v4()),
        scopes: Scopes::parse("read").unwrap(),
        wsadmin: false,
        company_id: None,
        expires_at,
    };
    let (expiring, forever) = (legacy(Some(now + 3600)), legacy(None));
    store
        .put_legacy_tokens(&[expiring.clone(), forever.clone()])
        .await
        .expect("put_legacy_tokens");
    assert_ttl(
        &raw_item(
            &store,
            &format!("LEGACY#{}", expiring.token_hash.to_hex()),
            "LEGACY",
        )
        .await,
        now + 3600,
        "legacy token with an expiry",
    );
    assert!(
        !raw_item(
            &store,
            &format!("LEGACY#{}", forever.token_hash.to_hex()),
            "LEGACY"
        )
        .await
        .contains_key(TTL_ATTRIBUTE),
        "a legacy token valid until exchanged has no TTL attribute"
    );

    let login = Login::parse(&format!("ttl-{}@example.com", Uuid::new_v4())).unwrap();
    let limit = AttemptLimit {
        threshold: 5,
        window_seconds: 900,
    };
    store
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
async fn create_table_if_missing_is_idempotent() {
    let Some(store) = fresh_table().await else {
        return;
    };
    let now = SystemClock.now();
    let application = access_token(
        now,
        ClientId::new(Uuid::new_v4()),
        PrincipalId::new(Uuid::new_v4()),
        None,
    );
    store
        .put_access_token(&application)
        .await
        .expect("put_access_token");

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
    let result = store.get_client(&ClientId::new(Uuid::new_v4())).await;
    let elapsed = started.elapsed();
    match &result {
        Err(StoreError::Unavailable(message)) => assert!(
            message.contains(expected_message),
            "a store at {endpoint}: expected {expected_message:?} in {message:?}"
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
    let tokens: Vec<LegacyToken> = (0..100_000)
        .map(|i| LegacyToken {
            token_hash: TokenHash::of(&format!("bulk-{i}-{}", Uuid::new_v4())),
            consumer_key: ConsumerKey::parse("old-app").unwrap(),
            principal_type: PrincipalType::User,
            principal_id: PrincipalId::new(Uuid::new_v4()),
            scopes: Scopes::parse("read").unwrap(),
            wsadmin: false,
            company_id: None,
            expires_at: None,
        })
        .collect();
    let started = Instant::now();
    store
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
