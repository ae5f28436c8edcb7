//! The rotation lifecycle over a real ring store, with an injected clock: what both backends'
//! tests run (`signing_keys`: SQLite and DynamoDB Local).

use std::sync::Arc;

use serde_json::Value;

use crate::support::jwks_check::assert_signed_by_jwks;
use token_core::jwt::{AccessTokenCodec, SignIn};
use token_core::signing::ring::{KeyState, Plan, MIN_NEXT_SECONDS};
use token_core::signing::rotation::{self, KeyFactory};
use token_core::signing::{KeyError, KeyRingDocument, SigningBackend, SigningKeys};
use token_domain::clock::{ManualClock, UnixTime};
use token_domain::random::OsRandom;
use token_domain::{AccessTokenRecord, Geolocation};
use token_store::SigningKeyRingStore;
use token_store_conformance::records::user_access_token;

const START: UnixTime = 1_700_000_000;
const STEP_SECONDS: i64 = 60;
const ROTATION_EVERY_SECONDS: i64 = 15 * 60;

/// A secret document of the format before keys had states: two keys, the newer signing.
pub fn legacy_document(clock: &ManualClock) -> KeyRingDocument {
    let mut document = KeyRingDocument::default();
    clock.set(START - 7200);
    document.rotate(&OsRandom, clock);
    clock.set(START - 600);
    document.rotate(&OsRandom, clock);
    clock.set(START);
    document
}

/// A secret document with a server secret and no keys: a deployment that starts on KMS.
pub fn secret_only() -> KeyRingDocument {
    let mut document = legacy_document(&ManualClock::new(0));
    document.keys.clear();
    document
}

/// One rotation step of `store`'s ring at `now`, new keys made by `backend`: the plan it
/// carried out.
pub async fn rotate_once(
    store: &dyn SigningKeyRingStore,
    backend: &SigningBackend,
    legacy: &KeyRingDocument,
    now: UnixTime,
) -> Plan {
    let factory = backend.factory(&legacy.server_secret().unwrap());
    rotation::rotate(store, &factory, legacy, now)
        .await
        .unwrap()
        .plan
}

/// The access-token codec of the deployment these tests run as, signing with `keys`.
pub fn codec(keys: SigningKeys) -> AccessTokenCodec {
    AccessTokenCodec::new(
        keys,
        Geolocation::parse("https://us.api.example.com").unwrap(),
    )
}

fn record(now: UnixTime) -> AccessTokenRecord {
    user_access_token(now, "read")
}

struct Signed {
    token: String,
    expires_at: UnixTime,
}

/// Two hours of a running instance, a rotation attempted every 15 minutes (the first one
/// migrates the legacy document): every token signed at any step (access and ID tokens) still
/// verifies against the JWK Set published at every later step until it expires, and a JWK Set
/// cached at any step within `jwks_max_age` (the `max-age` the JWK Set is served with) always
/// knows the key of every token signed meanwhile.
pub async fn rotation_lifecycle_keeps_every_token_verifiable(
    store: Arc<dyn SigningKeyRingStore>,
    jwks_max_age: UnixTime,
) {
    let clock = Arc::new(ManualClock::new(START));
    let legacy = legacy_document(&clock);
    let keys = SigningKeys::open(
        store.clone(),
        legacy.clone(),
        SigningBackend::Local,
        clock.clone(),
    )
    .await
    .unwrap();
    assert_eq!(
        keys.snapshot().unwrap().signing_kid(),
        legacy.keys[1].kid,
        "until the first rotation, the secret document's newest key signs"
    );
    let derived = keys.derive_key("purpose").await.unwrap();
    let codec = codec(keys.clone());
    let factory = KeyFactory::local(&legacy.server_secret().unwrap(), Arc::new(OsRandom));

    let mut signed: Vec<Signed> = Vec::new();
    let mut cached: Vec<(UnixTime, Value)> = Vec::new();
    let mut plans = Vec::new();
    let mut signing_kids = Vec::new();
    let mut rotated_at = None;
    for step in 0..(2 * 3600 / STEP_SECONDS) {
        let now = START + step * STEP_SECONDS;
        clock.set(now);
        if step > 0 && (now - START) % ROTATION_EVERY_SECONDS == 0 {
            let done = rotation::rotate(store.as_ref(), &factory, &legacy, now)
                .await
                .unwrap();
            // A second rotation right after changes nothing: the new next key is too recent.
            let again = rotation::rotate(store.as_ref(), &factory, &legacy, now)
                .await
                .unwrap();
            assert!(matches!(again.plan, Plan::NotDue { .. }), "{again:?}");
            assert_eq!(again.version, done.version);
            plans.push(done.plan);
            rotated_at = Some(step);
        }
        let record = record(now);
        let access = codec.encode(&record).await.unwrap();
        let id_token = codec
            .encode_id_token(&record, &access, SignIn::default())
            .await
            .unwrap();
        let jwks = serde_json::to_value(keys.for_verifying().await.unwrap().jwks()).unwrap();
        for token in [&access, &id_token] {
            let kid = assert_signed_by_jwks(token, &jwks).header["kid"].clone();
            if signing_kids.last() != Some(&kid) {
                signing_kids.push(kid.clone());
            }
            for (at, set) in cached.iter().filter(|(at, _)| now - at <= jwks_max_age) {
                assert!(
                    set["keys"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|k| k["kid"] == kid),
                    "a JWK Set cached at {at} does not know {kid}, which signs at {now}"
                );
            }
            signed.push(Signed {
                token: token.clone(),
                expires_at: now + 3600,
            });
        }
        // Every token still valid, around each rotation and every five minutes (verifying them
        // all at every step costs minutes in a debug build and checks nothing more: the
        // published set changes only at a rotation or a refresh after one).
        let near_rotation = rotated_at.is_some_and(|at| step - at <= 2);
        if near_rotation || step % 5 == 0 {
            for old in signed.iter().filter(|s| s.expires_at > now) {
                assert_signed_by_jwks(&old.token, &jwks);
            }
        }
        assert!(codec.decode(&access, now).await.unwrap().is_ok());
        cached.push((now, jwks));
    }
    assert_eq!(
        plans[0],
        Plan::AddNext,
        "the first rotation migrates and adds next"
    );
    assert!(plans[1..].iter().all(|p| *p == Plan::Promote), "{plans:?}");
    assert_eq!(
        signing_kids.len(),
        plans.len(),
        "the legacy key, then one more per promotion: {signing_kids:?}"
    );
    assert_eq!(
        keys.derive_key("purpose").await.unwrap(),
        derived,
        "the server secret never changes"
    );

    let stored = rotation::list(store.as_ref(), &legacy).await.unwrap();
    let count = |state| stored.iter().filter(|k| k.state == state).count();
    assert_eq!((count(KeyState::Active), count(KeyState::Next)), (1, 1));
    assert!(
        !stored
            .iter()
            .any(|k| legacy.keys.iter().any(|l| l.kid == k.kid)),
        "the migrated keys were removed once their tokens had expired"
    );
}

/// Two rotations at once: one promotes, the other finds the new `next` key too recent.
pub async fn concurrent_rotations_leave_one_consistent_ring(store: Arc<dyn SigningKeyRingStore>) {
    let clock = ManualClock::new(START);
    let legacy = legacy_document(&clock);
    let factory = || KeyFactory::local(&legacy.server_secret().unwrap(), Arc::new(OsRandom));
    let first = rotation::rotate(store.as_ref(), &factory(), &legacy, START)
        .await
        .unwrap();
    assert_eq!(first.plan, Plan::AddNext);
    let due = START + MIN_NEXT_SECONDS;
    let (a, b) = (factory(), factory());
    let (a, b) = tokio::join!(
        rotation::rotate(store.as_ref(), &a, &legacy, due),
        rotation::rotate(store.as_ref(), &b, &legacy, due)
    );
    let mut plans = [a.unwrap().plan, b.unwrap().plan];
    plans.sort_by_key(|p| matches!(p, Plan::Promote));
    assert!(matches!(plans[0], Plan::NotDue { .. }), "{plans:?}");
    assert_eq!(plans[1], Plan::Promote);
    let stored = store.load_signing_key_ring().await.unwrap().unwrap();
    assert_eq!(stored.version, 2, "one write after the migration");
    let keys = rotation::list(store.as_ref(), &legacy).await.unwrap();
    let states: Vec<KeyState> = keys.iter().map(|k| k.state).collect();
    assert_eq!(
        states,
        [
            KeyState::Retired,
            KeyState::Retired,
            KeyState::Active,
            KeyState::Next
        ]
    );
    assert_eq!(keys[1].kid, legacy.keys[1].kid);
}

/// A stored ring with no active key stops the start with a message that says what to do.
pub async fn a_ring_without_active_key_refuses_to_start(store: Arc<dyn SigningKeyRingStore>) {
    let clock = Arc::new(ManualClock::new(START));
    let legacy = legacy_document(&clock);
    let mut ring = rotation::migrate(&legacy).unwrap();
    for key in &mut ring.keys {
        key.state = KeyState::Retired;
        key.retired = Some(START);
    }
    store
        .replace_signing_key_ring(None, &serde_json::to_string(&ring).unwrap())
        .await
        .unwrap();
    let error = SigningKeys::open(store, legacy, SigningBackend::Local, clock)
        .await
        .unwrap_err();
    assert!(matches!(error, KeyError::Ring(_)), "{error:?}");
    assert!(error.to_string().contains("no active key"), "{error}");
    assert!(
        error.to_string().contains("tokenctl keys rotate"),
        "{error}"
    );
}
