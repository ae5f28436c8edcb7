//! The `__Host-session` cookie is opaque: it names neither the user nor the session, opens its
//! session with no read beyond the session's own, and a changed byte opens nothing. A cookie of
//! the plain form set before sealing (`<principal>.<sid>.<secret>`) still opens its session.

use crate::support::app::TestApp;
use reqwest::{header, StatusCode};
use token_domain::clock::Clock;
use token_domain::{AuthMethod, SessionOrigin, SignInSession};

use super::*;
use crate::authorize::flow::redirect_query;

crate::on_both_stores!(
    the_session_cookie_names_no_user_and_a_changed_one_opens_nothing,
    a_plain_cookie_set_before_sealing_still_opens_its_session,
);

/// `prompt=none` with `cookie`: whether it answered a code (a live session).
async fn opens_a_session(app: &TestApp, client: &TestClient, cookie: &str) -> bool {
    let answer = app
        .http
        .get(app.url("/oauth2/v0/authorize"))
        .query(&query(client, &[("prompt", "none")]))
        .header(header::COOKIE, format!("__Host-session={cookie}"))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), StatusCode::FOUND);
    redirect_query(&answer).contains_key("code")
}

async fn the_session_cookie_names_no_user_and_a_changed_one_opens_nothing(app: TestApp) {
    let user = app.create_user(LOGIN, PASSWORD).await;
    let client = oidc_client(&app, "relying party").await;
    let mut browser = Session::new(&app);
    browser.decide(&query(&client, &[]), "approve").await;
    let pair = browser.sso_cookie.clone().expect("a session cookie");
    let value = pair.strip_prefix("__Host-session=").unwrap().to_owned();
    let session = app
        .store
        .sessions()
        .list_sessions(&user.id, app.clock.now())
        .await
        .unwrap()
        .remove(0);
    for named in [
        user.id.to_string(),
        user.id.as_uuid().simple().to_string(),
        session.sid.to_string(),
        user.login.as_str().to_owned(),
    ] {
        assert!(!value.contains(&named), "{value} names {named}");
    }
    assert!(opens_a_session(&app, &client, &value).await);

    let mut changed = value.clone().into_bytes();
    let middle = changed.len() / 2;
    changed[middle] = if changed[middle] == b'A' { b'B' } else { b'A' };
    let changed = String::from_utf8(changed).unwrap();
    assert!(!opens_a_session(&app, &client, &changed).await, "{changed}");
    assert!(!opens_a_session(&app, &client, "garbage").await);
}

async fn a_plain_cookie_set_before_sealing_still_opens_its_session(app: TestApp) {
    let user = app.create_user(LOGIN, PASSWORD).await;
    let client = oidc_client(&app, "relying party").await;
    // The consent, remembered, so that `prompt=none` may answer a code.
    Session::new(&app)
        .decide(&query(&client, &[]), "approve")
        .await;
    let started = SignInSession::start(
        user.id,
        AuthMethod::PASSWORD,
        SessionOrigin::default(),
        app.services.policy.sessions,
        &token_domain::random::OsRandom,
        app.clock.now(),
    );
    app.store
        .sessions()
        .put_session(&started.session)
        .await
        .unwrap();
    assert!(
        started.cookie.starts_with(&user.id.to_string()),
        "the plain form"
    );
    assert!(opens_a_session(&app, &client, &started.cookie).await);
    let wrong_secret = format!("{}x", &started.cookie[..started.cookie.len() - 1]);
    assert!(!opens_a_session(&app, &client, &wrong_secret).await);
}
