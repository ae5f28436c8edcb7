//! The OpenID Foundation's `oidcc-backchannel-rp-initiated-logout` module, end to end through
//! the pages on both stores: a user signs in to a relying party registered with a back-channel
//! logout URI, the relying party sends the browser to the end-session endpoint, its logout URI
//! receives a logout token naming the ID token's `sub` and `sid` (verified with `jsonwebtoken`
//! against the JWK Set), the browser returns with its state, and `prompt=none` then answers
//! `login_required`. Also: `tokenctl`-style revocation of every session tells the client too.

use std::time::Duration;

use reqwest::{header, StatusCode};
use token_core::flows::sessions;
use token_domain::audit::SessionEndReason;
use token_domain::{ClientId, PrincipalId};

use super::*;
use crate::authorize::flow::{redirect_query, verify_with_jwks};
use crate::backchannel_logout::verified;
use crate::support::app::{AppOptions, Backend};
use crate::support::logout_receiver::{LogoutReceiver, Received};

/// The app, its receiver of logouts on loopback (allowed), and a client told of logouts there.
async fn app_with_receiver(backend: Backend) -> Option<(TestApp, LogoutReceiver, TestClient)> {
    let receiver = LogoutReceiver::start(StatusCode::OK, None).await;
    let options = AppOptions {
        logout_allowed_hosts: vec![receiver.host_port.clone()],
        ..AppOptions::default()
    };
    let app = TestApp::spawn_with(backend, options).await?;
    app.create_user(LOGIN, PASSWORD).await;
    let mut new = NewClient::named("relying party", Scopes::parse("read").unwrap());
    new.redirect_uris = vec![REDIRECT_URI.to_owned()];
    new.post_logout_redirect_uris = vec![POST_LOGOUT_REDIRECT_URI.to_owned()];
    new.backchannel_logout_uri = Some(receiver.url("/backchannel_logout"));
    let client = app.create_client_with(new).await;
    Some((app, receiver, client))
}

/// What the receiver got, waiting up to five seconds for `count` requests.
async fn received(receiver: &LogoutReceiver, count: usize) -> Vec<Received> {
    for _ in 0..100 {
        let got = receiver.received();
        if got.len() >= count {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    receiver.received()
}

async fn rp_initiated_logout_reaches_the_backchannel(backend: Backend) {
    let Some((app, receiver, client)) = app_with_receiver(backend).await else {
        return;
    };
    let mut browser = Session::new(&app);
    let redirect = browser.decide(&query(&client, &[]), "approve").await;
    let (status, tokens) =
        exchange(&app, &client, &redirect["code"], &[("code_verifier", "")]).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    let (_, id_token) = verify_with_jwks(&app, tokens["id_token"].as_str().unwrap()).await;

    let answer = app
        .http
        .get(app.url("/oauth2/v0/logout"))
        .query(&[
            ("id_token_hint", tokens["id_token"].as_str().unwrap()),
            ("post_logout_redirect_uri", POST_LOGOUT_REDIRECT_URI),
            ("state", &"s".repeat(128)),
        ])
        .header(header::COOKIE, browser.sso_cookie.clone().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), StatusCode::FOUND);
    assert_eq!(
        answer.headers()[header::LOCATION],
        format!("{POST_LOGOUT_REDIRECT_URI}?state={}", "s".repeat(128)),
        "the state back uncorrupted"
    );

    let got = received(&receiver, 1).await;
    assert_eq!(got.len(), 1, "one logout POST: {got:?}");
    assert_eq!(
        got[0].content_type.as_deref(),
        Some("application/x-www-form-urlencoded")
    );
    let client_id = ClientId::parse(&client.id).unwrap();
    let (header, claims) = verified(&app, got[0].logout_token(), client_id).await;
    assert_eq!(header.typ.as_deref(), Some("logout+jwt"));
    assert_eq!(claims["sub"], id_token["sub"]);
    assert_eq!(claims["sid"], id_token["sid"], "the ID token's session");
    assert!(claims.get("nonce").is_none());
    assert!(claims["events"]["http://schemas.openid.net/event/backchannel-logout"].is_object());

    let silent = redirect_query(&browser.open(&query(&client, &[("prompt", "none")])).await);
    assert_eq!(silent["error"], "login_required", "logged out");
}

/// An administrator ending a user's sessions tells the session's clients too.
async fn ending_every_session_tells_the_clients(backend: Backend) {
    let Some((app, receiver, client)) = app_with_receiver(backend).await else {
        return;
    };
    let redirect = Session::new(&app)
        .decide(&query(&client, &[]), "approve")
        .await;
    assert!(redirect.contains_key("code"));
    let user = app
        .store
        .principals()
        .get_user_by_login(&token_domain::Login::parse(LOGIN).unwrap())
        .await
        .unwrap()
        .unwrap();
    let principal: PrincipalId = user.id;
    let ended = sessions::end_all(&app.services, &principal, SessionEndReason::Administrator)
        .await
        .unwrap();
    assert_eq!(ended, 1);
    let got = received(&receiver, 1).await;
    assert_eq!(got.len(), 1, "{got:?}");
}

mod sqlite {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn rp_initiated_logout_reaches_the_backchannel() {
        super::rp_initiated_logout_reaches_the_backchannel(crate::support::app::Backend::Sqlite)
            .await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn ending_every_session_tells_the_clients() {
        super::ending_every_session_tells_the_clients(crate::support::app::Backend::Sqlite).await;
    }
}

mod dynamodb {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
    async fn rp_initiated_logout_reaches_the_backchannel() {
        super::rp_initiated_logout_reaches_the_backchannel(crate::support::app::Backend::DynamoDb)
            .await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
    async fn ending_every_session_tells_the_clients() {
        super::ending_every_session_tells_the_clients(crate::support::app::Backend::DynamoDb).await;
    }
}
