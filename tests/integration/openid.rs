//! OpenID Connect for standard relying parties, over real HTTP on both stores: the `openid`
//! scope any client that signs users in may ask for, the userinfo endpoint, the authorization
//! endpoint's OpenID parameters and RFC 9207 `iss`, RP-initiated logout, and a reused code
//! revoking the family however late or concurrent the second use. The libraries' own view is
//! in `oidc_interop`.

mod account;
mod authorize;
mod backchannel;
mod code_races;
mod code_reuse;
mod factor_changes;
mod logout;
mod logout_confirm;
mod logout_plan;
mod mfa_policy;
mod own_factor;
mod scopes;
pub(crate) mod second_factor;
mod session_cookie;
mod sessions;
mod userinfo;

use crate::support::app::{TestApp, TestClient};
use reqwest::StatusCode;
use serde_json::Value;
use token_core::admin::NewClient;
use token_domain::Scopes;

use crate::authorize::flow::{exchange, query, Session, LOGIN, PASSWORD, REDIRECT_URI};

pub const POST_LOGOUT_REDIRECT_URI: &str = "https://app.example.com/signed-out";

/// The `name=value` pair a response sets for the cookie `name`.
pub fn set_cookie_pair(response: &reqwest::Response, name: &str) -> Option<String> {
    response
        .headers()
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .map(|value| value.split(';').next().unwrap().to_owned())
        .find(|pair| pair.starts_with(&format!("{name}=")))
}

/// Opens the account page in a browser without a session and posts its sign-in form as
/// `LOGIN` with `PASSWORD`: the browser's sign-in nonce cookie pair, and the answer.
pub async fn account_sign_in(app: &TestApp) -> (String, reqwest::Response) {
    let path = app.url("/oauth2/v0/account");
    let page = app.http.get(&path).send().await.unwrap();
    let nonce = set_cookie_pair(&page, "account_sign_in").expect("the sign-in nonce cookie");
    let token = crate::authorize::flow::csrf(&page.text().await.unwrap());
    let form = [
        ("csrf_token", token.as_str()),
        ("action", "sign_in"),
        ("login", LOGIN),
        ("password", PASSWORD),
    ];
    let answer = app
        .http
        .post(&path)
        .header(reqwest::header::COOKIE, &nonce)
        .form(&form)
        .send()
        .await
        .unwrap();
    (nonce, answer)
}

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
