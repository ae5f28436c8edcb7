//! A `private_key_jwt` registration whose `jwks` also holds an encryption key (`use: enc`) is
//! taken with its signing keys only: the 201 echoes the kept keys, and the
//! client authenticates at the token endpoint with an assertion signed by its signing key.

use super::*;
use crate::authorize::flow::{query, Session, LOGIN, PASSWORD, REDIRECT_URI};
use crate::private_key_jwt::keys::{jwk_set, ClientKey};
use crate::support::app::TestClient;
use token_core::auth::client_assertion::ASSERTION_TYPE;
use token_domain::clock::Clock;

crate::on_both_stores!(with crate::registration::open();
    a_jwks_with_an_encryption_key_is_taken_with_its_signing_keys,
);

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

    let client_id = answer["client_id"].as_str().unwrap().to_owned();
    let client = TestClient {
        id: client_id.clone(),
        secret: String::new(),
    };
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
