//! Changing how a user signs in needs a fresh sign-in with every factor they have: a session
//! alone (a password sign-in once an authenticator app exists, or one over 10 minutes old)
//! neither removes nor adds a factor, and the page asks for a sign-in again, which renews the
//! same session. Each factor added or removed is mailed to the user (a real SMTP server on
//! loopback). Both stores.

use crate::support::app::TestApp;
use crate::support::smtp_server::{ReceivedMail, SmtpServer};
use reqwest::{header, StatusCode};
use token_core::flows::account::{FRESH_SIGN_IN_SECONDS, SIGN_IN_AGAIN};
use token_domain::clock::Clock;
use token_domain::{PrincipalId, TotpSecret};

use super::second_factor::{between, post, PATH};
use super::*;
use crate::authorize::flow::csrf;

crate::on_both_stores!(a_factor_change_needs_a_fresh_sign_in_with_every_factor_and_is_mailed,);

const ADDRESS: &str = "ann@example.com";
const LOCKED: &str = "Sign in again to change how you sign in";

async fn overview(app: &TestApp, session: &str) -> String {
    let page = app
        .http
        .get(app.url(PATH))
        .header(header::COOKIE, session)
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    page.text().await.unwrap()
}

/// [`post`] of a form whose values are owned.
async fn send(app: &TestApp, cookie: &str, form: &[(&str, String)]) -> reqwest::Response {
    let fields: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
    post(app, cookie, &fields).await
}

fn subjects(mails: &[ReceivedMail]) -> Vec<String> {
    mails
        .iter()
        .map(|mail| mail.header("Subject").unwrap_or_default())
        .collect()
}

/// Enrols an authenticator app from a fresh session; its secret.
async fn enrol(app: &TestApp, session: &str, token: &str) -> TotpSecret {
    let html = post(
        app,
        session,
        &[("csrf_token", token), ("action", "totp_start")],
    )
    .await
    .text()
    .await
    .unwrap();
    let secret =
        TotpSecret::from_base32(&between(&html, r#"<code id="totp-secret">"#, '<')).unwrap();
    let sealed = between(&html, r#"name="enrolment" value=""#, '"');
    let code = secret.code_at(app.clock.now());
    let form = [
        ("csrf_token", token),
        ("action", "totp_confirm"),
        ("enrolment", sealed.as_str()),
        ("code", code.as_str()),
    ];
    let done = post(app, session, &form).await.text().await.unwrap();
    assert!(done.contains("<li><code>"), "the recovery codes: {done}");
    secret
}

/// The sign-in again the page asks for: its form (from `asked`, with its nonce cookie), the
/// password, then the code. The renewed session's cookie pair.
async fn sign_in_again(
    app: &TestApp,
    session: &str,
    asked: reqwest::Response,
    secret: &TotpSecret,
) -> String {
    let nonce = set_cookie_pair(&asked, "account_sign_in").expect("a sign-in nonce");
    let page = asked.text().await.unwrap();
    assert!(page.contains(SIGN_IN_AGAIN), "{page}");
    assert!(
        page.contains(&format!(r#"value="{LOGIN}""#)),
        "the login filled in: {page}"
    );
    let cookies = format!("{session}; {nonce}");
    let form = [
        ("csrf_token", csrf(&page)),
        ("action", "sign_in".to_owned()),
        ("login", LOGIN.to_owned()),
        ("password", PASSWORD.to_owned()),
    ];
    let code_page = send(app, &cookies, &form).await.text().await.unwrap();
    typed_code(app, &cookies, &code_page, secret).await
}

/// A new browser signed in on the account page with the password and a code of `secret`'s
/// (a later step than any used): its session's cookie pair.
pub(super) async fn signed_in_with_code(app: &TestApp, secret: &TotpSecret) -> String {
    let (nonce, answer) = super::account_sign_in(app).await;
    let code_page = answer.text().await.unwrap();
    typed_code(app, &nonce, &code_page, secret).await
}

/// The code page's form posted with a code of a later step: the session's cookie pair.
async fn typed_code(app: &TestApp, cookies: &str, code_page: &str, secret: &TotpSecret) -> String {
    assert!(code_page.contains("One more step"), "{code_page}");
    app.clock.advance(30);
    let form = [
        ("csrf_token", csrf(code_page)),
        ("action", "sign_in_code".to_owned()),
        (
            "pending",
            between(code_page, r#"name="pending" value=""#, '"'),
        ),
        ("code", secret.code_at(app.clock.now())),
    ];
    let signed_in = send(app, cookies, &form).await;
    assert_eq!(signed_in.status(), StatusCode::SEE_OTHER);
    set_cookie_pair(&signed_in, "__Host-session").expect("the session's cookie")
}

async fn stored_sids(app: &TestApp, user: PrincipalId) -> Vec<String> {
    app.store
        .sessions()
        .list_sessions(&user, app.clock.now())
        .await
        .unwrap()
        .into_iter()
        .map(|session| session.sid.to_string())
        .collect()
}

async fn a_factor_change_needs_a_fresh_sign_in_with_every_factor_and_is_mailed(base: TestApp) {
    let (app, server): (TestApp, SmtpServer) = crate::otp::smtp_app(base).await;
    let user = app
        .create_user_with(LOGIN, PASSWORD, |new| new.email = Some(ADDRESS.to_owned()))
        .await;
    let (_, answer) = super::account_sign_in(&app).await;
    let session = set_cookie_pair(&answer, "__Host-session").expect("signed in");
    let page = overview(&app, &session).await;
    assert!(
        !page.contains(LOCKED),
        "a fresh password sign-in, no factor yet: {page}"
    );

    // Enrolled (a fresh session of a user without a factor may), and mailed.
    let secret = enrol(&app, &session, &csrf(&page)).await;
    let mails = server.wait_for(1).await;
    assert_eq!(mails[0].header("To").as_deref(), Some(ADDRESS));
    assert_eq!(
        subjects(&mails),
        ["A sign-in method was added to your account"]
    );
    let text = mails[0].part("text/plain").unwrap();
    assert!(text.contains("An authenticator app was set up"), "{text}");
    assert!(!text.contains(&secret.base32()), "no secret in the mail");

    // Now the session's password alone is not every factor: removing the app asks again.
    let page = overview(&app, &session).await;
    assert!(page.contains(LOCKED), "{page}");
    assert!(!page.contains("Remove the authenticator app"), "{page}");
    let factors = app.store.second_factors();
    let form = [
        ("csrf_token", csrf(&page)),
        ("action", "totp_remove".to_owned()),
        ("code", secret.code_at(app.clock.now())),
    ];
    let asked = send(&app, &session, &form).await;
    assert_eq!(asked.status(), StatusCode::OK);
    assert!(
        factors.get_totp_factor(&user.id).await.unwrap().is_some(),
        "a session alone removes nothing"
    );
    // Nor does the passkey options endpoint start an addition.
    let options = app
        .http
        .post(app.url("/oauth2/v0/account/passkeys/options"))
        .header(header::COOKIE, &session)
        .form(&[("csrf_token", csrf(&page))])
        .send()
        .await
        .unwrap();
    assert_eq!(options.status(), StatusCode::BAD_REQUEST);
    assert!(options.text().await.unwrap().contains("sign in again"));

    // Signed in again with both factors: the same session (same sid), a new cookie.
    let sids = stored_sids(&app, user.id).await;
    let renewed = sign_in_again(&app, &session, asked, &secret).await;
    assert_ne!(renewed, session);
    assert_eq!(stored_sids(&app, user.id).await, sids, "the same session");
    let page = overview(&app, &renewed).await;
    assert!(page.contains("Remove the authenticator app"), "{page}");

    // Fresh for ten minutes only.
    app.clock.advance(FRESH_SIGN_IN_SECONDS + 1);
    let stale = overview(&app, &renewed).await;
    assert!(stale.contains(LOCKED), "{stale}");
    let asked = post(
        &app,
        &renewed,
        &[
            ("csrf_token", csrf(&stale).as_str()),
            ("action", "reauthenticate"),
        ],
    )
    .await;
    let renewed = sign_in_again(&app, &renewed, asked, &secret).await;
    let page = overview(&app, &renewed).await;
    app.clock.advance(30);
    let form = [
        ("csrf_token", csrf(&page)),
        ("action", "totp_remove".to_owned()),
        ("code", secret.code_at(app.clock.now())),
    ];
    let removed = send(&app, &renewed, &form).await;
    assert_eq!(removed.status(), StatusCode::SEE_OTHER);
    assert_eq!(factors.get_totp_factor(&user.id).await.unwrap(), None);
    let mails = server.wait_for(2).await;
    assert_eq!(
        subjects(&mails),
        [
            "A sign-in method was added to your account",
            "A sign-in method was removed from your account"
        ]
    );
    assert!(mails[1]
        .part("text/plain")
        .unwrap()
        .contains("Your authenticator app was removed"));
}
