//! The account page over HTTP on both stores: its own sign-in (CSRF bound to a nonce cookie),
//! forms refused without their token, signing out another session, connected apps (any live
//! family, not only remembered consents) disconnected, signing out everywhere, and each action
//! audited.

use crate::support::app::TestApp;
use reqwest::{header, StatusCode};
use token_domain::audit::{AuditKind, AuditSubject, SessionEndReason};
use token_domain::clock::Clock;

use super::*;
use crate::audit::events_of;
use crate::authorize::flow::csrf;

crate::on_both_stores!(
    the_account_page_signs_in_and_ends_another_session,
    an_app_holding_tokens_without_consent_is_listed_and_disconnected,
    sign_out_everywhere_ends_every_session_of_the_user,
);

const PATH: &str = "/oauth2/v0/account";

use super::set_cookie_pair as set_cookie;

async fn get(app: &TestApp, cookie: Option<&str>) -> reqwest::Response {
    let mut request = app.http.get(app.url(PATH));
    if let Some(cookie) = cookie {
        request = request.header(header::COOKIE, cookie);
    }
    request.send().await.unwrap()
}

async fn post(app: &TestApp, cookie: &str, form: &[(&str, &str)]) -> reqwest::Response {
    app.http
        .post(app.url(PATH))
        .header(header::COOKIE, cookie)
        .form(form)
        .send()
        .await
        .unwrap()
}

async fn the_account_page_signs_in_and_ends_another_session(app: TestApp) {
    let user = app.create_user(LOGIN, PASSWORD).await;
    let page = get(&app, None).await;
    assert_eq!(page.status(), StatusCode::OK);
    let nonce = set_cookie(&page, "account_sign_in").expect("the sign-in nonce cookie");
    let html = page.text().await.unwrap();
    assert!(html.contains(r#"name="password""#), "the sign-in form");
    let token = csrf(&html);
    let sign_in = |token: String| {
        let nonce = nonce.clone();
        let app = &app;
        async move {
            let form = [
                ("csrf_token", token.as_str()),
                ("action", "sign_in"),
                ("login", LOGIN),
                ("password", PASSWORD),
            ];
            post(app, &nonce, &form).await
        }
    };
    let forged = sign_in("forged".into()).await;
    assert_eq!(forged.status(), StatusCode::BAD_REQUEST);
    let signed_in = sign_in(token.clone()).await;
    assert_eq!(signed_in.status(), StatusCode::SEE_OTHER);
    assert_eq!(signed_in.headers()[header::LOCATION], PATH);
    let first = set_cookie(&signed_in, "__Host-session").expect("a session cookie");
    let second = set_cookie(&sign_in(token).await, "__Host-session").unwrap();

    let overview = get(&app, Some(&first)).await.text().await.unwrap();
    assert!(overview.contains("Your account") && overview.contains("This browser"));
    let sessions = app
        .store
        .sessions()
        .list_sessions(&user.id, app.clock.now())
        .await
        .unwrap();
    assert_eq!(sessions.len(), 2);
    let second_plain = app
        .plain_session_cookie(second.strip_prefix("__Host-session=").unwrap())
        .await;
    let other = sessions
        .iter()
        .find(|s| s.opened_by(&second_plain))
        .unwrap()
        .sid
        .to_string();
    let token = csrf(&overview);
    let refused = post(&app, &first, &[("action", "sign_out"), ("sid", &other)]).await;
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST, "no CSRF token");
    let ended = post(
        &app,
        &first,
        &[
            ("csrf_token", &token),
            ("action", "sign_out"),
            ("sid", &other),
        ],
    )
    .await;
    assert_eq!(ended.status(), StatusCode::SEE_OTHER);
    let left = app
        .store
        .sessions()
        .list_sessions(&user.id, app.clock.now())
        .await
        .unwrap();
    assert_eq!(left.len(), 1, "the other session ended, this one lives");
    let page = get(&app, Some(&second)).await.text().await.unwrap();
    assert!(
        page.contains(r#"name="password""#),
        "the ended session's browser signs in again"
    );
    let reasons: Vec<SessionEndReason> = events_of(&app, AuditSubject::Principal(user.id))
        .await
        .into_iter()
        .filter_map(|event| match event.kind {
            AuditKind::SessionEnded { reason, .. } => Some(reason),
            _ => None,
        })
        .collect();
    assert_eq!(reasons, vec![SessionEndReason::SignedOut]);
}

/// Signs `LOGIN` in on the account page's own form; returns the session cookie pair.
async fn signed_in(app: &TestApp) -> String {
    let page = get(app, None).await;
    let nonce = set_cookie(&page, "account_sign_in").expect("the sign-in nonce cookie");
    let token = csrf(&page.text().await.unwrap());
    let form = [
        ("csrf_token", token.as_str()),
        ("action", "sign_in"),
        ("login", LOGIN),
        ("password", PASSWORD),
    ];
    let signed_in = post(app, &nonce, &form).await;
    assert_eq!(signed_in.status(), StatusCode::SEE_OTHER);
    set_cookie(&signed_in, "__Host-session").expect("a session cookie")
}

/// An app that got its tokens by the password grant never showed a consent page, yet holds a
/// live family: it is connected, and disconnecting it revokes that family.
async fn an_app_holding_tokens_without_consent_is_listed_and_disconnected(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = app.create_client("read").await;
    let name = app
        .store
        .clients()
        .get_client(&token_domain::ClientId::parse(&client.id).unwrap())
        .await
        .unwrap()
        .expect("the client")
        .name;
    let tokens = app.user_tokens(&client, LOGIN, PASSWORD).await;
    let session = signed_in(&app).await;

    let overview = get(&app, Some(&session)).await.text().await.unwrap();
    assert!(
        overview.contains(&format!(r#"name="client_id" value="{}""#, client.id)),
        "the password-grant app is listed: {overview}"
    );
    assert!(overview.contains(&name), "by its name: {overview}");
    let disconnected = post(
        &app,
        &session,
        &[
            ("csrf_token", &csrf(&overview)),
            ("action", "disconnect"),
            ("client_id", &client.id),
        ],
    )
    .await;
    assert_eq!(disconnected.status(), StatusCode::SEE_OTHER);
    let (status, body) = app
        .refresh(&client, tokens["refresh_token"].as_str().unwrap())
        .await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "the family is revoked: {body}"
    );
    let overview = get(&app, Some(&session)).await.text().await.unwrap();
    assert!(
        overview.contains("No application has access to your account."),
        "nothing is connected any more: {overview}"
    );
}

/// Each session is listed with where and when it signed in; "sign out everywhere" ends them
/// all, the other browser's too, and records why.
async fn sign_out_everywhere_ends_every_session_of_the_user(app: TestApp) {
    let user = app.create_user(LOGIN, PASSWORD).await;
    let here = signed_in(&app).await;
    let elsewhere = signed_in(&app).await;

    let overview = get(&app, Some(&here)).await.text().await.unwrap();
    assert_eq!(
        overview.matches("From 127.0.0.1 · signed in ").count(),
        2,
        "both sessions with their source address: {overview}"
    );
    assert!(overview.contains("last seen"), "{overview}");
    let ended = post(
        &app,
        &here,
        &[
            ("csrf_token", &csrf(&overview)),
            ("action", "sign_out_everywhere"),
        ],
    )
    .await;
    assert!(ended.status().is_redirection() || ended.status() == StatusCode::OK);
    let left = app
        .store
        .sessions()
        .list_sessions(&user.id, app.clock.now())
        .await
        .unwrap();
    assert!(left.is_empty(), "no session lives: {left:?}");
    for cookie in [&here, &elsewhere] {
        let page = get(&app, Some(cookie)).await.text().await.unwrap();
        assert!(page.contains(r#"name="password""#), "signed out: {page}");
    }
    let reasons: Vec<SessionEndReason> = events_of(&app, AuditSubject::Principal(user.id))
        .await
        .into_iter()
        .filter_map(|event| match event.kind {
            AuditKind::SessionEnded { reason, .. } => Some(reason),
            _ => None,
        })
        .collect();
    assert_eq!(
        reasons,
        vec![SessionEndReason::SignedOutEverywhere; 2],
        "one event per ended session"
    );
}
