//! A self-registered client can log out: registration keeps `post_logout_redirect_uris` and
//! `backchannel_logout_uri` (+ `backchannel_logout_session_required`) and echoes them, RP-initiated
//! logout sends the browser back to the registered address, and the back-channel logout token
//! is delivered to the registered URI.

use std::time::Duration;

use super::*;
use crate::authorize::flow::{
    exchange, query, redirect_query, Session, LOGIN, PASSWORD, REDIRECT_URI, VERIFIER,
};
use crate::backchannel_logout::verified;
use crate::support::app::Backend;
use crate::support::logout_receiver::LogoutReceiver;
use reqwest::header;
use token_core::flows::authorize::s256_challenge;
use token_domain::ClientId;

const SIGNED_OUT: &str = "https://app.example.com/signed-out";

crate::on_both_stores!(using super::with_receiver;
    a_self_registered_client_logs_out_on_both_channels,
);

/// Open registration, and a receiver of logout tokens on loopback (allowed for delivery).
async fn with_receiver(backend: Backend) -> Option<(TestApp, LogoutReceiver)> {
    let receiver = LogoutReceiver::start(StatusCode::OK, None).await;
    let options = AppOptions {
        logout_allowed_hosts: vec![receiver.host_port.clone()],
        ..open()
    };
    let app = TestApp::spawn_with(backend, options).await?;
    Some((app, receiver))
}

async fn a_self_registered_client_logs_out_on_both_channels(
    (app, receiver): (TestApp, LogoutReceiver),
) {
    app.create_user(LOGIN, PASSWORD).await;
    let backchannel = receiver.url("/backchannel_logout");
    let (status, answer) = register(
        &app,
        &json!({
            "redirect_uris": [REDIRECT_URI],
            "token_endpoint_auth_method": "none",
            "post_logout_redirect_uris": [SIGNED_OUT],
            "backchannel_logout_uri": backchannel,
            "backchannel_logout_session_required": true,
        }),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    assert_eq!(answer["post_logout_redirect_uris"], json!([SIGNED_OUT]));
    assert_eq!(answer["backchannel_logout_uri"], backchannel.as_str());
    assert_eq!(answer["backchannel_logout_session_required"], true);
    let client = registered_public_client(&answer);

    let challenge = s256_challenge(VERIFIER);
    let authorize = query(
        &client,
        &[
            ("scope", "openid"),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
        ],
    );
    let mut browser = Session::new(&app);
    let redirect = browser.decide(&authorize, "approve").await;
    let (status, tokens) =
        exchange(&app, &client, &redirect["code"], &[("client_secret", "")]).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    let id_token = tokens["id_token"].as_str().expect("an ID token");

    let answer = app
        .http
        .get(app.url("/oauth2/v0/logout"))
        .query(&[
            ("id_token_hint", id_token),
            ("post_logout_redirect_uri", SIGNED_OUT),
            ("state", "bye"),
        ])
        .header(header::COOKIE, browser.sso_cookie.clone().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), StatusCode::FOUND);
    assert_eq!(
        answer.headers()[header::LOCATION],
        format!("{SIGNED_OUT}?state=bye"),
        "back to the registered address"
    );

    let mut got = receiver.received();
    for _ in 0..100 {
        if !got.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        got = receiver.received();
    }
    assert_eq!(
        got.len(),
        1,
        "one logout POST to the registered URI: {got:?}"
    );
    let client_id = ClientId::parse(&client.id).unwrap();
    let (header, claims) = verified(&app, got[0].logout_token(), client_id).await;
    assert_eq!(header.typ.as_deref(), Some("logout+jwt"));
    assert!(claims["sid"].is_string(), "{claims}");

    let silent: Vec<(&str, &str)> = authorize
        .iter()
        .copied()
        .chain([("prompt", "none")])
        .collect();
    let after = redirect_query(&browser.open(&silent).await);
    assert_eq!(after["error"], "login_required", "logged out");
}
