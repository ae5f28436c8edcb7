//! Pushed authorization requests (RFC 9126) and request objects (RFC 9101) on both stores:
//! `pushing` covers the PAR endpoint (every client authentication, its JSON
//! refusals), `using` the authorize endpoint with a `request_uri` (the whole code flow, single
//! use, expiry, the client binding, `--require-par`), `request_objects` the signed `request`
//! at both endpoints. The helpers here push and sign.

mod dpop_binding;
mod fapi2;
mod interop;
mod pushing;
mod request_objects;
mod using;

use crate::authorize::flow::{code_client, REDIRECT_URI, STATE};
use crate::private_key_jwt::keys::{jwk_set, ClientKey};
use crate::support::app::{json_of, TestApp, TestClient};
use crate::support::assertions::Answer;
use reqwest::{header, StatusCode};
use serde_json::{json, Value};
use token_core::admin::NewClient;
use token_domain::clock::Clock;
use token_domain::jose::PublicJwkSet;
use token_domain::Scopes;

pub const PAR: &str = "/oauth2/v0/par";
pub const REQUEST_URI_PREFIX: &str = "urn:ietf:params:oauth:request_uri:";

/// The authorization request's parameters a client pushes, with `extra` added or overriding.
pub fn parameters<'a>(extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut form = vec![
        ("redirect_uri", REDIRECT_URI),
        ("response_type", "code"),
        ("scope", "openid read"),
        ("state", STATE),
    ];
    for (name, value) in extra {
        form.retain(|(n, _)| n != name);
        form.push((name, value));
    }
    form
}

/// `POST /oauth2/v0/par` with the client's secret in the body and `parameters`.
pub async fn push(app: &TestApp, client: &TestClient, parameters: &[(&str, &str)]) -> Answer {
    let mut form = vec![
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
    ];
    form.extend_from_slice(parameters);
    json_of(app.post_form(PAR, &form).await).await
}

/// A push that must succeed: its `request_uri`.
pub async fn pushed(app: &TestApp, client: &TestClient, parameters: &[(&str, &str)]) -> String {
    let (status, body) = push(app, client, parameters).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["expires_in"], 60, "{body}");
    let request_uri = body["request_uri"].as_str().unwrap().to_owned();
    assert!(request_uri.starts_with(REQUEST_URI_PREFIX), "{request_uri}");
    request_uri
}

/// A code-flow client (`REDIRECT_URI`) registered with `key`'s public half.
pub async fn client_with_key(app: &TestApp, key: &ClientKey) -> TestClient {
    let mut new = NewClient::named(
        "Pushing App",
        Scopes::parse("openid read offline_access").unwrap(),
    );
    new.redirect_uris = vec![REDIRECT_URI.to_owned()];
    new.jwks = Some(PublicJwkSet::parse(jwk_set(&[key])).unwrap());
    app.create_client_with(new).await
}

/// The claims of a request object by `client` for this server, valid ten minutes: the
/// authorization request's parameters plus `iss`, `aud`, `exp`.
pub fn object_claims(app: &TestApp, client: &TestClient) -> Value {
    let now = app.clock.now();
    json!({
        "iss": client.id,
        "aud": app.geolocation().as_str(),
        "exp": now + 600,
        "nbf": now,
        "client_id": client.id,
        "redirect_uri": REDIRECT_URI,
        "response_type": "code",
        "scope": "openid read",
        "state": "from-the-object",
        "nonce": "object-nonce",
    })
}

/// The authorize page with only `client_id` and `request_uri`, as RFC 9126 §4 sends it.
pub fn by_reference<'a>(client: &'a TestClient, request_uri: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("client_id", client.id.as_str()),
        ("request_uri", request_uri),
    ]
}

/// The HTML error page (400, never a redirect), saying `says`.
#[track_caller]
pub fn assert_error_page(status: StatusCode, headers: &header::HeaderMap, html: &str, says: &str) {
    assert_eq!(status, StatusCode::BAD_REQUEST, "{html}");
    assert!(headers.get(header::LOCATION).is_none(), "never redirected");
    assert!(
        headers[header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("text/html"),
        "{headers:?}"
    );
    assert!(html.contains(says), "{html}");
}

/// A push refused with JSON: the status, `error` and `code`.
#[track_caller]
pub fn assert_refused(answer: &Answer, status: u16, error: &str, code: u64) {
    let (got, body) = answer;
    assert_eq!(got.as_u16(), status, "{body}");
    assert_eq!(body["error"], error, "{body}");
    assert_eq!(body["code"], code, "{body}");
    assert!(body.get("request_uri").is_none(), "{body}");
}

/// A plain code-flow client (secret only), for the tests that need no key.
pub async fn secret_client(app: &TestApp) -> TestClient {
    code_client(app).await
}
