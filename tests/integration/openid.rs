//! OpenID Connect for standard relying parties, over real HTTP on both stores: the `openid`
//! scope any client that signs users in may ask for, the userinfo endpoint, the authorization
//! endpoint's OpenID parameters and RFC 9207 `iss`, RP-initiated logout, and a reused code
//! revoking the family however late or concurrent the second use. The libraries' own view is
//! in `oidc_interop`.

mod account;
mod authorize;
mod backchannel;
mod code_reuse;
mod logout;
mod logout_plan;
mod mfa_policy;
mod scopes;
mod second_factor;
mod sessions;
mod userinfo;

use crate::support::app::{TestApp, TestClient};
use reqwest::StatusCode;
use serde_json::Value;
use token_core::admin::NewClient;
use token_domain::Scopes;

use crate::authorize::flow::{exchange, query, Session, LOGIN, PASSWORD, REDIRECT_URI};

pub const POST_LOGOUT_REDIRECT_URI: &str = "https://app.example.com/signed-out";

/// A client registered without `openid`, with the code flow's and logout's addresses.
pub async fn oidc_client(app: &TestApp, name: &str) -> TestClient {
    let mut new = NewClient::named(name, Scopes::parse("read profile email").unwrap());
    new.redirect_uris = vec![REDIRECT_URI.to_owned()];
    new.post_logout_redirect_uris = vec![POST_LOGOUT_REDIRECT_URI.to_owned()];
    app.create_client_with(new).await
}

/// The code flow for `LOGIN` with `extra` authorize parameters, redeemed without PKCE.
pub async fn code_flow_tokens(app: &TestApp, client: &TestClient, extra: &[(&str, &str)]) -> Value {
    let redirect = Session::new(app)
        .decide(&query(client, extra), "approve")
        .await;
    let (status, tokens) = exchange(app, client, &redirect["code"], &[("code_verifier", "")]).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    tokens
}

/// A password grant of `LOGIN` with `scope`.
pub async fn password_tokens(app: &TestApp, client: &TestClient, scope: &str) -> Value {
    let (status, tokens) = app
        .token(&[
            ("grant_type", "password"),
            ("client_id", &client.id),
            ("client_secret", &client.secret),
            ("username", LOGIN),
            ("password", PASSWORD),
            ("scope", scope),
        ])
        .await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    tokens
}

/// A refresh with the refresh token of `tokens`: the status and body.
pub async fn refresh(app: &TestApp, client: &TestClient, tokens: &Value) -> (StatusCode, Value) {
    app.refresh(client, tokens["refresh_token"].as_str().unwrap())
        .await
}
