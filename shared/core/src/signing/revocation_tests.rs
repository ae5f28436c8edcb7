//! The stored ring's MAC, `keys revoke` and `keys adopt`, on a real SQLite store.

use std::sync::Arc;

use super::authenticated::{open_ring, seal_ring, Unauthenticated};
use super::ring::{KeyState, PrivateKey, RingDocument};
use super::rotation::{self, KeyFactory};
use super::*;
use crate::clock::ManualClock;
use crate::random::OsRandom;
use crate::store::sqlite::SqliteStore;
use crate::store::{RingWrite, SigningKeyRingStore};

const NOW: i64 = 1_700_000_000;

struct Fixture {
    store: Arc<SqliteStore>,
    legacy: KeyRingDocument,
    factory: KeyFactory,
    _dir: tempfile::TempDir,
}

/// A stored ring with an active and a next key, written by a rotation.
async fn rotated_ring() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open_in_dir(dir.path()).unwrap());
    let legacy = KeyRingDocument {
        server_secret: Some("A".repeat(43)),
        ..KeyRingDocument::default()
    };
    let factory = KeyFactory::local(&legacy.server_secret().unwrap(), Arc::new(OsRandom));
    rotation::rotate(store.as_ref(), &factory, &legacy, NOW)
        .await
        .unwrap();
    Fixture {
        store,
        legacy,
        factory,
        _dir: dir,
    }
}

async fn stored(store: &SqliteStore) -> (String, u64) {
    let ring = store.load_signing_key_ring().await.unwrap().unwrap();
    (ring.document, ring.version)
}

async fn overwrite(store: &SqliteStore, document: &str) {
    let (_, version) = stored(store).await;
    let written = store
        .replace_signing_key_ring(Some(version), document)
        .await
        .unwrap();
    assert!(matches!(written, RingWrite::Written { .. }));
}

/// What someone who can write the table but not read the secret can do: add a key of their own.
fn with_intruder(mut ring: RingDocument) -> RingDocument {
    let mut intruder = ring.keys[0].clone();
    intruder.kid = "intruder".to_owned();
    intruder.x = "AAAA".to_owned();
    intruder.state = KeyState::Retired;
    intruder.retired = Some(NOW);
    ring.keys.push(intruder);
    ring
}

async fn load(fixture: &Fixture) -> Result<SigningKeys, KeyError> {
    SigningKeys::open(
        fixture.store.clone(),
        fixture.legacy.clone(),
        SigningBackend::Local,
        Arc::new(ManualClock::new(NOW)),
    )
    .await
}

#[tokio::test]
async fn a_ring_changed_without_the_secret_is_refused() {
    let fixture = rotated_ring().await;
    let secret = fixture.legacy.server_secret().unwrap();
    let (document, _) = stored(&fixture.store).await;
    let ring = open_ring(&document, &secret, Unauthenticated::Refuse).unwrap();
    assert_eq!(ring.keys.len(), 2, "written with its MAC, read back");

    // The ring's text edited, the MAC kept.
    let mut tampered: serde_json::Value = serde_json::from_str(&document).unwrap();
    tampered["ring"] = serde_json::to_string(&with_intruder(ring.clone()))
        .unwrap()
        .into();
    overwrite(&fixture.store, &tampered.to_string()).await;
    assert!(matches!(load(&fixture).await, Err(KeyError::ForgedRing)));

    // A MAC made with another secret.
    let mut other = fixture.legacy.clone();
    other.server_secret = Some(format!("{}A", "B".repeat(42)));
    let forged = seal_ring(
        &with_intruder(ring.clone()),
        &other.server_secret().unwrap(),
    )
    .unwrap();
    overwrite(&fixture.store, &forged).await;
    assert!(matches!(load(&fixture).await, Err(KeyError::ForgedRing)));

    // No MAC at all (as rings were written before it existed), with the intruder's key.
    let bare = serde_json::to_string(&with_intruder(ring.clone())).unwrap();
    overwrite(&fixture.store, &bare).await;
    assert!(matches!(
        load(&fixture).await,
        Err(KeyError::UnauthenticatedRing)
    ));
    let error = rotation::rotate(
        fixture.store.as_ref(),
        &fixture.factory,
        &fixture.legacy,
        NOW,
    )
    .await
    .unwrap_err();
    assert!(matches!(error, KeyError::UnauthenticatedRing), "{error:?}");

    // Without a MAC but with keys that prove themselves (their seals open): still trusted, so
    // a ring written before the MAC keeps working.
    overwrite(&fixture.store, &serde_json::to_string(&ring).unwrap()).await;
    let keys = load(&fixture).await.unwrap();
    assert!(keys.snapshot().is_some());
}

#[tokio::test]
async fn an_operator_adopts_a_ring_written_before_the_mac() {
    let fixture = rotated_ring().await;
    let secret = fixture.legacy.server_secret().unwrap();
    let (document, _) = stored(&fixture.store).await;
    let mut ring = open_ring(&document, &secret, Unauthenticated::Refuse).unwrap();
    // A KMS key cannot prove itself by a seal.
    ring.keys[1].private = PrivateKey::Kms {
        key_arn: "arn:aws:kms:us-east-1:111122223333:key/next".to_owned(),
    };
    overwrite(&fixture.store, &serde_json::to_string(&ring).unwrap()).await;
    assert!(matches!(
        load(&fixture).await,
        Err(KeyError::UnauthenticatedRing)
    ));
    let listed = rotation::list(fixture.store.as_ref(), &fixture.legacy)
        .await
        .unwrap();
    assert_eq!(listed.len(), 2, "listed for the operator to check");

    let version = revocation::adopt(fixture.store.as_ref(), &fixture.legacy)
        .await
        .unwrap();
    assert!(version.is_some());
    let (document, _) = stored(&fixture.store).await;
    assert_eq!(
        open_ring(&document, &secret, Unauthenticated::Refuse).unwrap(),
        ring
    );
}

#[tokio::test]
async fn revoking_keys_removes_them_and_the_active_one_hands_over_at_once() {
    let fixture = rotated_ring().await;
    let secret = fixture.legacy.server_secret().unwrap();
    let ring_now = |document: &str| open_ring(document, &secret, Unauthenticated::Refuse).unwrap();
    let (document, _) = stored(&fixture.store).await;
    let before = ring_now(&document);
    let active = before.active().unwrap().kid.clone();
    let next = before.next_key().unwrap().kid.clone();

    let revoked = revocation::revoke(
        fixture.store.as_ref(),
        &fixture.factory,
        &fixture.legacy,
        &active,
        NOW + 1,
    )
    .await
    .unwrap();
    assert_eq!(revoked.was, KeyState::Active);
    let (document, _) = stored(&fixture.store).await;
    let after = ring_now(&document);
    assert_eq!(
        after.active().unwrap().kid,
        next,
        "the next key signs at once"
    );
    assert!(after.keys.iter().all(|key| key.kid != active), "{after:?}");
    let new_next = after.next_key().expect("a new next key").kid.clone();
    assert_ne!(new_next, next);
    let keys = load(&fixture).await.unwrap();
    let ring = keys.snapshot().unwrap();
    assert_eq!(ring.signing_kid(), next);
    assert!(
        ring.verification_key(&active).is_none(),
        "no longer published"
    );

    // A next key revoked is replaced by another.
    revocation::revoke(
        fixture.store.as_ref(),
        &fixture.factory,
        &fixture.legacy,
        &new_next,
        NOW + 2,
    )
    .await
    .unwrap();
    let (document, _) = stored(&fixture.store).await;
    let after = ring_now(&document);
    assert!(after.keys.iter().all(|key| key.kid != new_next));
    assert!(after.next_key().is_some());
    assert_eq!(after.active().unwrap().kid, next);

    let unknown = revocation::revoke(
        fixture.store.as_ref(),
        &fixture.factory,
        &fixture.legacy,
        "no-such-kid",
        NOW + 3,
    )
    .await
    .unwrap_err();
    assert!(matches!(unknown, KeyError::UnknownKey(_)), "{unknown:?}");
}
