//! `clients create` and `clients disable`.

use std::collections::BTreeSet;

use token_domain::{ClientId, GrantType, Scopes};
use uuid::Uuid;

use super::output::{str_field, text_field};
use super::target::{Target, UNKNOWN};

/// The two clients `create` made, with the secrets printed for them.
pub struct CreatedClients {
    pub partner: ClientId,
    pub partner_secret: String,
    pub other: ClientId,
    pub other_secret: String,
}

/// `clients create`: the secret is printed once, verifies against the stored hash, and is
/// nowhere in the store in clear; flags and defaults are stored as given.
pub async fn create(t: &Target) -> CreatedClients {
    let created = t.json(&[
        "clients",
        "create",
        "--name",
        "Partner App",
        "--scopes",
        "read write",
        "--grants",
        "client_credentials,refresh_token",
        "--connect-url",
        "https://partner.example.com/connect?x=1",
        "--post-logout-redirect-uri",
        "https://partner.example.com/signed-out",
        "--post-logout-redirect-uri",
        "http://127.0.0.1:9000/bye",
    ]);
    let client_id = ClientId::parse(str_field(&created, "client_id")).unwrap();
    let secret = str_field(&created, "client_secret").to_owned();
    assert!(Uuid::parse_str(&secret).is_ok(), "client_secret is a UUID");
    let client = t.stored_client(&client_id).await;
    assert_eq!(
        client.id, client_id,
        "the printed id is the stored client's own"
    );
    assert_eq!(
        client_id.as_uuid().get_version(),
        Some(uuid::Version::Random),
        "a random (v4) id"
    );
    assert!(t.secret_verifies(&client_id, &secret).await);
    assert!(!t.stored_anywhere(&secret).await, "secret stored in clear");
    assert!(
        t.stored_anywhere("Partner App").await,
        "the check sees stored text"
    );
    assert_eq!(client.name, "Partner App");
    assert_eq!(client.allowed_scopes, Scopes::parse("read write").unwrap());
    assert_eq!(
        client.grants,
        BTreeSet::from([GrantType::ClientCredentials, GrantType::RefreshToken])
    );
    assert_eq!(
        client.connect_url.as_deref(),
        Some("https://partner.example.com/connect?x=1")
    );
    assert!(client.refresh_allowed && client.enabled);
    assert_eq!(
        client.post_logout_redirect_uris,
        [
            "https://partner.example.com/signed-out",
            "http://127.0.0.1:9000/bye"
        ]
    );
    assert_eq!(
        created["post_logout_redirect_uris"][0],
        "https://partner.example.com/signed-out"
    );

    // Defaults: every grant, no scopes; --no-refresh; readable output names the secret once.
    let text = t.text(&["clients", "create", "--name", "Other", "--no-refresh"]);
    let other_id = ClientId::parse(&text_field(&text, "client_id")).unwrap();
    let other_secret = text_field(&text, "client_secret");
    let other = t.stored_client(&other_id).await;
    assert!(t.secret_verifies(&other_id, &other_secret).await);
    assert_eq!(other.grants, GrantType::ALL.into_iter().collect());
    assert!(other.allowed_scopes.is_empty());
    assert!(!other.refresh_allowed);
    assert!(other.post_logout_redirect_uris.is_empty());

    // The device grant by its short name, which is also how it is printed.
    let device = t.json(&[
        "clients",
        "create",
        "--name",
        "TV",
        "--grant",
        "device_code,refresh_token",
    ]);
    let device_id = ClientId::parse(str_field(&device, "client_id")).unwrap();
    assert_eq!(
        t.stored_client(&device_id).await.grants,
        BTreeSet::from([GrantType::DeviceCode, GrantType::RefreshToken])
    );
    assert_eq!(device["grants"][0], "refresh_token", "{device}");
    assert_eq!(device["grants"][1], "device_code", "{device}");

    let refused: [&[&str]; 5] = [
        &["--name", "X", "--grants", "implicit"],
        &["--name", "X", "--connect-url", "ftp://x"],
        &[
            "--name",
            "X",
            "--post-logout-redirect-uri",
            "http://partner.example.com/out",
        ],
        &["--name", "  "],
        &[],
    ];
    for flags in refused {
        t.fails(&[&["clients", "create"], flags].concat(), 2);
    }

    CreatedClients {
        partner: client_id,
        partner_secret: secret,
        other: other_id,
        other_secret,
    }
}

/// `clients disable`: only the named client, and the tool says when running servers notice.
pub async fn disable(t: &Target, clients: &CreatedClients) {
    let client_id = clients.partner.to_string();
    let out = t.json(&["clients", "disable", &client_id]);
    assert_eq!(out["enabled"], false);
    assert!(!t.stored_client(&clients.partner).await.enabled);
    assert!(t.stored_client(&clients.other).await.enabled);
    t.fails(&["clients", "disable", UNKNOWN], 3);
    t.fails(&["clients", "disable", "not-a-uuid"], 2);
    // Running servers cache clients for a few seconds, and the tool says so.
    let said = t.text(&["clients", "disable", &client_id]);
    assert!(said.contains("may take up to 5 seconds"), "{said}");
}
