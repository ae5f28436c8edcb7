//! A client's secrets: conditional replacement on their version, the single-secret records of
//! before, and each secret's hourly last use.

use super::records::*;
use crate::domain::{
    ClientSecret, ClientSecrets, SecretCheck, SecretId, LAST_USED_RESOLUTION_SECONDS,
};
use crate::random::{OsRandom, RandomExt};
use crate::secrets::TokenHash;
use crate::store::prelude::*;

fn secret_id() -> SecretId {
    SecretId::new(OsRandom.uuid())
}

fn new_secret(value: &str, created: i64) -> ClientSecret {
    ClientSecret {
        hash: TokenHash::of(value),
        created,
        expires: None,
        last_used: None,
    }
}

async fn read(store: &dyn Store, client: &crate::domain::Client) -> crate::domain::Client {
    store
        .clients()
        .get_client(&client.id)
        .await
        .expect("get_client")
        .expect("the client exists")
}

pub async fn client_secrets_change_only_from_the_version_read(store: &dyn Store) {
    let now = now();
    let mut client = client(now);
    client.secrets = ClientSecrets::first(secret_id(), TokenHash::of("first"), now, None);
    store
        .clients()
        .put_client(&client)
        .await
        .expect("put_client");

    let second = secret_id();
    let two = client
        .secrets
        .with_added(now, second, new_secret("second", now + 1))
        .unwrap();
    let clients = store.clients();
    assert!(
        clients
            .replace_client_secrets(&client.id, 0, &two)
            .await
            .expect("replace"),
        "a replace from the version read is written"
    );
    let stale = client
        .secrets
        .with_added(now, secret_id(), new_secret("other", now + 1))
        .unwrap();
    assert!(
        !clients
            .replace_client_secrets(&client.id, 0, &stale)
            .await
            .expect("replace"),
        "a replace from an older version writes nothing"
    );
    let stored = read(store, &client).await;
    assert_eq!(stored.secrets, two);
    assert!(matches!(
        stored.check_secret("second", now),
        SecretCheck::Valid { id, .. } if id == second
    ));
    assert_eq!(stored.check_secret("other", now), SecretCheck::Wrong);

    // A whole-client replace from the stale copy would bring the old set back: refused.
    client.enabled = false;
    assert!(clients.put_client(&client).await.is_err());
    let stored = read(store, &client).await;
    assert!(stored.enabled, "nothing written");
    assert_eq!(stored.secrets, two);
    // From the current copy it is written.
    let mut current = stored;
    current.enabled = false;
    clients.put_client(&current).await.expect("put_client");
    assert_eq!(read(store, &client).await, current);

    let unknown = super::records::client(now);
    assert!(
        !clients
            .replace_client_secrets(&unknown.id, 0, &two)
            .await
            .expect("replace"),
        "no client is created by a replace"
    );
    assert_eq!(
        clients.get_client(&unknown.id).await.expect("get_client"),
        None
    );
}

pub async fn a_single_secret_record_is_one_secret_until_migrated_in_place(store: &dyn Store) {
    let now = now();
    let mut client = client(now);
    client.secrets = ClientSecrets::from_single_hash(TokenHash::of("the old secret"));
    store
        .clients()
        .put_client(&client)
        .await
        .expect("put_client");

    let stored = read(store, &client).await;
    assert!(stored.secrets.is_legacy());
    let listed = stored.list_secrets();
    assert_eq!(listed.len(), 1, "one secret");
    assert_eq!(listed[0].created, now, "dated from the client's creation");
    let id = listed[0].secret_id;
    let SecretCheck::Valid { id: matched, .. } = stored.check_secret("the old secret", now) else {
        panic!("the old secret authenticates");
    };
    assert_eq!(matched, id);

    let migrated = stored.secrets.with_use_recorded(now, &id, now + 5);
    assert!(store
        .clients()
        .replace_client_secrets(&client.id, 0, &migrated)
        .await
        .expect("migrate"));
    let stored = read(store, &client).await;
    assert!(!stored.secrets.is_legacy(), "written in the new shape");
    let listed = stored.list_secrets();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].secret_id, id, "the same id after migration");
    assert_eq!(listed[0].last_used, Some(now + 5));
    assert!(matches!(
        stored.check_secret("the old secret", now),
        SecretCheck::Valid { .. }
    ));
}

pub async fn a_secrets_last_use_is_written_at_most_hourly(store: &dyn Store) {
    let now = now();
    let mut client = client(now);
    let id = secret_id();
    client.secrets = ClientSecrets::first(id, TokenHash::of("s"), now, None)
        .with_added(now, secret_id(), new_secret("t", now))
        .unwrap();
    store
        .clients()
        .put_client(&client)
        .await
        .expect("put_client");
    let clients = store.clients();
    let used = |at| async move {
        clients
            .record_secret_use(&client.id, &id, at)
            .await
            .expect("record_secret_use")
    };
    assert!(used(now).await, "first use");
    assert!(
        !used(now + LAST_USED_RESOLUTION_SECONDS - 1).await,
        "within the hour"
    );
    let last_used = |c: &crate::domain::Client| {
        c.list_secrets()
            .into_iter()
            .find(|s| s.secret_id == id)
            .and_then(|s| s.last_used)
    };
    assert_eq!(last_used(&read(store, &client).await), Some(now));
    assert!(
        used(now + LAST_USED_RESOLUTION_SECONDS).await,
        "an hour later"
    );
    assert_eq!(
        last_used(&read(store, &client).await),
        Some(now + LAST_USED_RESOLUTION_SECONDS)
    );
    let stored = read(store, &client).await;
    assert_eq!(
        stored.secrets.version(),
        client.secrets.version(),
        "not a change of the set"
    );
    assert!(
        !clients
            .record_secret_use(&client.id, &secret_id(), now)
            .await
            .expect("record_secret_use"),
        "an unknown secret: nothing written"
    );
}
