//! The DynamoDB test proxy itself, on a real `DynamoStore` over DynamoDB Local: it counts what
//! the store sends, and its faults reach the store as the errors production would see.

use std::time::Duration;

use crate::support::ddb_proxy::{DdbProxy, Fault};
use crate::support::dynamodb::unique_table_name;
use token_core::admin::NewClient;
use token_domain::clock::{Clock, SystemClock};
use token_domain::random::{OsRandom, RandomExt};
use token_domain::secrets::{PasswordHash, TokenHash};
use token_domain::{Client, ClientId, Geolocation, Login, PrincipalId, Scopes, User, UserStatus};
use token_store::dynamodb::DynamoStore;
use token_store::prelude::*;
use token_store::{Inserted, StoreError};

/// A proxy in front of DynamoDB Local and a store on a fresh table behind it, with the table's
/// creation calls already forgotten. `None` when the DynamoDB suite is skipped.
async fn proxied_store() -> Option<(DdbProxy, DynamoStore)> {
    let proxy = DdbProxy::start().await?;
    let store = DynamoStore::connect(&unique_table_name(), Some(proxy.url())).await;
    store
        .create_table_if_missing()
        .await
        .expect("create a test table through the proxy");
    proxy.take_calls();
    Some((proxy, store))
}

fn client() -> Client {
    NewClient::named("proxy test client", Scopes::parse("read").unwrap()).into_client(
        ClientId::new(OsRandom.uuid()),
        token_domain::ClientSecrets::from_single_hash(TokenHash::of(&OsRandom.opaque_token())),
        SystemClock.now(),
    )
}

fn user() -> User {
    User {
        id: PrincipalId::new(OsRandom.uuid()),
        login: Login::parse(&format!("proxy-{}@example.com", OsRandom.uuid().simple())).unwrap(),
        // A fixed PHC string: nothing here verifies a password.
        password_hash: PasswordHash::from_phc(
            "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA".into(),
        ),
        company_id: None,
        is_admin: false,
        geolocation: Geolocation::parse("https://us.api.example.com").unwrap(),
        status: UserStatus::Active,
        created_at: SystemClock.now(),
        email: None,
        local_sign_in: false,
        directory: None,
        revision: 0,
        deprovisioned_at: None,
        external_id: None,
    }
}

#[track_caller]
fn assert_unavailable<T: std::fmt::Debug>(result: Result<T, StoreError>) {
    assert!(
        matches!(result, Err(StoreError::Unavailable(_))),
        "expected StoreError::Unavailable, got {result:?}"
    );
}

#[tokio::test]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn counts_each_call_by_operation_and_table() {
    let Some((proxy, store)) = proxied_store().await else {
        return;
    };
    let client = client();
    store.clients().put_client(&client).await.unwrap();
    assert_eq!(
        store.clients().get_client(&client.id).await.unwrap(),
        Some(client)
    );

    let calls = proxy.calls();
    assert_eq!(calls.count("PutItem"), 1, "{calls:?}");
    assert_eq!(calls.count("GetItem"), 1, "{calls:?}");
    assert_eq!(calls.total(), 2, "{calls:?}");
    assert_eq!(calls.on_table(store.table_name()).total(), 2);
    assert_eq!(calls.on_table("another-table").total(), 0);

    assert_eq!(proxy.take_calls(), calls);
    assert_eq!(
        proxy.calls().total(),
        0,
        "taking the calls resets the count"
    );
}

#[tokio::test]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn a_dropped_transaction_answer_is_applied_but_reported_as_an_error() {
    let Some((proxy, store)) = proxied_store().await else {
        return;
    };
    let client = client();
    store.clients().put_client(&client).await.unwrap();
    proxy.inject(Fault::DropResponse.only_for("TransactWriteItems"));

    let user = user();
    assert_unavailable(store.principals().insert_user(&user).await);
    // Other operations pass untouched while the fault is on.
    assert_eq!(
        store.clients().get_client(&client.id).await.unwrap(),
        Some(client)
    );

    proxy.clear_fault();
    assert!(proxy.calls().count("TransactWriteItems") >= 1);
    assert_eq!(
        store.principals().get_user(&user.id).await.unwrap(),
        Some(user.clone())
    );
    assert_eq!(
        store
            .principals()
            .get_user_by_login(&user.login)
            .await
            .unwrap(),
        Some(user.clone()),
        "both items of the transaction were written"
    );
    assert_eq!(
        store.principals().insert_user(&user).await.unwrap(),
        Inserted::AlreadyExists
    );
}

#[tokio::test]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn refused_connections_are_unavailable_until_cleared() {
    let Some((proxy, store)) = proxied_store().await else {
        return;
    };
    let client = client();
    // Also opens the pooled connection that the fault must close.
    store.clients().put_client(&client).await.unwrap();

    proxy.inject(Fault::RefuseConnections);
    assert_unavailable(store.clients().get_client(&client.id).await);
    assert_unavailable(store.clients().put_client(&client).await);

    proxy.clear_fault();
    assert_eq!(
        store.clients().get_client(&client.id).await.unwrap(),
        Some(client),
        "the same store works again without being rebuilt"
    );
}

#[tokio::test]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn throttling_and_server_errors_are_unavailable_and_write_nothing() {
    let Some((proxy, store)) = proxied_store().await else {
        return;
    };
    for fault in [Fault::Throttle, Fault::InternalServerError] {
        let client = client();
        proxy.inject(fault);
        assert_unavailable(store.clients().put_client(&client).await);
        assert!(proxy.take_calls().count("PutItem") >= 1, "{fault:?}");

        proxy.clear_fault();
        assert_eq!(
            store.clients().get_client(&client.id).await.unwrap(),
            None,
            "{fault:?} answered without forwarding"
        );
    }
}

#[tokio::test]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn a_response_delayed_past_the_sdk_timeouts_is_unavailable_yet_applied() {
    let Some((proxy, store)) = proxied_store().await else {
        return;
    };
    // Longer than the store's attempt timeout (2 s), on every attempt.
    proxy.inject(Fault::DelayResponse(Duration::from_secs(3)).only_for("PutItem"));
    let client = client();
    assert_unavailable(store.clients().put_client(&client).await);

    proxy.clear_fault();
    assert_eq!(
        store.clients().get_client(&client.id).await.unwrap(),
        Some(client)
    );
}

#[tokio::test]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn a_fault_limited_in_times_heals_itself() {
    let Some((proxy, store)) = proxied_store().await else {
        return;
    };
    let client = client();
    proxy.inject(Fault::Throttle.only_for("GetItem").times(1));
    store.clients().put_client(&client).await.unwrap();
    // The SDK's retry after the one throttled attempt gets through.
    assert_eq!(
        store.clients().get_client(&client.id).await.unwrap(),
        Some(client)
    );
    assert_eq!(proxy.calls().count("GetItem"), 2);
}
