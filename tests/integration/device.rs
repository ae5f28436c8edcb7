//! The device authorization grant (RFC 8628) end to end on both stores: `codes` covers the
//! device authorization request, `polling` the token endpoint's answers to the device (the
//! user's decision recorded as the page records it), `public_clients` the clients that send
//! their `client_id` alone, `page` the verification page over HTTP (`sign_in_limits` its sign-in's throttle and lockout,
//! `guess_race` its code guesses sent all at once, `second_factor` its code and enrolment
//! steps) and `in_browser` in
//! Chromium, `interop` openid-client 6 polling while the user allows in Chromium. The helpers
//! here request codes, poll, and decide.

mod codes;
mod guess_race;
mod in_browser;
mod interop;
pub(crate) mod page;
mod polling;
mod public_clients;
mod second_factor;
mod sign_in_limits;

use crate::support::app::{json_of, TestApp, TestClient};
use crate::support::assertions::Answer;
use serde_json::Value;
use token_domain::clock::Clock;
use token_domain::{DeviceDecision, PrincipalId, UserCode, DEVICE_CODE_TTL_SECONDS};

pub const DEVICE_AUTHORIZATION: &str = "/oauth2/v0/device_authorization";
pub const DEVICE_GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";

/// `POST /oauth2/v0/device_authorization` with the client's secret in the body.
pub async fn request_codes(app: &TestApp, client: &TestClient, extra: &[(&str, &str)]) -> Answer {
    let mut form = vec![
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
    ];
    form.extend_from_slice(extra);
    json_of(app.post_form(DEVICE_AUTHORIZATION, &form).await).await
}

/// Codes for `scope`, asserted granted.
pub async fn codes(app: &TestApp, client: &TestClient, scope: &str) -> Value {
    let (status, body) = request_codes(app, client, &[("scope", scope)]).await;
    assert_eq!(status, 200, "{body}");
    body
}

/// One poll of the token endpoint with the device code.
pub async fn poll(app: &TestApp, client: &TestClient, device_code: &str) -> Answer {
    app.token(&[
        ("grant_type", DEVICE_GRANT),
        ("device_code", device_code),
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
    ])
    .await
}

/// Records the user's decision on the code shown to them, as the verification page does once
/// the user has signed in.
pub async fn decide(app: &TestApp, user_code: &str, decision: &DeviceDecision) -> bool {
    let now = app.clock.now();
    let devices = app.store.device_authorizations();
    let record = devices
        .find_device_authorization(&UserCode::parse(user_code).unwrap().hash(), now)
        .await
        .unwrap()
        .expect("the user code names a stored authorization");
    devices
        .decide_device_authorization(
            &record.device_code_hash,
            decision,
            now - DEVICE_CODE_TTL_SECONDS,
        )
        .await
        .unwrap()
}

pub fn approval(user: PrincipalId, auth_time: i64) -> DeviceDecision {
    DeviceDecision::Approved {
        user_id: user,
        auth_time,
        sid: None,
        amr: Vec::new(),
    }
}
