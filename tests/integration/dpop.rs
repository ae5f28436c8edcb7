//! DPoP (RFC 9449) over real HTTP on both stores: proofs built here with p256 alone (not the
//! JOSE code the server verifies with), at the token endpoint for every grant, at userinfo and
//! the connections endpoint, with introspection's `cnf`, the `require_dpop` registration, the
//! code's `dpop_jkt` and server nonces. Real DPoP clients (npm's `dpop`, openid-client 6) are in
//! `dpop/node.rs`.

mod algorithms;
mod binding;
mod proofs;
mod resource;

use crate::support::app::{json_of, password_form, TestApp, TestClient};
pub use crate::support::dpop::{ath, DpopKey, Proof, TOKEN_PATH};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use reqwest::header::HeaderMap;
use reqwest::StatusCode;
use serde_json::Value;

/// A token request with `proofs` as `DPoP` header fields: status, headers and body.
pub async fn token_with(
    app: &TestApp,
    form: &[(&str, &str)],
    proofs: &[&str],
) -> (StatusCode, HeaderMap, Value) {
    let mut request = app.http.post(app.url(TOKEN_PATH)).form(form);
    for proof in proofs {
        request = request.header("DPoP", *proof);
    }
    let response = request.send().await.unwrap();
    let headers = response.headers().clone();
    let (status, body) = json_of(response).await;
    (status, headers, body)
}

/// The password grant of `login` with `extra` parameters and a proof by `key`; panics unless it
/// succeeds. The token response.
pub async fn bound_password_grant(
    app: &TestApp,
    client: &TestClient,
    (login, password): (&str, &str),
    extra: &[(&str, &str)],
    key: &DpopKey,
) -> Value {
    let form = password_form(client, login, password, extra);
    let (status, _, body) = token_with(app, &form, &[&key.token_proof(app)]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

pub fn client_credentials(client: &TestClient) -> [(&str, &str); 3] {
    [
        ("grant_type", "client_credentials"),
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
    ]
}

/// The claims of a JWT, unverified (the signature is checked by other suites).
pub fn claims(jwt: &str) -> Value {
    let payload = jwt.split('.').nth(1).unwrap();
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap()
}

/// A 400 `invalid_dpop_proof` with its catalogue code.
pub fn assert_invalid_proof(status: StatusCode, body: &Value, case: &str) {
    assert_eq!(status, StatusCode::BAD_REQUEST, "{case}: {body}");
    assert_eq!(body["error"], "invalid_dpop_proof", "{case}: {body}");
    assert_eq!(body["code"], 150, "{case}: {body}");
}

/// Introspects `token` as `client`.
pub async fn introspect(app: &TestApp, client: &TestClient, token: &str) -> Value {
    let response = app
        .post_form(
            "/oauth2/v0/introspect",
            &[
                ("client_id", &client.id),
                ("client_secret", &client.secret),
                ("token", token),
            ],
        )
        .await;
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}
