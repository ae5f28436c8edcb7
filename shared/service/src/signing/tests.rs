use super::*;
use crate::clock::ManualClock;
use crate::random::OsRandom;

#[test]
fn rotation_keeps_previous_public_keys_and_caps_the_ring() {
    let clock = ManualClock::new(1_700_000_000);
    let mut document = KeyRingDocument::default();
    let first = document.rotate(&OsRandom, &clock);
    let second = document.rotate(&OsRandom, &clock);
    let ring = KeyRing::from_document(&document).unwrap();
    assert_eq!(ring.signing_key().0, second);
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
    let a = KeyRing::load_or_create_local(&dir, &OsRandom, &clock).unwrap();
    let b = KeyRing::load_or_create_local(&dir, &OsRandom, &clock).unwrap();
    assert_eq!(
        a.signing_key().0,
        b.signing_key().0,
        "kept, not regenerated"
    );
    let new_kid = rotate_local(&dir, &OsRandom, &clock).unwrap();
    let c = KeyRing::load_or_create_local(&dir, &OsRandom, &clock).unwrap();
    assert_eq!(c.signing_key().0, new_kid);
    assert!(c.verification_key(a.signing_key().0).is_some());
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
