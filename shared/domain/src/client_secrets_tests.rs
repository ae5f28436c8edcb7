use super::*;

const CREATED: UnixTime = 1_700_000_000;

fn id(n: u8) -> SecretId {
    SecretId::new(uuid::Uuid::from_bytes([n; 16]))
}

fn secret(value: &str, created: UnixTime, expires: Option<UnixTime>) -> ClientSecret {
    ClientSecret {
        hash: TokenHash::of(value),
        created,
        expires,
        last_used: None,
    }
}

fn two() -> ClientSecrets {
    ClientSecrets::first(id(1), TokenHash::of("a"), CREATED, None)
        .with_added(
            CREATED,
            id(2),
            secret("b", CREATED + 10, Some(CREATED + 100)),
        )
        .unwrap()
}

#[test]
fn any_unexpired_secret_authenticates_and_an_expired_one_is_told_apart() {
    let secrets = two();
    assert_eq!(
        secrets.check("a", CREATED + 50, CREATED),
        SecretCheck::Valid {
            id: id(1),
            record_use: true
        }
    );
    assert_eq!(
        secrets.check("b", CREATED + 99, CREATED),
        SecretCheck::Valid {
            id: id(2),
            record_use: true
        }
    );
    assert_eq!(
        secrets.check("b", CREATED + 100, CREATED),
        SecretCheck::Expired
    );
    assert_eq!(secrets.check("c", CREATED, CREATED), SecretCheck::Wrong);
    assert_eq!(secrets.check("", CREATED, CREATED), SecretCheck::Wrong);
}

#[test]
fn last_used_is_due_at_most_hourly() {
    let secrets = two().with_use_recorded(CREATED, &id(1), CREATED + 5);
    let due = |at| match secrets.check("a", at, CREATED) {
        SecretCheck::Valid { record_use, .. } => record_use,
        other => panic!("{other:?}"),
    };
    assert!(!due(CREATED + 5 + LAST_USED_RESOLUTION_SECONDS - 1));
    assert!(due(CREATED + 5 + LAST_USED_RESOLUTION_SECONDS));
}

#[test]
fn at_most_five_secrets() {
    let mut secrets = two();
    for n in 3..=5 {
        secrets = secrets
            .with_added(CREATED, id(n), secret(&n.to_string(), CREATED, None))
            .unwrap();
    }
    assert_eq!(secrets.len(), MAX_CLIENT_SECRETS);
    assert_eq!(secrets.version(), 4);
    assert_eq!(
        secrets.with_added(CREATED, id(6), secret("6", CREATED, None)),
        Err(SecretsRefusal::TooMany)
    );
    for n in 1..=5 {
        let value = if n == 1 {
            "a".to_owned()
        } else if n == 2 {
            "b".to_owned()
        } else {
            n.to_string()
        };
        assert!(
            matches!(secrets.check(&value, CREATED, CREATED), SecretCheck::Valid { id, .. } if id == super::tests::id(n)),
            "secret {n}"
        );
    }
}

#[test]
fn the_last_unexpired_secret_cannot_be_revoked_but_expired_ones_can() {
    let secrets = two();
    let later = CREATED + 200; // "b" has expired
    assert_eq!(
        secrets.without(CREATED, &id(1), later),
        Err(SecretsRefusal::LastSecret)
    );
    let left = secrets.without(CREATED, &id(2), later).unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(
        left.without(CREATED, &id(1), later),
        Err(SecretsRefusal::LastSecret)
    );
    assert_eq!(
        secrets.without(CREATED, &id(9), later),
        Err(SecretsRefusal::UnknownSecret)
    );
    // Before "b" expires, either may go.
    assert!(secrets.without(CREATED, &id(1), CREATED + 50).is_ok());
}

#[test]
fn a_record_with_one_secret_hash_reads_as_one_secret_and_migrates_on_change() {
    let old: ClientSecrets =
        serde_json::from_value(serde_json::json!({ "secret_hash": TokenHash::of("old").to_hex() }))
            .unwrap();
    assert!(old.is_legacy());
    let listed = old.list(CREATED);
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].created, CREATED);
    assert_eq!(listed[0].expires, None);
    let old_id = listed[0].secret_id;
    assert_eq!(old.list(CREATED)[0].secret_id, old_id, "a stable id");
    assert_eq!(
        old.check("old", CREATED, CREATED),
        SecretCheck::Valid {
            id: old_id,
            record_use: true
        }
    );
    let migrated = old.with_use_recorded(CREATED, &old_id, CREATED + 1);
    assert!(!migrated.is_legacy());
    assert_eq!(migrated.version(), 1);
    let stored = serde_json::to_value(&migrated).unwrap();
    assert!(stored.get("secret_hash").is_none(), "{stored}");
    assert_eq!(
        stored["secrets"][old_id.to_string()]["last_used"],
        CREATED + 1
    );
    let read: ClientSecrets = serde_json::from_value(stored).unwrap();
    assert_eq!(read, migrated);
    assert_eq!(
        old.without(CREATED, &old_id, CREATED),
        Err(SecretsRefusal::LastSecret)
    );
}
