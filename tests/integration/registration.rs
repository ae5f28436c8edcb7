//! Dynamic client registration (RFC 7591) and its management (RFC 7592) over HTTP, on both
//! stores: every refusal, the 201 body, GET/PUT/DELETE with the registration access token, a
//! self-registered public client's code flow (PKCE required), and the modes off and token.

use crate::support::app::{json_of, AppOptions, TestApp};
use reqwest::StatusCode;
use serde_json::{json, Value};
use token_core::config::{Policy, RateLimits, RegistrationMode, RegistrationPolicy};

mod flow;
mod keys;
mod logout;
mod management;
mod modes;
mod refusals;

pub const REGISTER: &str = "/oauth2/v0/register";

/// The public client a registration answered (no secret: it authenticates with PKCE alone).
pub(crate) fn registered_public_client(answer: &Value) -> crate::support::app::TestClient {
    crate::support::app::TestClient {
        id: answer["client_id"].as_str().unwrap().to_owned(),
        secret: String::new(),
    }
}

pub(crate) fn registration(mode: RegistrationMode) -> AppOptions {
    AppOptions {
        policy: Policy {
            registration: RegistrationPolicy {
                mode,
                ..RegistrationPolicy::default()
            },
            ..Policy::default()
        },
        ..AppOptions::default()
    }
}

pub(crate) fn open() -> AppOptions {
    registration(RegistrationMode::Open)
}

/// Open registration limited to `per_hour` registrations an address.
pub(crate) fn limited(per_hour: u32) -> AppOptions {
    let mut options = open();
    options.policy.rate_limits = RateLimits {
        registrations_per_hour: per_hour,
        ..RateLimits::default()
    };
    options
}

/// `POST /oauth2/v0/register` with `body` and, if given, a bearer token.
pub async fn register(app: &TestApp, body: &Value, bearer: Option<&str>) -> (StatusCode, Value) {
    let mut request = app.http.post(app.url(REGISTER)).json(body);
    if let Some(token) = bearer {
        request = request.bearer_auth(token);
    }
    json_of(request.send().await.unwrap()).await
}

/// A minimal valid registration with `extra` members.
pub fn metadata(extra: Value) -> Value {
    let mut body = json!({ "redirect_uris": ["https://agent.example/callback"] });
    for (name, value) in extra.as_object().unwrap() {
        body[name] = value.clone();
    }
    body
}
