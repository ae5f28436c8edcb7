//! `SIGNING_KEYS=kms` at the token endpoint while KMS stops answering: a relay between the
//! service and the local KMS goes silent (connections accepted, never answered), as a KMS that
//! is unreachable or hung would. Each grant answers 503 in the catalogue's shape within the KMS
//! client's bounded timeouts, signs nothing with another key, and writes nothing: the access
//! token is signed before the family, rotation or token is written (docs/decisions.md, Signing
//! keys). Once KMS answers again, the same requests succeed, signed by the ring's active KMS key.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::app::{AppOptions, Backend, TestApp, TestClient};
use crate::support::signing_lifecycle as lifecycle;
use crate::support::stored_data::{scan_table, StoredData};
use crate::support::tcp_fault::SilentRelay;
use reqwest::StatusCode;
use serde_json::Value;
use token_core::config::{Policy, RateLimits};
use token_core::signing::SigningKeys;
use token_domain::clock::{Clock, ManualClock};

use crate::store_unavailable::assert_unavailable;

const LOGIN: &str = "kms-outage@example.com";
const PASSWORD: &str = "a password long enough";
/// The KMS client gives up after 4 s (two attempts of at most 2 s); the rest is slack for a
/// loaded 2-core machine.
const IN_TIME: Duration = Duration::from_secs(7);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_token_grants_answer_503_while_kms_is_silent_and_write_nothing() {
    kms_outage(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn dynamodb_token_grants_answer_503_while_kms_is_silent_and_write_nothing() {
    kms_outage(Backend::DynamoDb).await;
}

async fn kms_outage(backend: Backend) {
    let relay = SilentRelay::start(&super::kms_endpoint()).await;
    let keys = rotated_kms_keys(&relay).await;
    let active_kid = keys.snapshot().unwrap().signing_kid().to_owned();
    // With a threshold of 1, an attempt the failure left counted would lock the retry out.
    let options = AppOptions {
        policy: Policy {
            lockout_threshold: 1,
            ..Policy::default()
        },
        mailer: None,
        logout_allowed_hosts: Vec::new(),
        localhost: false,
        document_fetcher: None,
    };
    let Some(app) = TestApp::spawn_with_keys(backend, options, keys).await else {
        return;
    };
    let client = app.create_client("openid read").await;
    app.create_user(LOGIN, PASSWORD).await;
    let first = app.user_tokens(&client, LOGIN, PASSWORD).await;
    let refresh_token = first["refresh_token"].as_str().unwrap().to_owned();

    let grants = [
        vec![("grant_type", "client_credentials")],
        vec![
            ("grant_type", "password"),
            ("username", LOGIN),
            ("password", PASSWORD),
            ("scope", "openid read"),
        ],
        vec![
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token.as_str()),
        ],
    ];
    let written = issued_counts(&app.data).await;
    relay.go_silent();
    for form in &grants {
        let started = Instant::now();
        let response = token_request(&app, &client, form).await;
        let elapsed = started.elapsed();
        assert_unavailable(form[0].1, response).await;
        assert!(
            elapsed < IN_TIME,
            "{}: answered after {elapsed:?}",
            form[0].1
        );
    }
    assert_eq!(
        issued_counts(&app.data).await,
        written,
        "families, refresh tokens, access tokens: nothing written"
    );
    let presented = app.stored_refresh_token(&refresh_token).await;
    assert_eq!(presented.rotated_at, None, "not rotated by the failed call");

    relay.answer_again();
    for form in &grants {
        let (status, body) =
            crate::support::app::json_of(token_request(&app, &client, form).await).await;
        assert_eq!(
            status,
            StatusCode::OK,
            "{} once KMS answers: {body}",
            form[0].1
        );
        let token = body["access_token"].as_str().unwrap();
        let header = jsonwebtoken::decode_header(token).unwrap();
        assert_eq!(header.kid.as_deref(), Some(active_kid.as_str()), "{body}");
        // The password grant asks for `openid`: its ID token (and any other) is signed by KMS
        // too.
        let id_token = body["id_token"].as_str();
        assert!(id_token.is_some() || form[0].1 != "password", "{body}");
        if let Some(id_token) = id_token {
            let header = jsonwebtoken::decode_header(id_token).unwrap();
            assert_eq!(header.kid.as_deref(), Some(active_kid.as_str()));
        }
    }
    let jwks: Value = app.get_json("/oauth2/v0/jwks").await;
    let published: Vec<&str> = jwks["keys"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|k| k["kid"].as_str())
        .collect();
    assert!(published.contains(&active_kid.as_str()), "{jwks}");
}

/// With KMS the client's limit is counted before anything is signed (docs/decisions.md, Abuse
/// limits): a request over the limit is refused even while KMS is silent (a signature attempted
/// first would have answered 503 after the KMS client's timeouts), so a flood spends no
/// `kms:Sign`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_kms_a_client_over_its_limit_is_refused_before_anything_is_signed_sqlite() {
    limited_before_signing(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn with_kms_a_client_over_its_limit_is_refused_before_anything_is_signed_dynamodb() {
    limited_before_signing(Backend::DynamoDb).await;
}

async fn limited_before_signing(backend: Backend) {
    let relay = SilentRelay::start(&super::kms_endpoint()).await;
    let keys = rotated_kms_keys(&relay).await;
    let options = AppOptions {
        policy: Policy {
            rate_limits: RateLimits {
                client_per_minute: 1,
                ..RateLimits::default()
            },
            ..Policy::default()
        },
        mailer: None,
        logout_allowed_hosts: Vec::new(),
        localhost: false,
        document_fetcher: None,
    };
    let Some(app) = TestApp::spawn_with_keys(backend, options, keys).await else {
        return;
    };
    let client = app.create_client("read").await;
    let grant = [("grant_type", "client_credentials")];
    let (status, body) =
        crate::support::app::json_of(token_request(&app, &client, &grant).await).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let written = issued_counts(&app.data).await;

    relay.go_silent();
    let (status, body) =
        crate::support::app::json_of(token_request(&app, &client, &grant).await).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(body["error"], "slow_down", "{body}");
    assert_eq!(
        issued_counts(&app.data).await,
        written,
        "nothing stored for the refused request"
    );
}

/// A KMS ring reached through `relay`, rotated once: its active key is a KMS key.
async fn rotated_kms_keys(relay: &SilentRelay) -> SigningKeys {
    let ring = super::kms_ring(&relay.url()).await;
    let legacy = lifecycle::secret_only();
    let clock = Arc::new(ManualClock::starting_now());
    lifecycle::rotate_once(ring.store.as_ref(), &ring.backend, &legacy, clock.now()).await;
    SigningKeys::open(ring.store.clone(), legacy, ring.backend.clone(), clock)
        .await
        .unwrap()
}

async fn token_request(
    app: &TestApp,
    client: &TestClient,
    form: &[(&str, &str)],
) -> reqwest::Response {
    let mut all = vec![
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
    ];
    all.extend_from_slice(form);
    app.http
        .post(app.url("/v0/token"))
        .form(&all)
        .send()
        .await
        .unwrap()
}

/// How many families, refresh tokens and access tokens the app's store holds.
async fn issued_counts(data: &StoredData) -> [usize; 3] {
    match data {
        StoredData::Sqlite(dir) => {
            let database = dir.path().join(token_store::sqlite::FILE_NAME);
            let connection = rusqlite::Connection::open_with_flags(
                database,
                rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
            )
            .unwrap();
            ["families", "refresh_tokens", "access_tokens"].map(|table| {
                connection
                    .query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |row| {
                        row.get::<_, usize>(0)
                    })
                    .unwrap()
            })
        }
        StoredData::Dynamo(store) => {
            let items = scan_table(store).await;
            ["FAMILY#", "REFRESH#", "ACCESS#"].map(|prefix| {
                items
                    .iter()
                    .filter(|item| {
                        item.get("pk")
                            .and_then(|pk| pk.as_s().ok())
                            .is_some_and(|pk| pk.starts_with(prefix))
                    })
                    .count()
            })
        }
        StoredData::Opaque => unreachable!("spawn_with_keys keeps the store's data"),
    }
}
