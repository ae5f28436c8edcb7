//! The stored form of a client (records written before a field existed) and what it may ask for.

use super::*;
use crate::secrets::TokenHash;
use crate::NewClient;

/// A client as stored before any of the optional fields were set: no redirect, logout
/// addresses or keys, only the `grants` given.
fn client(grants: &[GrantType]) -> Client {
    NewClient {
        grants: grants.iter().copied().collect(),
        ..NewClient::named("app", Scopes::parse("read").unwrap())
    }
    .into_client(
        ClientId::new(uuid::Uuid::nil()),
        ClientSecrets::from_single_hash(TokenHash::of("s")),
        0,
    )
}

#[test]
fn clients_stored_before_logout_addresses_read_none() {
    let client = Client {
        post_logout_redirect_uris: vec!["https://app.example/out".into()],
        require_dpop: true,
        ..client(&[GrantType::Password])
    };
    let mut stored = serde_json::to_value(&client).unwrap();
    stored
        .as_object_mut()
        .unwrap()
        .remove("post_logout_redirect_uris");
    stored.as_object_mut().unwrap().remove("require_dpop");
    let read: Client = serde_json::from_value(stored).unwrap();
    assert!(read.post_logout_redirect_uris.is_empty());
    assert!(!read.require_dpop, "old clients need no DPoP proof");
}

/// A record written before `jwks` existed reads as a client without keys; one with keys
/// keeps them (the stores keep the serde form: SQLite's JSON body, DynamoDB's attributes).
#[test]
fn clients_stored_before_jwks_read_none_and_keys_round_trip() {
    let mut client = client(&[GrantType::ClientCredentials]);
    let stored = serde_json::to_value(&client).unwrap();
    assert!(stored.get("jwks").is_none(), "nothing written without keys");
    let read: Client = serde_json::from_value(stored).unwrap();
    assert_eq!(read.jwks, None);

    let set = serde_json::json!({"keys": [{
        "kty": "OKP", "crv": "Ed25519", "kid": "k",
        "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo",
    }]});
    client.jwks = Some(PublicJwkSet::parse(set.clone()).unwrap());
    let stored = serde_json::to_value(&client).unwrap();
    assert_eq!(stored["jwks"], set);
    assert_eq!(serde_json::from_value::<Client>(stored).unwrap(), client);
}

/// A record written before back-channel logout existed reads as a client without a logout
/// URI; one with it keeps it.
#[test]
fn clients_stored_before_backchannel_logout_read_none() {
    let mut client = client(&[GrantType::AuthorizationCode]);
    let stored = serde_json::to_value(&client).unwrap();
    assert!(stored.get("backchannel_logout_uri").is_none());
    assert_eq!(
        serde_json::from_value::<Client>(stored)
            .unwrap()
            .backchannel_logout_uri,
        None
    );
    client.backchannel_logout_uri = Some("https://rp.example/bcl".into());
    let stored = serde_json::to_value(&client).unwrap();
    assert_eq!(stored["backchannel_logout_uri"], "https://rp.example/bcl");
    assert_eq!(serde_json::from_value::<Client>(stored).unwrap(), client);
}

#[test]
fn openid_is_requestable_by_clients_that_sign_users_in() {
    let mut client = client(&[GrantType::ClientCredentials]);
    assert_eq!(client.requestable_scopes().to_string(), "read");
    for grant in [
        GrantType::AuthorizationCode,
        GrantType::Password,
        GrantType::Otp,
    ] {
        client.grants = [grant].into_iter().collect();
        assert_eq!(
            client.requestable_scopes().to_string(),
            "openid read",
            "{grant:?}"
        );
    }
}
