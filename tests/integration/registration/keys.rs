//! A `private_key_jwt` registration whose `jwks` also holds an encryption key (`use: enc`) is
//! taken with its signing keys only: the 201 echoes the kept keys, and the client authenticates
//! at the token endpoint with an assertion signed by its signing key. A registration naming a
//! `jwks_uri` instead: its keys are read there at use, kept per `Cache-Control`, and read again
//! at most once a minute for a `kid` they lack.

use super::*;
use crate::authorize::flow::{query, Session, LOGIN, PASSWORD, REDIRECT_URI};
use crate::private_key_jwt::keys::{jwk_set, ClientKey};
use crate::support::app::Backend;
use crate::support::document_server::{DocumentServer, Served};
use token_adapters::outbound::fetcher;
use token_core::auth::client_assertion::ASSERTION_TYPE;
use token_core::client_keys::KEYS_REFETCH_SECONDS;
use token_core::outbound::AllowedHosts;
use token_domain::clock::Clock;

crate::on_both_stores!(with crate::registration::open();
    a_jwks_with_an_encryption_key_is_taken_with_its_signing_keys,
);

mod published {
    use super::*;

    crate::on_both_stores!(using super::with_key_server;
        a_client_with_a_jwks_uri_signs_with_the_keys_published_there,
    );

    async fn a_client_with_a_jwks_uri_signs_with_the_keys_published_there(
        (app, server): (TestApp, DocumentServer),
    ) {
        let first = ClientKey::es256("published-1");
        let path = format!("/{}/jwks.json", uuid::Uuid::new_v4());
        server.serve(&path, Served::json(&jwk_set(&[&first]), Some(600)));
        let jwks_uri = format!("http://127.0.0.1:{}{path}", server.port);
        let (status, answer) = register(
            &app,
            &json!({
                "redirect_uris": [REDIRECT_URI],
                "token_endpoint_auth_method": "private_key_jwt",
                "jwks_uri": jwks_uri,
            }),
            None,
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{answer}");
        assert_eq!(answer["jwks_uri"], jwks_uri.as_str());
        assert!(answer.get("jwks").is_none(), "{answer}");
        assert_eq!(server.hits(&path), 0, "read at use, not at registration");
        let client_id = answer["client_id"].as_str().unwrap().to_owned();

        assert_eq!(
            introspect_as(&app, &client_id, &first).await,
            StatusCode::OK
        );
        assert_eq!(
            introspect_as(&app, &client_id, &first).await,
            StatusCode::OK
        );
        assert_eq!(server.hits(&path), 1, "kept per Cache-Control");

        // The client rotates: an assertion naming the new key reads the set again at most
        // once a minute.
        let second = ClientKey::es256("published-2");
        server.serve(&path, Served::json(&jwk_set(&[&second]), Some(600)));
        app.clock.advance(KEYS_REFETCH_SECONDS);
        assert_eq!(
            introspect_as(&app, &client_id, &second).await,
            StatusCode::OK
        );
        assert_eq!(server.hits(&path), 2, "read again for the unknown kid");
        let third = ClientKey::es256("published-3");
        assert_eq!(
            introspect_as(&app, &client_id, &third).await,
            StatusCode::UNAUTHORIZED,
            "a key nobody published"
        );
        assert_eq!(server.hits(&path), 2, "not again within the minute");
        assert_eq!(
            introspect_as(&app, &client_id, &first).await,
            StatusCode::UNAUTHORIZED,
            "the withdrawn key"
        );
    }
}

/// Open registration, and a server on loopback (allowed for fetches) for the clients' keys.
async fn with_key_server(backend: Backend) -> Option<(TestApp, DocumentServer)> {
    let server = DocumentServer::start().await;
    let allowed = AllowedHosts::parse(&format!("127.0.0.1:{}", server.port)).unwrap();
    let options = AppOptions {
        document_fetcher: Some(fetcher(allowed)),
        ..open()
    };
    let app = TestApp::spawn_with(backend, options).await?;
    Some((app, server))
}

/// A client assertion for `client_id`, signed by `key`, for the app's introspection endpoint.
fn assertion(app: &TestApp, client_id: &str, key: &ClientKey) -> String {
    let now = app.clock.now();
    key.sign(&json!({
        "iss": client_id, "sub": client_id, "aud": app.url("/oauth2/v0/introspect"),
        "iat": now, "exp": now + 60, "jti": uuid::Uuid::new_v4().to_string(),
    }))
}

/// Introspection authenticated by an assertion signed by `key`: its status.
async fn introspect_as(app: &TestApp, client_id: &str, key: &ClientKey) -> StatusCode {
    let assertion = assertion(app, client_id, key);
    let form = [
        ("token", "not-a-token"),
        ("client_assertion_type", ASSERTION_TYPE),
        ("client_assertion", assertion.as_str()),
    ];
    app.post_form("/oauth2/v0/introspect", &form).await.status()
}

async fn a_jwks_with_an_encryption_key_is_taken_with_its_signing_keys(app: TestApp) {
    use base64::Engine;
    app.create_user(LOGIN, PASSWORD).await;
    let key = ClientKey::es256("agent-signing");
    let mut jwks = jwk_set(&[&key]);
    let modulus = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode([0xc5u8; 256]);
    jwks["keys"].as_array_mut().unwrap().insert(
        0,
        json!({"kty": "RSA", "use": "enc", "alg": "RSA-OAEP-256", "kid": "agent-encryption",
               "n": modulus, "e": "AQAB"}),
    );
    let (status, answer) = register(
        &app,
        &json!({
            "redirect_uris": [REDIRECT_URI],
            "token_endpoint_auth_method": "private_key_jwt",
            "jwks": jwks,
        }),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    let kids: Vec<&str> = answer["jwks"]["keys"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|key| key["kid"].as_str())
        .collect();
    assert_eq!(kids, ["agent-signing"], "the signing key only: {answer}");

    let client = registered_public_client(&answer);
    let client_id = client.id.clone();
    let approved = Session::new(&app)
        .decide(&query(&client, &[("scope", "openid")]), "approve")
        .await;
    let now = app.clock.now();
    let assertion = key.sign(&json!({
        "iss": client_id, "sub": client_id, "aud": app.url("/oauth2/v0/token"),
        "iat": now, "exp": now + 60, "jti": uuid::Uuid::new_v4().to_string(),
    }));
    let form = [
        ("grant_type", "authorization_code"),
        ("code", approved["code"].as_str()),
        ("redirect_uri", REDIRECT_URI),
        ("client_assertion_type", ASSERTION_TYPE),
        ("client_assertion", assertion.as_str()),
    ];
    let (status, tokens) = app.token(&form).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
}
