//! Clients.

use super::records::*;
use crate::domain::{Client, ClientId};
use crate::random::{OsRandom, RandomExt};
use crate::store::prelude::*;

async fn stored_client(store: &dyn Store, id: &ClientId) -> Option<Client> {
    store.clients().get_client(id).await.expect("get_client")
}

pub async fn client_round_trip_and_replace(store: &dyn Store) {
    let now = now();
    let mut client = client(now);
    client.resources = resources(&["https://api.example.com/mcp", "https://files.example.com"]);
    store
        .clients()
        .put_client(&client)
        .await
        .expect("put_client");
    assert_eq!(
        stored_client(store, &client.id).await,
        Some(client.clone()),
        "a client reads back as written"
    );

    client.enabled = false;
    client.connect_url = None;
    // Cleared, the back-channel logout URI must not survive in the stored form.
    client.backchannel_logout_uri = None;
    // Cleared, the resources too: the client may then ask for any the deployment allows.
    client.resources = Vec::new();
    // A self-registered client keeps its registration (the access token's digest) in the record.
    client.registration = Some(crate::domain::DynamicRegistration {
        access_token_hash: crate::secrets::TokenHash::of("registration access token"),
        auth_method: crate::domain::RegisteredAuthMethod::None,
        client_uri: Some("https://app.example".into()),
        logo_uri: None,
        policy_uri: Some("https://app.example/privacy".into()),
        tos_uri: Some("https://app.example/terms".into()),
        backchannel_logout_session_required: true,
        jwks_uri: Some("https://app.example/jwks".into()),
    });
    store
        .clients()
        .put_client(&client)
        .await
        .expect("put_client again");
    assert_eq!(
        stored_client(store, &client.id).await,
        Some(client),
        "put_client replaces the stored client"
    );

    let unknown = ClientId::new(OsRandom.uuid());
    assert_eq!(
        stored_client(store, &unknown).await,
        None,
        "an unknown client is absent"
    );
}

pub async fn clients_are_listed_oldest_first(store: &dyn Store) {
    let newer = client(now());
    let older = client(now() - 60);
    for client in [&newer, &older] {
        store
            .clients()
            .put_client(client)
            .await
            .expect("put_client");
    }
    let listed: Vec<ClientId> = store
        .clients()
        .list_clients()
        .await
        .expect("list_clients")
        .into_iter()
        .map(|client| client.id)
        .filter(|id| [newer.id, older.id].contains(id))
        .collect();
    assert_eq!(listed, vec![older.id, newer.id], "both, the older first");
    let stored = store
        .clients()
        .list_clients()
        .await
        .unwrap()
        .into_iter()
        .find(|client| client.id == newer.id)
        .expect("the newer client is listed");
    assert_eq!(stored, newer, "listed as stored");
}

/// RFC 7592 answers rotate the registration access token: the replace is conditional on the
/// digest stored, so of two requests presenting one token only the first leaves a token behind.
pub async fn a_registered_client_is_replaced_only_from_its_current_token(store: &dyn Store) {
    use crate::domain::{DynamicRegistration, RegisteredAuthMethod};
    use crate::secrets::TokenHash;

    let registered = |client: &Client, token: &str| Client {
        registration: Some(DynamicRegistration {
            access_token_hash: TokenHash::of(token),
            ..client
                .registration
                .clone()
                .expect("a self-registered client")
        }),
        ..client.clone()
    };
    let mut client = client(now());
    client.registration = Some(DynamicRegistration {
        access_token_hash: TokenHash::of("first"),
        auth_method: RegisteredAuthMethod::None,
        client_uri: None,
        logo_uri: None,
        policy_uri: None,
        tos_uri: None,
        backchannel_logout_session_required: false,
        jwks_uri: None,
    });
    store
        .clients()
        .put_client(&client)
        .await
        .expect("put_client");

    let second = registered(&client, "second");
    assert!(
        store
            .clients()
            .replace_registered_client(&second, &TokenHash::of("first"))
            .await
            .expect("replace_registered_client"),
        "the current token's digest: replaced"
    );
    assert_eq!(stored_client(store, &client.id).await, Some(second.clone()));

    let lost = registered(&client, "third");
    assert!(
        !store
            .clients()
            .replace_registered_client(&lost, &TokenHash::of("first"))
            .await
            .expect("replace_registered_client"),
        "a token rotated meanwhile: nothing written"
    );
    assert_eq!(
        stored_client(store, &client.id).await,
        Some(second.clone()),
        "the winner's token stays"
    );

    // A client that does not exist, and one an administrator made (no registration): never.
    let mut unknown = second.clone();
    unknown.id = ClientId::new(OsRandom.uuid());
    let administered = super::records::client(now());
    store
        .clients()
        .put_client(&administered)
        .await
        .expect("put_client");
    let mut claimed = second;
    claimed.id = administered.id;
    for target in [&unknown, &claimed] {
        assert!(
            !store
                .clients()
                .replace_registered_client(target, &TokenHash::of("second"))
                .await
                .expect("replace_registered_client"),
            "no stored registration: nothing written"
        );
    }
    assert_eq!(stored_client(store, &unknown.id).await, None);
    assert_eq!(
        stored_client(store, &administered.id).await,
        Some(administered)
    );
}
