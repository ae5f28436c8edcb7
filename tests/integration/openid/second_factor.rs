//! Authenticator apps from the account page over HTTP on both stores: enrolment (the secret read
//! from the page, codes computed here), a wrong first code, the recovery codes shown once and
//! stored as digests, the secret stored sealed, a replayed code refused, removal with a
//! recovery code, and each step audited.

use crate::support::app::TestApp;
use reqwest::{header, StatusCode};
use token_domain::audit::{AuditKind, AuditSubject};
use token_domain::clock::Clock;
use token_domain::{TotpSecret, RECOVERY_CODE_COUNT};

use super::*;
use crate::audit::events_of;
use crate::authorize::flow::{csrf, exchange, query, redirect_query, verify_with_jwks, Session};

crate::on_both_stores!(
    an_authenticator_app_is_enrolled_and_removed_from_the_account_page,
    a_sign_in_asks_for_the_code_and_wrong_codes_lock_the_login,
    the_account_page_sign_in_asks_for_the_code_too,
);

pub(super) const PATH: &str = "/oauth2/v0/account";

pub(super) async fn post(app: &TestApp, cookie: &str, form: &[(&str, &str)]) -> reqwest::Response {
    app.http
        .post(app.url(PATH))
        .header(header::COOKIE, cookie)
        .form(form)
        .send()
        .await
        .unwrap()
}

/// The value of the page's element or field that follows `marker`, up to `end`.
pub(super) fn between(html: &str, marker: &str, end: char) -> String {
    let start = html
        .find(marker)
        .unwrap_or_else(|| panic!("{marker} in {html}"))
        + marker.len();
    html[start..].split(end).next().unwrap().to_owned()
}

/// A signed-in account page: the session cookie and the page's CSRF token.
async fn signed_in(app: &TestApp) -> (String, String) {
    let (_, answer) = super::account_sign_in(app).await;
    let session = super::set_cookie_pair(&answer, "__Host-session").expect("signed in");
    let overview = app
        .http
        .get(app.url(PATH))
        .header(header::COOKIE, &session)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let token = csrf(&overview);
    (session, token)
}

async fn an_authenticator_app_is_enrolled_and_removed_from_the_account_page(app: TestApp) {
    let user = app.create_user(LOGIN, PASSWORD).await;
    let (session, token) = signed_in(&app).await;
    let page = post(
        &app,
        &session,
        &[("csrf_token", &token), ("action", "totp_start")],
    )
    .await;
    assert_eq!(page.status(), StatusCode::OK);
    let html = page.text().await.unwrap();
    assert!(html.contains("<svg"), "the QR code");
    let typed = between(&html, r#"<code id="totp-secret">"#, '<');
    let secret = TotpSecret::from_base32(&typed).expect("a base32 key");
    let sealed = between(&html, r#"name="enrolment" value=""#, '"');
    let factors = app.store.second_factors();
    assert_eq!(
        factors.get_totp_factor(&user.id).await.unwrap(),
        None,
        "nothing stored yet"
    );

    let now = app.clock.now();
    let right = secret.code_at(now);
    let wrong = format!("{:06}", (right.parse::<u32>().unwrap() + 1) % 1_000_000);
    let confirm = |code: String, sealed: String| {
        let (app, session, token) = (&app, session.clone(), token.clone());
        async move {
            let form = [
                ("csrf_token", token.as_str()),
                ("action", "totp_confirm"),
                ("enrolment", sealed.as_str()),
                ("code", code.as_str()),
            ];
            post(app, &session, &form).await
        }
    };
    let again = confirm(wrong, sealed.clone()).await.text().await.unwrap();
    assert!(again.contains("That code was not right"), "{again}");
    assert_eq!(factors.get_totp_factor(&user.id).await.unwrap(), None);
    let forged = confirm(right.clone(), format!("{sealed}x")).await;
    assert_eq!(
        forged.status(),
        StatusCode::SEE_OTHER,
        "not a sealed enrolment"
    );
    assert_eq!(factors.get_totp_factor(&user.id).await.unwrap(), None);

    let done = confirm(right.clone(), sealed).await;
    assert_eq!(done.status(), StatusCode::OK);
    let html = done.text().await.unwrap();
    let codes: Vec<String> = html
        .split("<li><code>")
        .skip(1)
        .map(|rest| rest.split('<').next().unwrap().to_owned())
        .collect();
    assert_eq!(codes.len(), RECOVERY_CODE_COUNT, "{html}");
    let stored = factors
        .get_totp_factor(&user.id)
        .await
        .unwrap()
        .expect("enrolled");
    assert_eq!(
        stored.last_used_step,
        now / 30,
        "the confirming code's step is used"
    );
    assert_eq!(stored.recovery_codes.len(), RECOVERY_CODE_COUNT);
    let body = serde_json::to_string(&stored).unwrap();
    assert!(!body.contains(&typed), "the secret is sealed");
    assert!(!body.contains(&codes[0]), "recovery codes are digests");

    // Removing it takes a sign-in with it (`factor_changes` covers the sign-in again).
    let renewed = super::factor_changes::signed_in_with_code(&app, &secret).await;
    let overview = app
        .http
        .get(app.url(PATH))
        .header(header::COOKIE, &renewed)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(overview.contains("Remove the authenticator app"));
    let (session, token) = (renewed, csrf(&overview));
    let remove = |code: String| {
        let (app, session, token) = (&app, session.clone(), token.clone());
        async move {
            let form = [
                ("csrf_token", token.as_str()),
                ("action", "totp_remove"),
                ("code", code.as_str()),
            ];
            post(app, &session, &form).await
        }
    };
    let replayed = remove(right).await;
    assert_eq!(
        replayed.status(),
        StatusCode::BAD_REQUEST,
        "a code is good once"
    );
    assert!(factors.get_totp_factor(&user.id).await.unwrap().is_some());
    let removed = remove(codes[3].to_uppercase()).await;
    assert_eq!(removed.status(), StatusCode::SEE_OTHER);
    assert_eq!(factors.get_totp_factor(&user.id).await.unwrap(), None);

    let kinds: Vec<AuditKind> = events_of(&app, AuditSubject::Principal(user.id))
        .await
        .into_iter()
        .map(|event| event.kind)
        .filter(|kind| kind.name().starts_with("second_factor."))
        .collect();
    assert_eq!(
        kinds,
        [
            AuditKind::SecondFactorRemoved,
            AuditKind::SecondFactorFailed,
            AuditKind::SecondFactorEnrolled,
        ],
        "newest first"
    );
}

/// Enrols `LOGIN` from the account page: the secret (as the test's app would hold it) and the
/// recovery codes.
pub(crate) async fn enrolled(app: &TestApp) -> (TotpSecret, Vec<String>) {
    let (session, token) = signed_in(app).await;
    let form = [("csrf_token", token.as_str()), ("action", "totp_start")];
    let html = post(app, &session, &form).await.text().await.unwrap();
    let secret =
        TotpSecret::from_base32(&between(&html, r#"<code id="totp-secret">"#, '<')).unwrap();
    let sealed = between(&html, r#"name="enrolment" value=""#, '"');
    let code = secret.code_at(app.clock.now());
    let form = [
        ("csrf_token", token.as_str()),
        ("action", "totp_confirm"),
        ("enrolment", sealed.as_str()),
        ("code", code.as_str()),
    ];
    let html = post(app, &session, &form).await.text().await.unwrap();
    let codes = html
        .split("<li><code>")
        .skip(1)
        .map(|rest| rest.split('<').next().unwrap().to_owned())
        .collect();
    (secret, codes)
}

/// The code page's answer to `code`, in `browser` (signed in with the password).
async fn typed(browser: &mut Session<'_>, page: &str, code: &str) -> reqwest::Response {
    let token = csrf(page);
    browser
        .post(&[("csrf_token", &token), ("code", code)])
        .await
}

pub(super) fn session_cookie(response: &reqwest::Response) -> bool {
    response
        .headers()
        .get_all(header::SET_COOKIE)
        .iter()
        .any(|value| value.to_str().unwrap().starts_with("__Host-session="))
}

async fn a_sign_in_asks_for_the_code_and_wrong_codes_lock_the_login(app: TestApp) {
    let user = app.create_user(LOGIN, PASSWORD).await;
    let (secret, codes) = enrolled(&app).await;
    let client = oidc_client(&app, "relying party").await;

    let mut browser = Session::new(&app);
    let answer = browser.sign_in_answer(&query(&client, &[]), PASSWORD).await;
    assert!(!session_cookie(&answer), "no session before the code");
    let page = answer.text().await.unwrap();
    assert!(page.contains("One more step"), "{page}");
    app.clock.advance(30);
    let answer = typed(&mut browser, &page, &secret.code_at(app.clock.now())).await;
    assert!(session_cookie(&answer), "the session starts with the code");
    let consent = answer.text().await.unwrap();
    let approved = browser
        .post(&[("csrf_token", &csrf(&consent)), ("decision", "approve")])
        .await;
    let code = redirect_query(&approved)["code"].clone();
    let (status, tokens) = exchange(&app, &client, &code, &[("code_verifier", "")]).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    let claims = verify_with_jwks(&app, tokens["id_token"].as_str().unwrap())
        .await
        .1;
    assert_eq!(claims["amr"], serde_json::json!(["pwd", "otp", "mfa"]));
    // The access token says the same (RFC 9068 §2.2.1), for resource servers.
    let access = app
        .claims_of(tokens["access_token"].as_str().unwrap())
        .await;
    assert_eq!(access.amr, token_domain::AuthMethod::PASSWORD_AND_CODE);
    assert_eq!(access.auth_time, claims["auth_time"].as_i64());

    // A recovery code signs in once (the consent is remembered: straight to the code).
    let mut other = Session::new(&app);
    let page = other.sign_in_answer(&query(&client, &[]), PASSWORD).await;
    let page = page.text().await.unwrap();
    let answer = typed(&mut other, &page, &codes[0]).await;
    assert_eq!(
        answer.status(),
        StatusCode::FOUND,
        "signed in with a recovery code"
    );
    let mut third = Session::new(&app);
    let page = third.sign_in_answer(&query(&client, &[]), PASSWORD).await;
    let mut page = page.text().await.unwrap();
    let answer = typed(&mut third, &page, &codes[0]).await;
    assert_eq!(answer.status(), StatusCode::OK);
    page = answer.text().await.unwrap();
    assert!(
        page.contains("That code was not right"),
        "a used recovery code: {page}"
    );

    // Wrong codes count toward the login's lockout: five in all lock it.
    for _ in 0..3 {
        let answer = typed(&mut third, &page, "000000x").await;
        page = answer.text().await.unwrap();
        assert!(page.contains("That code was not right"), "{page}");
    }
    let answer = typed(&mut third, &page, "zzzzz-zzzzz").await;
    let locked = answer.text().await.unwrap();
    assert!(locked.contains("This account is locked"), "{locked}");
    let mut fourth = Session::new(&app);
    let page = fourth.sign_in_answer(&query(&client, &[]), PASSWORD).await;
    let page = page.text().await.unwrap();
    assert!(
        page.contains("This account is locked"),
        "the right password too: {page}"
    );
    let failures = events_of(&app, AuditSubject::Principal(user.id))
        .await
        .into_iter()
        .filter(|event| event.kind == AuditKind::SecondFactorFailed)
        .count();
    assert_eq!(failures, 5);
}

async fn the_account_page_sign_in_asks_for_the_code_too(app: TestApp) {
    let user = app.create_user(LOGIN, PASSWORD).await;
    let (secret, _) = enrolled(&app).await;
    let (nonce, answer) = super::account_sign_in(&app).await;
    assert_eq!(answer.status(), StatusCode::OK);
    assert!(!session_cookie(&answer), "no session before the code");
    let html = answer.text().await.unwrap();
    let pending = between(&html, r#"name="pending" value=""#, '"');
    let token = csrf(&html);
    let with_code = |code: String, pending: String| {
        let (app, nonce, token) = (&app, nonce.clone(), token.clone());
        async move {
            let form = [
                ("csrf_token", token.as_str()),
                ("action", "sign_in_code"),
                ("pending", pending.as_str()),
                ("code", code.as_str()),
            ];
            post(app, &nonce, &form).await
        }
    };
    app.clock.advance(30);
    let code = secret.code_at(app.clock.now());
    let forged = with_code(code.clone(), format!("{pending}x")).await;
    assert!(!session_cookie(&forged), "a forged password step");
    let answer = with_code(code, pending).await;
    assert_eq!(answer.status(), StatusCode::SEE_OTHER);
    assert!(session_cookie(&answer));
    let sessions = app
        .store
        .sessions()
        .list_sessions(&user.id, app.clock.now())
        .await
        .unwrap();
    let newest = sessions.iter().max_by_key(|s| s.started_at).unwrap();
    assert_eq!(newest.amr, token_domain::AuthMethod::PASSWORD_AND_CODE);
}

/// A session write that fails after the code was accepted (a 503) gives the code's step back,
/// so the user's retry with the same code signs in; without that, the retry would be refused as
/// a replay. DynamoDB only: the proxy refuses the session's `PutItem` alone, after the step's
/// `UpdateItem` landed (an SQLite lock would stop the step's write too).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn a_code_accepted_before_a_failed_session_write_signs_in_on_retry() {
    use crate::store_unavailable::{FaultyApp, Outage};
    use crate::support::ddb_proxy::Fault;
    let Some(app) = FaultyApp::dynamodb(Outage::WritesRefused).await else {
        return;
    };
    let user = app.create_user(LOGIN, PASSWORD).await;
    let (secret, _) = enrolled(&app).await;
    let client = oidc_client(&app, "relying party").await;
    let mut browser = Session::new(&app);
    let answer = browser.sign_in_answer(&query(&client, &[]), PASSWORD).await;
    let page = answer.text().await.unwrap();
    app.clock.advance(30);
    let code = secret.code_at(app.clock.now());

    app.proxy()
        .inject(Fault::RefuseConnections.only_for("PutItem"));
    let failed = typed(&mut browser, &page, &code).await;
    app.proxy().clear_fault();
    assert_eq!(failed.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(!session_cookie(&failed));
    let factor = app
        .store
        .second_factors()
        .get_totp_factor(&user.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        factor.last_used_step,
        app.clock.now() / 30 - 1,
        "the step is given back: the enrolment's is the last used"
    );

    let answer = typed(&mut browser, &page, &code).await;
    assert!(session_cookie(&answer), "the same code signs in");
    let replay = typed(&mut Session::new(&app), &page, &code).await;
    assert!(!session_cookie(&replay), "and is then spent");
}

/// The same on the account page's own sign-in: the code's step is given back when the session
/// cannot be written, and the same code then signs in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn the_account_pages_code_accepted_before_a_failed_session_write_signs_in_on_retry() {
    use crate::store_unavailable::{FaultyApp, Outage};
    use crate::support::ddb_proxy::Fault;
    let Some(app) = FaultyApp::dynamodb(Outage::WritesRefused).await else {
        return;
    };
    app.create_user(LOGIN, PASSWORD).await;
    let (secret, _) = enrolled(&app).await;
    let (nonce, answer) = super::account_sign_in(&app).await;
    let html = answer.text().await.unwrap();
    let pending = between(&html, r#"name="pending" value=""#, '"');
    let token = csrf(&html);
    app.clock.advance(30);
    let code = secret.code_at(app.clock.now());
    let form = [
        ("csrf_token", token.as_str()),
        ("action", "sign_in_code"),
        ("pending", pending.as_str()),
        ("code", code.as_str()),
    ];

    app.proxy()
        .inject(Fault::RefuseConnections.only_for("PutItem"));
    let failed = post(&app, &nonce, &form).await;
    app.proxy().clear_fault();
    assert_eq!(failed.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(!session_cookie(&failed));
    let answer = post(&app, &nonce, &form).await;
    assert_eq!(answer.status(), StatusCode::SEE_OTHER);
    assert!(session_cookie(&answer), "the same code signs in");
}
