//! Passkeys: kept per user, listed oldest first, renamed and used only while they exist, removed
//! once; ceremony state taken once, only before it expires, by one of racing takes.

use super::records::*;
use crate::domain::{
    CeremonyPurpose, PasskeyCeremony, PasskeyCredential, PrincipalId, PASSKEY_CEREMONY_TTL_SECONDS,
};
use crate::random::{OsRandom, RandomExt};
use crate::store::prelude::*;

fn passkey(user: PrincipalId, credential_id: &str, created_at: i64) -> PasskeyCredential {
    PasskeyCredential {
        principal_id: user,
        credential_id: credential_id.to_owned(),
        name: "Laptop \u{e9}".to_owned(),
        passkey: r#"{"cred":{"counter":0}}"#.to_owned(),
        created_at,
        last_used_at: None,
    }
}

fn ceremony(now: i64) -> PasskeyCeremony {
    PasskeyCeremony {
        id_hash: random_hash(),
        purpose: CeremonyPurpose::Registration {
            principal_id: PrincipalId::new(OsRandom.uuid()),
        },
        state: r#"{"rs":{"challenge":"abc"}}"#.to_owned(),
        created_at: now,
        expires_at: now + PASSKEY_CEREMONY_TTL_SECONDS,
    }
}

pub async fn passkeys_are_kept_per_user_renamed_used_and_removed_once(store: &dyn Store) {
    let now = now();
    let passkeys = store.passkeys();
    let (user, other) = (
        PrincipalId::new(OsRandom.uuid()),
        PrincipalId::new(OsRandom.uuid()),
    );
    let second = passkey(user, "cred-b", now + 1);
    let first = passkey(user, "cred-a_-", now);
    assert!(passkeys.put_passkey(&second).await.expect("put_passkey"));
    assert!(passkeys.put_passkey(&first).await.unwrap());
    assert!(
        !passkeys.put_passkey(&first).await.unwrap(),
        "the same credential id twice for one user"
    );
    assert!(passkeys
        .put_passkey(&passkey(other, "cred-a_-", now))
        .await
        .unwrap());
    assert_eq!(
        passkeys.list_passkeys(&user).await.unwrap(),
        vec![first.clone(), second.clone()],
        "oldest first, only the user's"
    );
    assert_eq!(
        passkeys.get_passkey(&user, "cred-a_-").await.unwrap(),
        Some(first.clone())
    );
    assert_eq!(passkeys.get_passkey(&user, "unknown").await.unwrap(), None);

    assert!(passkeys
        .rename_passkey(&user, "cred-a_-", "Phone")
        .await
        .unwrap());
    assert!(passkeys
        .record_passkey_use(&user, "cred-a_-", r#"{"cred":{"counter":7}}"#, now + 5)
        .await
        .unwrap());
    let used = passkeys.get_passkey(&user, "cred-a_-").await.unwrap();
    let expected = PasskeyCredential {
        name: "Phone".to_owned(),
        passkey: r#"{"cred":{"counter":7}}"#.to_owned(),
        last_used_at: Some(now + 5),
        ..first.clone()
    };
    assert_eq!(used, Some(expected.clone()));
    assert_eq!(
        passkeys.get_passkey(&other, "cred-a_-").await.unwrap(),
        Some(passkey(other, "cred-a_-", now)),
        "another user's passkey with the same id is untouched"
    );

    assert_eq!(
        passkeys.delete_passkey(&user, "cred-a_-").await.unwrap(),
        Some(expected)
    );
    assert_eq!(
        passkeys.delete_passkey(&user, "cred-a_-").await.unwrap(),
        None
    );
    assert!(!passkeys
        .rename_passkey(&user, "cred-a_-", "Again")
        .await
        .unwrap());
    assert!(
        !passkeys
            .record_passkey_use(&user, "cred-a_-", "{}", now + 6)
            .await
            .unwrap(),
        "a removed passkey is not written back by a late sign-in"
    );
    assert_eq!(passkeys.get_passkey(&user, "cred-a_-").await.unwrap(), None);
    assert_eq!(passkeys.list_passkeys(&user).await.unwrap(), vec![second]);
}

pub async fn a_passkey_ceremony_is_taken_once_before_it_expires(store: &dyn Store) {
    let now = now();
    let passkeys = store.passkeys();
    let live = ceremony(now);
    passkeys.put_passkey_ceremony(&live).await.expect("put");
    assert_eq!(
        passkeys
            .take_passkey_ceremony(&random_hash(), now)
            .await
            .unwrap(),
        None,
        "unknown"
    );
    assert_eq!(
        passkeys
            .take_passkey_ceremony(&live.id_hash, now + 1)
            .await
            .unwrap(),
        Some(live.clone())
    );
    assert_eq!(
        passkeys
            .take_passkey_ceremony(&live.id_hash, now + 1)
            .await
            .unwrap(),
        None,
        "used"
    );
    let expired = ceremony(now);
    passkeys.put_passkey_ceremony(&expired).await.unwrap();
    assert_eq!(
        passkeys
            .take_passkey_ceremony(&expired.id_hash, expired.expires_at)
            .await
            .unwrap(),
        None,
        "expired at its expiry, even while the item lingers"
    );
}

pub async fn concurrent_takes_of_a_passkey_ceremony_have_one_winner(store: &dyn Store) {
    let now = now();
    let record = ceremony(now);
    store
        .passkeys()
        .put_passkey_ceremony(&record)
        .await
        .unwrap();
    let takes = (0..10).map(|_| store.passkeys().take_passkey_ceremony(&record.id_hash, now));
    let winners = futures::future::join_all(takes)
        .await
        .into_iter()
        .filter_map(|taken| taken.expect("take_passkey_ceremony"))
        .count();
    assert_eq!(winners, 1);
}
