//! The signing key ring on DynamoDB Local (conditional writes, the rotation lifecycle with an
//! injected clock, concurrent rotations), and `SIGNING_KEYS=kms` against a local KMS (moto,
//! `infra/kms-local.sh`, `KMS_ENDPOINT`): every KMS-signed token verified by `jsonwebtoken`
//! from the published JWK alone, and an unreachable KMS answering "unavailable" in time.

mod first_read;
mod kms_outage;
mod production;

use std::sync::Arc;
use std::time::{Duration, Instant};

use token_core::jwt::{IdTokenClaims, SignIn};
use token_core::signing::ring::Plan;
use token_core::signing::{SigningBackend, SigningError, SigningKeys};
use token_domain::clock::{Clock, ManualClock};
use token_domain::AccessTokenRecord;
use token_store::sqlite::SqliteStore;
use token_store::SigningKeyRingStore;
use token_store_conformance::records::user_access_token;
use token_store_conformance::signing_key_ring::*;

use crate::support::assertions::assert_signed_by_jwks;
use crate::support::signing_lifecycle as lifecycle;

async fn dynamo() -> Arc<dyn SigningKeyRingStore> {
    Arc::new(
        crate::support::dynamodb::fresh_table()
            .await
            .expect("DynamoDB Local (DYNAMODB_ENDPOINT)"),
    )
}

#[tokio::test]
async fn dynamodb_ring_writes_are_conditional_on_the_version() {
    signing_key_ring_writes_are_conditional_on_the_version(dynamo().await.as_ref()).await;
    concurrent_signing_key_ring_writes_have_one_winner(dynamo().await.as_ref()).await;
}

/// The `max-age` the JWK Set is served with: how long a relying party may keep an old copy,
/// which the rotation lifecycle must outlast.
async fn served_jwks_max_age() -> i64 {
    let app = crate::support::app::TestApp::spawn(crate::support::app::Backend::Sqlite)
        .await
        .unwrap();
    let response = app
        .http
        .get(app.url("/oauth2/v0/jwks"))
        .send()
        .await
        .unwrap();
    let cache_control = response.headers()["cache-control"]
        .to_str()
        .unwrap()
        .to_owned();
    cache_control
        .split(',')
        .find_map(|directive| directive.trim().strip_prefix("max-age="))
        .and_then(|seconds| seconds.parse().ok())
        .unwrap_or_else(|| panic!("no max-age in {cache_control}"))
}

#[tokio::test]
async fn dynamodb_rotation_lifecycle_keeps_every_token_verifiable() {
    let max_age = served_jwks_max_age().await;
    lifecycle::rotation_lifecycle_keeps_every_token_verifiable(dynamo().await, max_age).await;
}

#[tokio::test]
async fn dynamodb_concurrent_rotations_leave_one_consistent_ring() {
    lifecycle::concurrent_rotations_leave_one_consistent_ring(dynamo().await).await;
}

#[tokio::test]
async fn dynamodb_ring_without_active_key_refuses_to_start() {
    lifecycle::a_ring_without_active_key_refuses_to_start(dynamo().await).await;
}

/// The ring's store on SQLite: a fresh file in a temporary directory.
fn sqlite_ring_store() -> (Arc<SqliteStore>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open_in_dir(dir.path()).unwrap();
    (Arc::new(store), dir)
}

#[tokio::test]
async fn sqlite_rotation_lifecycle_keeps_every_token_verifiable() {
    let (store, _dir) = sqlite_ring_store();
    let max_age = served_jwks_max_age().await;
    lifecycle::rotation_lifecycle_keeps_every_token_verifiable(store, max_age).await;
}

#[tokio::test]
async fn sqlite_concurrent_rotations_leave_one_consistent_ring() {
    let (store, _dir) = sqlite_ring_store();
    lifecycle::concurrent_rotations_leave_one_consistent_ring(store).await;
}

#[tokio::test]
async fn sqlite_ring_without_active_key_refuses_to_start() {
    let (store, _dir) = sqlite_ring_store();
    lifecycle::a_ring_without_active_key_refuses_to_start(store).await;
}

fn kms_endpoint() -> String {
    std::env::var("KMS_ENDPOINT").ok().filter(|v| !v.is_empty()).expect(
        "KMS_ENDPOINT: start a local KMS with `export KMS_ENDPOINT=$(infra/kms-local.sh start)` \
         (infra/test.sh does)",
    )
}

/// A new deployment on KMS: its own ring store (SQLite in the returned directory), and KMS keys
/// at `endpoint` under a fresh ring name.
pub async fn kms_ring(endpoint: &str) -> KmsRing {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn SigningKeyRingStore> =
        Arc::new(SqliteStore::open_in_dir(dir.path()).unwrap());
    let name = format!("test-{}", uuid::Uuid::new_v4());
    let backend = SigningBackend::Kms(token_adapters::kms::connect(Some(endpoint), &name).await);
    KmsRing {
        store,
        backend,
        name,
        _dir: dir,
    }
}

pub struct KmsRing {
    pub store: Arc<dyn SigningKeyRingStore>,
    pub backend: SigningBackend,
    pub name: String,
    _dir: tempfile::TempDir,
}

fn record(now: i64) -> AccessTokenRecord {
    user_access_token(now, "read")
}

/// `jsonwebtoken` verifies `token` with the JWK the set publishes for its `kid`.
fn verify_independently<T: serde::de::DeserializeOwned>(
    token: &str,
    jwks: &serde_json::Value,
) -> T {
    let kid = jsonwebtoken::decode_header(token).unwrap().kid.unwrap();
    let set: jsonwebtoken::jwk::JwkSet = serde_json::from_value(jwks.clone()).unwrap();
    let key = jsonwebtoken::DecodingKey::from_jwk(set.find(&kid).expect("kid published")).unwrap();
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
    validation.validate_exp = false;
    validation.validate_aud = false;
    jsonwebtoken::decode::<T>(token, &key, &validation)
        .expect("jsonwebtoken verifies the KMS signature")
        .claims
}

#[tokio::test]
async fn kms_keys_sign_tokens_that_verify_with_the_published_jwks() {
    let ring = kms_ring(&kms_endpoint()).await;
    let (store, backend) = (ring.store.clone(), ring.backend.clone());
    let legacy = lifecycle::secret_only();
    let clock = Arc::new(ManualClock::starting_now());

    let first = lifecycle::rotate_once(store.as_ref(), &backend, &legacy, clock.now()).await;
    assert_eq!(first, Plan::AddNext);
    let stored = store
        .load_signing_key_ring()
        .await
        .unwrap()
        .unwrap()
        .document;
    assert!(
        stored.contains("arn:aws:kms:"),
        "keys named by ARN: {stored}"
    );

    let keys = SigningKeys::open(
        store.clone(),
        legacy.clone(),
        backend.clone(),
        clock.clone(),
    )
    .await
    .unwrap();
    let codec = lifecycle::codec(keys.clone());
    let record = record(clock.now());
    let access = codec.encode(&record).await.unwrap();
    let id_token = codec
        .encode_id_token(
            &record,
            &access,
            SignIn {
                nonce: Some("n"),
                ..SignIn::default()
            },
        )
        .await
        .unwrap();
    let jwks = serde_json::to_value(keys.for_verifying().await.unwrap().jwks()).unwrap();
    assert_eq!(
        jwks["keys"].as_array().unwrap().len(),
        2,
        "active and next: {jwks}"
    );
    let claims: serde_json::Value = verify_independently(&access, &jwks);
    assert_eq!(claims["jti"], record.jti.to_string());
    let id: IdTokenClaims = verify_independently(&id_token, &jwks);
    assert_eq!(id.nonce.as_deref(), Some("n"));
    assert_signed_by_jwks(&access, &jwks);
    assert!(codec.decode(&access, clock.now()).await.unwrap().is_ok());

    // A rotation once the next key is old enough: the new active KMS key signs, the old
    // tokens still verify.
    clock.advance(token_core::signing::ring::MIN_NEXT_SECONDS);
    let second = lifecycle::rotate_once(store.as_ref(), &backend, &legacy, clock.now()).await;
    assert_eq!(second, Plan::Promote);
    let after = codec.encode(&record).await.unwrap();
    let jwks = serde_json::to_value(keys.for_verifying().await.unwrap().jwks()).unwrap();
    let kid = |t: &str| jsonwebtoken::decode_header(t).unwrap().kid.unwrap();
    assert_ne!(kid(&after), kid(&access));
    let _: serde_json::Value = verify_independently(&after, &jwks);
    let _: serde_json::Value = verify_independently(&access, &jwks);
}

#[tokio::test]
async fn an_unreachable_kms_is_unavailable_in_time_and_signs_nothing() {
    let ring = kms_ring(&kms_endpoint()).await;
    let (store, live, ring_name) = (ring.store.clone(), &ring.backend, &ring.name);
    let legacy = lifecycle::secret_only();
    let clock = Arc::new(ManualClock::starting_now());
    lifecycle::rotate_once(store.as_ref(), live, &legacy, clock.now()).await;

    // A port we hold bound and never answer on: connections are accepted by the kernel, and
    // requests hang until the client's timeouts.
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}", held.local_addr().unwrap());
    let backend = SigningBackend::Kms(token_adapters::kms::connect(Some(&dead), ring_name).await);
    let keys = SigningKeys::open(store, legacy, backend, clock.clone())
        .await
        .unwrap();
    let codec = lifecycle::codec(keys);
    let started = Instant::now();
    let outcome = codec.encode(&record(clock.now())).await;
    let elapsed = started.elapsed();
    assert!(
        matches!(outcome, Err(SigningError::Unavailable(_))),
        "{outcome:?}"
    );
    assert!(elapsed < Duration::from_secs(6), "took {elapsed:?}");
    // A 503 of its own: the body says signing, not the store, is unavailable.
    let failure = token_core::errors::ServerError::from(outcome.unwrap_err());
    assert!(failure.is_unavailable(), "{failure:?}");
    assert!(
        failure.public_message().contains("signing"),
        "{}",
        failure.public_message()
    );
    drop(held);
}
