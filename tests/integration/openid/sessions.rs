//! Sign-in sessions (single sign-on): the `__Host-session` cookie, skipping the sign-in and a
//! remembered consent, `prompt=none` / `prompt=login` / `max_age` / `id_token_hint` against a
//! live session, `sid` and `auth_time` in ID tokens, the idle and absolute limits, and logout
//! ending it.

use crate::support::app::TestApp;
use reqwest::{header, StatusCode};
use token_domain::audit::{AuditKind, AuditSubject, SessionEndReason};
use token_domain::clock::Clock;
use token_domain::{AuthMethod, PrincipalId, SessionLimits, SignInSession, UserStatus};

use super::*;
use crate::audit::events_of;
use crate::authorize::flow::{redirect_query, verify_with_jwks};

crate::on_both_stores!(
    a_sign_in_starts_a_session_that_skips_the_pages_next_time,
    prompt_none_answers_from_the_session_or_says_what_is_missing,
    prompt_login_and_max_age_ask_for_the_password_again_in_the_same_session,
    a_hint_naming_another_user_is_not_answered_by_this_browsers_session,
    an_idle_session_ends_and_last_seen_is_written_at_most_once_a_minute,
    a_busy_session_still_ends_at_the_absolute_limit,
    logout_ends_the_browsers_session_and_clears_its_cookie,
    a_session_is_live_only_while_its_user_is,
);

/// The user's live sessions, as stored.
async fn stored_sessions(app: &TestApp, user: PrincipalId) -> Vec<SignInSession> {
    app.store
        .sessions()
        .list_sessions(&user, app.clock.now())
        .await
        .unwrap()
}

/// Signs in and approves in a new browser; returns it (with its session) and the code.
async fn signed_in_browser<'a>(
    app: &'a TestApp,
    client: &TestClient,
    extra: &[(&str, &str)],
) -> (Session<'a>, String) {
    let mut browser = Session::new(app);
    let redirect = browser.decide(&query(client, extra), "approve").await;
    (browser, redirect["code"].clone())
}

async fn id_token_claims(app: &TestApp, client: &TestClient, code: &str) -> serde_json::Value {
    let (status, tokens) = exchange(app, client, code, &[("code_verifier", "")]).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    verify_with_jwks(app, tokens["id_token"].as_str().unwrap())
        .await
        .1
}

async fn a_sign_in_starts_a_session_that_skips_the_pages_next_time(app: TestApp) {
    let user = app.create_user(LOGIN, PASSWORD).await;
    let client = oidc_client(&app, "relying party").await;
    let mut browser = Session::new(&app);
    let signed_in_at = app.clock.now();
    let answer = browser.sign_in_answer(&query(&client, &[]), PASSWORD).await;
    let set_cookies: Vec<&str> = answer
        .headers()
        .get_all(header::SET_COOKIE)
        .iter()
        .map(|value| value.to_str().unwrap())
        .collect();
    let sso_cookie = set_cookies
        .iter()
        .find(|cookie| cookie.starts_with("__Host-session="))
        .expect("the sign-in sets the session cookie");
    for attribute in ["; Path=/;", "; HttpOnly", "; Secure", "; SameSite=Lax"] {
        assert!(sso_cookie.contains(attribute), "{sso_cookie}");
    }
    assert!(!sso_cookie.contains("Domain"), "{sso_cookie}");
    let consent = answer.text().await.unwrap();
    let approved = browser
        .post(&[
            ("csrf_token", &crate::authorize::flow::csrf(&consent)),
            ("decision", "approve"),
        ])
        .await;
    let first = id_token_claims(&app, &client, &redirect_query(&approved)["code"]).await;

    let stored = stored_sessions(&app, user.id).await;
    assert_eq!(stored.len(), 1);
    let value = browser.sso_cookie.as_deref().unwrap();
    let value = value.strip_prefix("__Host-session=").unwrap();
    let plain = app.plain_session_cookie(value).await;
    assert!(
        stored[0].opened_by(&plain),
        "the stored hash is the cookie's"
    );
    let body = serde_json::to_string(&stored[0]).unwrap();
    assert!(
        !body.contains(plain.rsplit('.').next().unwrap()),
        "no secret stored"
    );
    assert_eq!(stored[0].clients, vec![client.id.parse().unwrap()]);
    assert_eq!(first["sid"], stored[0].sid.as_str());
    assert_eq!(first["auth_time"], signed_in_at);
    assert_eq!(
        first["amr"],
        serde_json::json!(["pwd"]),
        "RFC 8176: a password"
    );
    assert_eq!(stored[0].amr, AuthMethod::PASSWORD);

    // The same browser, later: no sign-in page, no consent page, the same session.
    app.clock.advance(300);
    let answer = browser.open(&query(&client, &[])).await;
    let again = id_token_claims(&app, &client, &redirect_query(&answer)["code"]).await;
    assert_eq!(again["sid"], first["sid"]);
    assert_eq!(again["auth_time"], signed_in_at, "no new sign-in");
    assert_eq!(again["amr"], first["amr"], "the session's sign-in methods");
    // Another browser has no session: the sign-in page.
    let elsewhere = Session::new(&app).open(&query(&client, &[])).await;
    assert_eq!(elsewhere.status(), StatusCode::OK);
    // More scopes than were approved: the consent page, without signing in.
    let wider = browser
        .open(&query(&client, &[("scope", "openid read profile")]))
        .await;
    assert_eq!(wider.status(), StatusCode::OK);
    assert!(wider.text().await.unwrap().contains(r#"name="decision""#));
    let kinds: Vec<&str> = events_of(&app, AuditSubject::Principal(user.id))
        .await
        .iter()
        .map(|event| event.kind.name())
        .collect();
    assert!(kinds.contains(&"session.started") && kinds.contains(&"consent.granted"));
}

async fn prompt_none_answers_from_the_session_or_says_what_is_missing(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = oidc_client(&app, "relying party").await;
    let none = [("prompt", "none")];
    let refused = redirect_query(&Session::new(&app).open(&query(&client, &none)).await);
    assert_eq!(refused["error"], "login_required");

    let (mut browser, _) = signed_in_browser(&app, &client, &[]).await;
    let answered = redirect_query(&browser.open(&query(&client, &none)).await);
    assert!(answered.contains_key("code"), "{answered:?}");
    assert_eq!(answered["state"], crate::authorize::flow::STATE);
    let unapproved = query(&client, &[("prompt", "none"), ("scope", "openid profile")]);
    let refused = redirect_query(&browser.open(&unapproved).await);
    assert_eq!(refused["error"], "consent_required");
    assert!(!refused.contains_key("error_code"), "not a catalogue error");
    // Another app the user never approved: the same.
    let other = oidc_client(&app, "another party").await;
    let refused = redirect_query(&browser.open(&query(&other, &none)).await);
    assert_eq!(refused["error"], "consent_required");
}

/// Part 21 (amended): every use of a session reads its user's status, however it changed (here
/// in the store itself, as SCIM or the console would): a disabled or logon-denied user's
/// session answers as ended, on the silent request and on the account page alike.
async fn a_session_is_live_only_while_its_user_is(app: TestApp) {
    let user = app.create_user(LOGIN, PASSWORD).await;
    let client = oidc_client(&app, "relying party").await;
    let none = [("prompt", "none")];
    let (mut browser, _) = signed_in_browser(&app, &client, &[]).await;
    let answered = redirect_query(&browser.open(&query(&client, &none)).await);
    assert!(answered.contains_key("code"), "{answered:?}");
    for status in [UserStatus::Disabled, UserStatus::LogonDenied] {
        let principals = app.store.principals();
        let mut changed = principals.get_user(&user.id).await.unwrap().unwrap();
        changed.status = status;
        principals.put_user(&changed).await.unwrap();
        let refused = redirect_query(&browser.open(&query(&client, &none)).await);
        assert_eq!(
            refused["error"], "login_required",
            "{status:?}: {refused:?}"
        );
        let account = app
            .http
            .get(app.url("/oauth2/v0/account"))
            .header(header::COOKIE, browser.sso_cookie.clone().unwrap())
            .send()
            .await
            .unwrap();
        let page = account.text().await.unwrap();
        assert!(
            page.contains(r#"name="password""#),
            "{status:?}: the sign-in form"
        );
    }
}

async fn prompt_login_and_max_age_ask_for_the_password_again_in_the_same_session(app: TestApp) {
    let user = app.create_user(LOGIN, PASSWORD).await;
    let client = oidc_client(&app, "relying party").await;
    let (mut browser, code) = signed_in_browser(&app, &client, &[]).await;
    let first = id_token_claims(&app, &client, &code).await;
    app.clock.advance(120);

    for extra in [("prompt", "login"), ("max_age", "60"), ("max_age", "0")] {
        let page = browser.open(&query(&client, &[extra])).await;
        assert_eq!(page.status(), StatusCode::OK, "{extra:?}: the sign-in page");
        assert!(page.text().await.unwrap().contains(r#"name="password""#));
        if extra.0 == "max_age" {
            let silent = query(&client, &[extra, ("prompt", "none")]);
            let refused = redirect_query(&browser.open(&silent).await);
            assert_eq!(refused["error"], "login_required", "{extra:?}");
        }
    }
    let recent = browser.open(&query(&client, &[("max_age", "600")])).await;
    assert!(
        redirect_query(&recent).contains_key("code"),
        "within max_age"
    );

    let old_cookie = browser.sso_cookie.clone().unwrap();
    let signed_in_again_at = app.clock.now();
    let redirect = browser
        .decide(&query(&client, &[("prompt", "login")]), "approve")
        .await;
    assert!(redirect.contains_key("code"), "{redirect:?}");
    let again = id_token_claims(&app, &client, &redirect["code"]).await;
    assert_eq!(again["sid"], first["sid"], "the same session");
    assert_eq!(again["auth_time"], signed_in_again_at);
    assert_ne!(
        browser.sso_cookie.as_ref(),
        Some(&old_cookie),
        "a new cookie"
    );
    assert_eq!(stored_sessions(&app, user.id).await.len(), 1);
    // The replaced cookie opens nothing.
    let mut stale = Session::new(&app);
    stale.sso_cookie = Some(old_cookie);
    let refused = redirect_query(&stale.open(&query(&client, &[("prompt", "none")])).await);
    assert_eq!(refused["error"], "login_required");
}

async fn a_hint_naming_another_user_is_not_answered_by_this_browsers_session(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    app.create_user("bob@example.com", PASSWORD).await;
    let client = oidc_client(&app, "relying party").await;
    let (_, bobs) = app
        .password_grant(&client, "bob@example.com", PASSWORD, &[("scope", "openid")])
        .await;
    let (mut browser, code) = signed_in_browser(&app, &client, &[]).await;
    let (_, anns) = exchange(&app, &client, &code, &[("code_verifier", "")]).await;

    let hint_bob = [
        ("prompt", "none"),
        ("id_token_hint", bobs["id_token"].as_str().unwrap()),
    ];
    let refused = redirect_query(&browser.open(&query(&client, &hint_bob)).await);
    assert_eq!(refused["error"], "login_required");
    let hint_ann = [
        ("prompt", "none"),
        ("id_token_hint", anns["id_token"].as_str().unwrap()),
    ];
    let answered = redirect_query(&browser.open(&query(&client, &hint_ann)).await);
    assert!(answered.contains_key("code"), "{answered:?}");
}

async fn an_idle_session_ends_and_last_seen_is_written_at_most_once_a_minute(app: TestApp) {
    let user = app.create_user(LOGIN, PASSWORD).await;
    let client = oidc_client(&app, "relying party").await;
    let (mut browser, _) = signed_in_browser(&app, &client, &[]).await;
    let started = stored_sessions(&app, user.id).await.remove(0);
    let none = query(&client, &[("prompt", "none")]);

    app.clock.advance(30);
    assert!(redirect_query(&browser.open(&none).await).contains_key("code"));
    let read = stored_sessions(&app, user.id).await.remove(0);
    assert_eq!(
        read.last_seen, started.last_seen,
        "not written within the minute"
    );
    app.clock.advance(60);
    assert!(redirect_query(&browser.open(&none).await).contains_key("code"));
    let read = stored_sessions(&app, user.id).await.remove(0);
    assert_eq!(read.last_seen, app.clock.now());
    assert_eq!(
        read.expires_at,
        app.clock.now() + SessionLimits::DEFAULT.idle_seconds
    );

    app.clock.advance(SessionLimits::DEFAULT.idle_seconds + 1);
    let refused = redirect_query(&browser.open(&none).await);
    assert_eq!(refused["error"], "login_required", "idle past the limit");
    assert!(stored_sessions(&app, user.id).await.is_empty());
}

/// Used every few hours, a session never idles out, yet it ends `SESSION_MAX_SECONDS` after the
/// sign-in: its TTL never runs past that, and the browser must sign in again.
async fn a_busy_session_still_ends_at_the_absolute_limit(app: TestApp) {
    let user = app.create_user(LOGIN, PASSWORD).await;
    let client = oidc_client(&app, "relying party").await;
    let (mut browser, _) = signed_in_browser(&app, &client, &[]).await;
    let signed_in_at = app.clock.now();
    let none = query(&client, &[("prompt", "none")]);
    let limits = SessionLimits::DEFAULT;
    let step = limits.idle_seconds - 3_600;

    while app.clock.now() + step < signed_in_at + limits.max_seconds {
        app.clock.advance(step);
        assert!(
            redirect_query(&browser.open(&none).await).contains_key("code"),
            "alive {} s after the sign-in",
            app.clock.now() - signed_in_at
        );
        let stored = stored_sessions(&app, user.id).await.remove(0);
        assert!(stored.expires_at <= signed_in_at + limits.max_seconds);
    }
    app.clock
        .advance(signed_in_at + limits.max_seconds - app.clock.now() + 1);
    let refused = redirect_query(&browser.open(&none).await);
    assert_eq!(
        refused["error"], "login_required",
        "past the absolute limit"
    );
    assert!(stored_sessions(&app, user.id).await.is_empty());
}

async fn logout_ends_the_browsers_session_and_clears_its_cookie(app: TestApp) {
    let user = app.create_user(LOGIN, PASSWORD).await;
    let client = oidc_client(&app, "relying party").await;
    let (mut browser, code) = signed_in_browser(&app, &client, &[]).await;
    let (_, tokens) = exchange(&app, &client, &code, &[("code_verifier", "")]).await;
    let sid = stored_sessions(&app, user.id).await.remove(0).sid;

    let answer = app
        .http
        .get(app.url("/oauth2/v0/logout"))
        .query(&[
            ("id_token_hint", tokens["id_token"].as_str().unwrap()),
            ("post_logout_redirect_uri", POST_LOGOUT_REDIRECT_URI),
        ])
        .header(header::COOKIE, browser.sso_cookie.clone().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), StatusCode::FOUND);
    let cleared = answer.headers()[header::SET_COOKIE].to_str().unwrap();
    assert!(cleared.starts_with("__Host-session=;") && cleared.contains("Max-Age=0"));
    assert!(stored_sessions(&app, user.id).await.is_empty(), "ended");
    let refused = redirect_query(&browser.open(&query(&client, &[("prompt", "none")])).await);
    assert_eq!(refused["error"], "login_required");
    let ended = events_of(&app, AuditSubject::Principal(user.id))
        .await
        .into_iter()
        .find_map(|event| match event.kind {
            AuditKind::SessionEnded { sid, reason } => Some((sid, reason)),
            _ => None,
        });
    assert_eq!(ended, Some((sid, SessionEndReason::Logout)));
}

/// Issue 69.10, part 21: last seen is written at most every tenth of the idle limit (at most a
/// minute), so a session in steady use never idles out, even under a short idle limit.
mod short_idle {
    use super::*;
    use crate::support::app::AppOptions;
    use token_core::config::Policy;

    pub(crate) fn thirty_seconds_idle() -> AppOptions {
        AppOptions {
            policy: Policy {
                sessions: SessionLimits {
                    idle_seconds: 30,
                    max_seconds: 86_400,
                },
                ..Policy::default()
            },
            ..AppOptions::default()
        }
    }

    crate::on_both_stores!(with crate::openid::sessions::short_idle::thirty_seconds_idle();
        a_session_in_steady_use_outlives_a_short_idle_limit);

    async fn a_session_in_steady_use_outlives_a_short_idle_limit(app: TestApp) {
        let user = app.create_user(LOGIN, PASSWORD).await;
        let client = oidc_client(&app, "relying party").await;
        let (mut browser, _) = signed_in_browser(&app, &client, &[]).await;
        let none = query(&client, &[("prompt", "none")]);
        for _ in 0..10 {
            app.clock.advance(20);
            let answered = redirect_query(&browser.open(&none).await);
            assert!(answered.contains_key("code"), "in use: {answered:?}");
        }
        let read = stored_sessions(&app, user.id).await.remove(0);
        assert_eq!(
            read.expires_at,
            app.clock.now() + 30,
            "extended by the last use"
        );
        app.clock.advance(31);
        let refused = redirect_query(&browser.open(&none).await);
        assert_eq!(refused["error"], "login_required", "idle past the limit");
    }
}
