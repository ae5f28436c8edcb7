//! The options added after the first verbs: `clients create --first-party --redirect-uri
//! --refresh-rotation`, `clients set-refresh-rotation`, `users create --email` and
//! `users set-email`, `clients list`, each run through the binary and read back from the store.

use token_domain::{ChannelHandle, ClientProfile, PrincipalId, RefreshRotation};

use super::output::str_field;
use super::target::{Target, UNKNOWN};

const CONSOLE_CALLBACK: &str = "https://console.example.com/callback";
const LOOPBACK_CALLBACK: &str = "http://127.0.0.1:8080/cb";

/// `clients create` with the client options, their defaults, `clients set-refresh-rotation` and
/// `clients set-require-dpop`.
pub async fn client_options(t: &Target) {
    let (created, id) = t.create_client(
        "Admin Console",
        &[
            "--first-party",
            "--redirect-uri",
            CONSOLE_CALLBACK,
            "--redirect-uri",
            LOOPBACK_CALLBACK,
            "--refresh-rotation",
            "sliding",
        ],
    );
    let console = t.stored_client(&id).await;
    assert!(console.first_party, "--first-party is stored");
    assert_eq!(
        console.redirect_uris,
        vec![CONSOLE_CALLBACK.to_owned(), LOOPBACK_CALLBACK.to_owned()],
        "every --redirect-uri, in order"
    );
    assert_eq!(console.refresh_rotation, RefreshRotation::Sliding);
    assert_eq!(created["refresh_rotation"], "sliding", "{created}");

    let (_, plain) = t.create_client("Plain", &[]);
    let plain = t.stored_client(&plain).await;
    assert!(!plain.first_party && plain.redirect_uris.is_empty());
    assert_eq!(
        plain.refresh_rotation,
        RefreshRotation::Rotate,
        "the default"
    );

    let client_id = id.to_string();
    for (rotation, expected) in [
        ("rotate", RefreshRotation::Rotate),
        ("sliding", RefreshRotation::Sliding),
    ] {
        let out = t.json(&["clients", "set-refresh-rotation", &client_id, rotation]);
        assert_eq!(out["refresh_rotation"], rotation, "{out}");
        let stored = t.stored_client(&id).await;
        assert_eq!(stored.refresh_rotation, expected, "after {rotation}");
        assert_eq!(
            stored.redirect_uris, console.redirect_uris,
            "the rest of the client is kept"
        );
    }
    t.fails(&["clients", "set-refresh-rotation", UNKNOWN, "rotate"], 3);

    // DPoP: off unless asked for, at creation or later.
    assert!(!console.require_dpop && !plain.require_dpop, "the default");
    let (created, strict) = t.create_client("Strict", &["--require-dpop"]);
    assert_eq!(created["require_dpop"], true, "{created}");
    assert!(t.stored_client(&strict).await.require_dpop);
    for (value, expected) in [("true", true), ("false", false)] {
        let out = t.json(&["clients", "set-require-dpop", &client_id, value]);
        assert_eq!(out["require_dpop"], expected, "{out}");
        let stored = t.stored_client(&id).await;
        assert_eq!(stored.require_dpop, expected, "after {value}");
        assert_eq!(
            stored.redirect_uris, console.redirect_uris,
            "the rest is kept"
        );
    }
    t.fails(&["clients", "set-require-dpop", UNKNOWN, "true"], 3);
    t.fails(&["clients", "set-require-dpop", &client_id, "maybe"], 2);

    // Pushed requests and the FAPI 2.0 profile: off unless asked for, at creation or later.
    assert!(!console.require_par, "the default");
    assert_eq!(console.profile, ClientProfile::Default, "the default");
    let (created, bank) = t.create_client("Bank", &["--require-par", "--profile", "fapi2"]);
    assert_eq!(created["require_par"], true, "{created}");
    assert_eq!(created["profile"], "fapi2", "{created}");
    let stored = t.stored_client(&bank).await;
    assert!(stored.require_par && stored.is_fapi2());
    let bank_id = bank.to_string();
    let out = t.json(&["clients", "set-profile", &bank_id, "default"]);
    assert_eq!(out["profile"], "default", "{out}");
    let stored = t.stored_client(&bank).await;
    assert_eq!(stored.profile, ClientProfile::Default);
    assert!(stored.require_par, "--require-par is its own switch");
    t.fails(&["clients", "set-profile", &bank_id, "fapi3"], 2);
    t.fails(&["clients", "set-profile", UNKNOWN, "fapi2"], 3);
    t.fails(
        &["clients", "set-refresh-rotation", &client_id, "sometimes"],
        2,
    );
    t.fails(
        &[
            "clients",
            "create",
            "--name",
            "X",
            "--redirect-uri",
            "ftp://x/cb",
        ],
        2,
    );
    t.fails(
        &[
            "clients",
            "create",
            "--name",
            "X",
            "--refresh-rotation",
            "never",
        ],
        2,
    );
}

/// `clients create --backchannel-logout-uri`, `clients set-backchannel-logout-uri` (set and
/// `--clear`) and `clients show`, read back from the store; a non-loopback http address is
/// refused at registration.
pub async fn backchannel_logout_uri(t: &Target) {
    const URI: &str = "https://rp.example.com/backchannel-logout";
    let (created, id) = t.create_client("RP", &["--backchannel-logout-uri", URI]);
    assert_eq!(created["backchannel_logout_uri"], URI, "{created}");
    assert_eq!(
        t.stored_client(&id).await.backchannel_logout_uri.as_deref(),
        Some(URI)
    );
    let client_id = id.to_string();
    let shown = t.json(&["clients", "show", &client_id]);
    assert_eq!(shown["backchannel_logout_uri"], URI, "{shown}");
    assert!(shown.get("client_secret").is_none(), "{shown}");

    let loopback = "http://127.0.0.1:9000/bcl";
    let out = t.json(&[
        "clients",
        "set-backchannel-logout-uri",
        &client_id,
        loopback,
    ]);
    assert_eq!(out["backchannel_logout_uri"], loopback, "{out}");
    let out = t.json(&[
        "clients",
        "set-backchannel-logout-uri",
        &client_id,
        "--clear",
    ]);
    assert_eq!(
        out["backchannel_logout_uri"],
        serde_json::Value::Null,
        "{out}"
    );
    assert_eq!(t.stored_client(&id).await.backchannel_logout_uri, None);

    let plain = "http://rp.example.com/bcl";
    t.fails(
        &["clients", "set-backchannel-logout-uri", &client_id, plain],
        2,
    );
    t.fails(&["clients", "set-backchannel-logout-uri", &client_id], 2);
    t.fails(
        &[
            "clients",
            "create",
            "--name",
            "X",
            "--backchannel-logout-uri",
            plain,
        ],
        2,
    );
    t.fails(&["clients", "set-backchannel-logout-uri", UNKNOWN, URI], 3);
}

/// `users create --email` and `users set-email`: stored on the user, found by any case of the
/// address, unique among users.
pub async fn user_emails(t: &Target) {
    let created = t.json(&[
        "users",
        "create",
        "--login",
        "erin",
        "--password",
        "erin password 1",
        "--email",
        "Erin@Example.com",
    ]);
    let erin = PrincipalId::parse(str_field(&created, "user_id")).unwrap();
    let stored = t.store.principals().get_user(&erin).await.unwrap().unwrap();
    assert_eq!(stored.email.as_deref(), Some("Erin@Example.com"));
    assert_eq!(found_by(t, "erin@EXAMPLE.com").await, Some(erin));

    let created = t.json(&[
        "users",
        "create",
        "--login",
        "finn",
        "--password",
        "finn password 1",
    ]);
    let finn = PrincipalId::parse(str_field(&created, "user_id")).unwrap();
    assert_eq!(
        t.store
            .principals()
            .get_user(&finn)
            .await
            .unwrap()
            .unwrap()
            .email,
        None
    );
    let finn_id = finn.to_string();
    let out = t.json(&["users", "set-email", &finn_id, "finn@example.com"]);
    assert_eq!(out["email"], "finn@example.com", "{out}");
    let stored = t.store.principals().get_user(&finn).await.unwrap().unwrap();
    assert_eq!(stored.email.as_deref(), Some("finn@example.com"));
    assert_eq!(found_by(t, "FINN@example.com").await, Some(finn));

    // Unique whatever the case, on both verbs; malformed or unknown is refused.
    let taken = t.fails(&["users", "set-email", &finn_id, "ERIN@example.com"], 4);
    assert!(taken.contains("already has that e-mail address"), "{taken}");
    t.fails(
        &[
            "users",
            "create",
            "--login",
            "gil",
            "--password",
            "x",
            "--email",
            "erin@example.COM",
        ],
        4,
    );
    t.fails(&["users", "set-email", &finn_id, "not an address"], 2);
    t.fails(&["users", "set-email", UNKNOWN, "new@example.com"], 3);
    let kept = t.store.principals().get_user(&finn).await.unwrap().unwrap();
    assert_eq!(
        kept.email.as_deref(),
        Some("finn@example.com"),
        "refusals change nothing"
    );
}

async fn found_by(t: &Target, address: &str) -> Option<PrincipalId> {
    t.store
        .principals()
        .get_user_by_email(&ChannelHandle::parse(address).unwrap())
        .await
        .unwrap()
        .map(|user| user.id)
}

/// `clients list`: every client, a self-registered one marked `"registration": "dynamic"`, one
/// made here `"static"`, and no secret printed.
pub async fn clients_list(t: &Target) {
    let (_, made_here) = t.create_client("Listed Console", &[]);
    let mut agent = t.stored_client(&made_here).await;
    agent.id = token_domain::ClientId::new(uuid::Uuid::new_v4());
    agent.name = "Self-registered agent".into();
    agent.registration = Some(token_domain::DynamicRegistration {
        access_token_hash: token_domain::secrets::TokenHash::of("registration access token"),
        auth_method: token_domain::RegisteredAuthMethod::None,
        client_uri: None,
        logo_uri: None,
        policy_uri: None,
        tos_uri: None,
        backchannel_logout_session_required: false,
        jwks_uri: None,
    });
    t.store.clients().put_client(&agent).await.unwrap();

    let listed = t.json(&["clients", "list"]);
    let entry = |id: &token_domain::ClientId| {
        listed
            .as_array()
            .expect("a JSON array")
            .iter()
            .find(|client| client["client_id"] == id.to_string())
            .unwrap_or_else(|| panic!("{id} is listed: {listed}"))
            .clone()
    };
    assert_eq!(entry(&made_here)["registration"], "static", "{listed}");
    assert_eq!(entry(&agent.id)["registration"], "dynamic", "{listed}");
    assert_eq!(entry(&agent.id)["name"], "Self-registered agent");
    assert!(
        !listed.to_string().contains("client_secret"),
        "no secret is listed: {listed}"
    );
    let text = t.text(&["clients", "list"]);
    assert!(
        text.contains(&format!(
            "{}  Self-registered agent  (self-registered)",
            agent.id
        )),
        "{text}"
    );
}

/// `clients create --resource` (repeatable): stored with the client, printed by `clients
/// create` and `clients show`; a relative URI or one with a fragment is refused.
pub async fn client_resources(t: &Target) {
    const API: &str = "https://api.example.com/mcp";
    const FILES: &str = "https://files.example.com";
    let (created, id) = t.create_client("Agent API", &["--resource", API, "--resource", FILES]);
    assert_eq!(
        created["resources"],
        serde_json::json!([API, FILES]),
        "{created}"
    );
    let stored: Vec<String> = t
        .stored_client(&id)
        .await
        .resources
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(stored, vec![API.to_owned(), FILES.to_owned()]);
    let shown = t.json(&["clients", "show", &id.to_string()]);
    assert_eq!(
        shown["resources"],
        serde_json::json!([API, FILES]),
        "{shown}"
    );
    let (plain, _) = t.create_client("Any resource", &[]);
    assert_eq!(plain["resources"], serde_json::json!([]), "{plain}");
    for bad in ["/mcp", "https://api.example.com/mcp#x", "urn:example:api"] {
        t.fails(&["clients", "create", "--name", "X", "--resource", bad], 2);
    }
}
