//! `clients set-auth-method CLIENT_ID none`: a public client (a device or command-line tool of
//! the device grant) that authenticates with its `client_id` alone; refused for a client that
//! may use `client_credentials`.

use token_domain::ClientAuthMethod;

use super::target::Target;

pub async fn public_clients(t: Target) {
    let (_, id) = t.create_client("TV", &["--grants", "device_code,refresh_token"]);
    let out = t.json(&["clients", "set-auth-method", &id.to_string(), "none"]);
    assert_eq!(out["auth_method"], "none", "{out}");
    let stored = t.stored_client(&id).await;
    assert_eq!(stored.auth_method, Some(ClientAuthMethod::Public));
    assert!(stored.is_public());

    let (_, service) = t.create_client("Service", &["--grants", "client_credentials"]);
    let message = t.fails(
        &["clients", "set-auth-method", &service.to_string(), "none"],
        2,
    );
    assert!(message.contains("client_credentials"), "{message}");
    assert_eq!(t.stored_client(&service).await.auth_method, None);
}
