use std::sync::Arc;

use super::*;
use crate::clock::{Clock, ManualClock};
use crate::random::OsRandom;
use crate::store::sqlite::SqliteStore;

#[test]
fn rotation_keeps_previous_public_keys_and_caps_the_ring() {
    let clock = ManualClock::new(1_700_000_000);
    let mut document = KeyRingDocument::default();
    let first = document.rotate(&OsRandom, &clock);
    let second = document.rotate(&OsRandom, &clock);
    let ring = KeyRing::from_document(&document).unwrap();
    assert_eq!(ring.signing_kid(), second);
    let kids: Vec<String> = ring.jwks().keys.into_iter().map(|k| k.kid).collect();
    assert_eq!(kids, vec![second.clone(), first.clone()]);
    assert!(ring.verification_key(&first).is_some());

    document.rotate(&OsRandom, &clock);
    document.rotate(&OsRandom, &clock);
    assert_eq!(document.keys.len(), MAX_KEYS);
    assert!(
        !document.keys.iter().any(|k| k.kid == first),
        "oldest dropped"
    );
}

#[test]
fn derived_keys_survive_rotation_and_differ_by_purpose() {
    let clock = ManualClock::new(0);
    let mut document = KeyRingDocument::default();
    document.rotate(&OsRandom, &clock);
    let before = KeyRing::from_document(&document).unwrap();
    for _ in 0..MAX_KEYS + 1 {
        document.rotate(&OsRandom, &clock);
    }
    let after = KeyRing::from_document(&document).unwrap();
    assert_eq!(before.derive_key("a"), after.derive_key("a"));
    assert_ne!(after.derive_key("a"), after.derive_key("b"));
    let other = KeyRing::generate(&OsRandom, &clock);
    assert_ne!(other.derive_key("a"), after.derive_key("a"));
    assert!(!format!("{document:?}").contains(document.server_secret.as_ref().unwrap()));
}

#[test]
fn a_ring_without_server_secret_derives_a_stable_one_and_a_bad_one_is_refused() {
    let clock = ManualClock::new(0);
    let mut document = KeyRingDocument::default();
    document.rotate(&OsRandom, &clock);
    document.server_secret = None;
    let a = KeyRing::from_document(&document).unwrap();
    let b = KeyRing::from_document(&document).unwrap();
    assert_eq!(a.derive_key("x"), b.derive_key("x"));
    document.server_secret = Some("c2hvcnQ".into());
    assert!(matches!(
        KeyRing::from_document(&document),
        Err(KeyError::BadServerSecret)
    ));
}

#[test]
fn jwks_never_contains_private_material() {
    let ring = KeyRing::generate(&OsRandom, &ManualClock::new(0));
    let jwks = serde_json::to_string(&ring.jwks()).unwrap();
    assert!(!jwks.contains("\"d\""));
    assert!(!jwks.contains("PRIVATE"));
    assert!(!format!("{ring:?}").contains("PRIVATE"));
}

#[test]
fn local_file_is_created_once_and_rotated_in_place() {
    let dir = std::env::temp_dir().join(format!("keys-{}", uuid::Uuid::new_v4()));
    let clock = ManualClock::new(0);
    let load = || {
        KeyRing::from_document(
            &KeyRingDocument::load_or_create_local(&dir, &OsRandom, &clock).unwrap(),
        )
        .unwrap()
    };
    let (a, b) = (load(), load());
    assert_eq!(a.signing_kid(), b.signing_kid(), "kept, not regenerated");
    let new_kid = rotate_local(&dir, &OsRandom, &clock).unwrap();
    let c = load();
    assert_eq!(c.signing_kid(), new_kid);
    assert!(c.verification_key(a.signing_kid()).is_some());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join(LOCAL_KEY_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    std::fs::remove_dir_all(dir).unwrap();
}

fn sqlite_ring_store() -> (Arc<SqliteStore>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open_in_dir(dir.path()).unwrap();
    (Arc::new(store), dir)
}

#[tokio::test]
async fn sqlite_ring_writes_are_conditional_on_the_version() {
    use token_store_conformance::signing_key_ring::*;
    let (store, _dir) = sqlite_ring_store();
    signing_key_ring_writes_are_conditional_on_the_version(store.as_ref()).await;
    let (store, _dir) = sqlite_ring_store();
    concurrent_signing_key_ring_writes_have_one_winner(store.as_ref()).await;
}

/// A secret document of the format before keys had states: two keys, the newer signing (as
/// the integration tests' `signing_lifecycle` makes it).
fn legacy_document(clock: &ManualClock) -> KeyRingDocument {
    let start = 1_700_000_000;
    let mut document = KeyRingDocument::default();
    clock.set(start - 7200);
    document.rotate(&OsRandom, clock);
    clock.set(start - 600);
    document.rotate(&OsRandom, clock);
    clock.set(start);
    document
}

#[tokio::test]
async fn kms_mode_without_a_stored_ring_refuses_to_start() {
    let (store, _dir) = sqlite_ring_store();
    let clock = Arc::new(ManualClock::new(0));
    let legacy = legacy_document(&clock);
    // The KMS endpoint is never called: the missing ring is found first.
    let kms: kms::Kms = Arc::new(kms::UnreachableKms);
    let error = SigningKeys::open(store, legacy, SigningBackend::Kms(kms), clock)
        .await
        .unwrap_err();
    assert!(matches!(error, KeyError::NoKmsRing), "{error:?}");
}

#[test]
fn a_migrated_ring_keeps_kids_times_and_the_newest_key_signing() {
    let clock = ManualClock::new(0);
    let mut legacy = legacy_document(&clock);
    // The oldest format: no server secret, derived from the oldest key.
    legacy.server_secret = None;
    let before = KeyRing::from_document(&legacy).unwrap();
    let ring = rotation::migrate(&legacy).unwrap();
    let after = KeyRing::from_ring(&ring, before.server_secret(), None, clock.now()).unwrap();
    assert_eq!(after.signing_kid(), legacy.keys[1].kid);
    assert_eq!(after.derive_key("x"), before.derive_key("x"));
    assert_eq!(ring.keys[0].retired, Some(legacy.keys[1].created_at));
    assert_eq!(ring.keys[1].state, ring::KeyState::Active);
    assert!(!serde_json::to_string(&ring).unwrap().contains("PRIVATE"));
}
