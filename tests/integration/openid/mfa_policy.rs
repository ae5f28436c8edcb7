//! A company that requires a second factor (`tokenctl companies set-mfa`), over HTTP on both
//! stores: the password grant refused with 403 `access_denied` 180 for its users (an optional
//! company's users still get tokens), its users without an authenticator app enrolled right after
//! the password on the authorize and account pages (the QR code and the key, a first code, the
//! recovery codes, and only then the session, `amr` `pwd otp mfa`), then asked for the code, and
//! the device page sending them to the account page.

use crate::support::app::TestApp;
use reqwest::{header, StatusCode};
use token_core::admin;
use token_domain::audit::{AuditKind, AuditSubject};
use token_domain::clock::Clock;
use token_domain::{AuthMethod, Company, MfaPolicy, TotpSecret, User, RECOVERY_CODE_COUNT};

use super::*;
use crate::audit::events_of;
use crate::authorize::flow::{csrf, exchange, redirect_query, verify_with_jwks};

crate::on_both_stores!(
    the_password_grant_is_refused_180_while_the_company_requires_a_second_factor,
    a_required_companys_user_enrols_on_the_sign_in_page_then_signs_in_with_a_code,
    a_required_companys_user_enrols_on_the_account_pages_sign_in,
);

const ACCOUNT: &str = "/oauth2/v0/account";

/// A company, `LOGIN` one of its users, and the company's policy set to `policy`.
async fn company_user(app: &TestApp, policy: MfaPolicy) -> (Company, User) {
    let company = app.create_company("Acme").await;
    let user = app
        .create_user_with(LOGIN, PASSWORD, |new| new.company_id = Some(company.id))
        .await;
    set_mfa(app, &company, policy).await;
    (company, user)
}

async fn set_mfa(app: &TestApp, company: &Company, policy: MfaPolicy) {
    let set = admin::set_company_mfa(app.ctx(), &company.id, policy)
        .await
        .unwrap();
    assert_eq!(set.mfa_policy, policy);
}

async fn password_grant(app: &TestApp, client: &TestClient, password: &str) -> (StatusCode, Value) {
    app.token(&[
        ("grant_type", "password"),
        ("client_id", &client.id),
        ("client_secret", &client.secret),
        ("username", LOGIN),
        ("password", password),
        ("scope", "read"),
    ])
    .await
}

/// The value of the page's element or field that follows `marker`, up to `end`.
fn between(html: &str, marker: &str, end: char) -> String {
    let start = html
        .find(marker)
        .unwrap_or_else(|| panic!("{marker} in {html}"))
        + marker.len();
    html[start..].split(end).next().unwrap().to_owned()
}

fn recovery_codes_in(html: &str) -> Vec<String> {
    html.split("<li><code>")
        .skip(1)
        .map(|rest| rest.split('<').next().unwrap().to_owned())
        .collect()
}

fn starts_session(response: &reqwest::Response) -> Option<String> {
    response
        .headers()
        .get_all(header::SET_COOKIE)
        .iter()
        .map(|value| {
            value
                .to_str()
                .unwrap()
                .split(';')
                .next()
                .unwrap()
                .to_owned()
        })
        .find(|pair| pair.starts_with("__Host-session=") && pair != "__Host-session=")
}

async fn the_password_grant_is_refused_180_while_the_company_requires_a_second_factor(
    app: TestApp,
) {
    let client = oidc_client(&app, "partner").await;
    let (company, user) = company_user(&app, MfaPolicy::Optional).await;
    let (status, tokens) = password_grant(&app, &client, PASSWORD).await;
    assert_eq!(status, StatusCode::OK, "an optional company: {tokens}");

    set_mfa(&app, &company, MfaPolicy::Required).await;
    let (status, body) = password_grant(&app, &client, PASSWORD).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"], "access_denied");
    assert_eq!(body["code"], 180);
    assert_eq!(body["error_description"], "a second factor is required");
    let (status, body) = password_grant(&app, &client, "wrong").await;
    assert_eq!(
        (status, body["code"].clone()),
        (StatusCode::BAD_REQUEST, serde_json::json!(5)),
        "a wrong password learns nothing of the policy"
    );
    // Refused after a correct password, the attempt is taken back: five refusals lock nothing.
    for _ in 0..5 {
        assert_eq!(password_grant(&app, &client, PASSWORD).await.1["code"], 180);
    }
    let outsider = app.create_user("bob@example.com", PASSWORD).await;
    let (status, _) = app
        .token(&[
            ("grant_type", "password"),
            ("client_id", &client.id),
            ("client_secret", &client.secret),
            ("username", outsider.login.as_str()),
            ("password", PASSWORD),
        ])
        .await;
    assert_eq!(status, StatusCode::OK, "a user of no company");

    set_mfa(&app, &company, MfaPolicy::Optional).await;
    let (status, tokens) = password_grant(&app, &client, PASSWORD).await;
    assert_eq!(status, StatusCode::OK, "optional again: {tokens}");
    let events = events_of(&app, AuditSubject::Principal(company.id)).await;
    let policies: Vec<&AuditKind> = events
        .iter()
        .map(|event| &event.kind)
        .filter(|kind| matches!(kind, AuditKind::CompanyMfaSet { .. }))
        .collect();
    assert_eq!(policies.len(), 3, "each set-mfa audited: {events:?}");
    assert!(events_of(&app, AuditSubject::Principal(user.id))
        .await
        .iter()
        .all(|event| event.kind != AuditKind::LoginLocked));
}

async fn a_required_companys_user_enrols_on_the_sign_in_page_then_signs_in_with_a_code(
    app: TestApp,
) {
    let (_, user) = company_user(&app, MfaPolicy::Required).await;
    let client = oidc_client(&app, "relying party").await;
    let query = crate::authorize::flow::query(&client, &[("scope", "openid read")]);

    let mut browser = Session::new(&app);
    let answer = browser.sign_in_answer(&query, PASSWORD).await;
    assert_eq!(answer.status(), StatusCode::OK);
    assert_eq!(
        starts_session(&answer),
        None,
        "no session before the enrolment"
    );
    let html = answer.text().await.unwrap();
    assert!(
        html.contains("Your company requires a second factor"),
        "{html}"
    );
    assert!(html.contains("<svg"), "the QR code");
    let typed = between(&html, r#"<code id="totp-secret">"#, '<');
    let secret = TotpSecret::from_base32(&typed).expect("the key in text");
    let sealed = between(&html, r#"name="enrolment" value=""#, '"');
    let factors = app.store.second_factors();
    assert_eq!(factors.get_totp_factor(&user.id).await.unwrap(), None);

    let right = secret.code_at(app.clock.now());
    let wrong = format!("{:06}", (right.parse::<u32>().unwrap() + 1) % 1_000_000);
    let answer = browser
        .post(&[
            ("csrf_token", &csrf(&html)),
            ("enrolment", &sealed),
            ("code", &wrong),
        ])
        .await;
    let html = answer.text().await.unwrap();
    assert!(html.contains("That code was not right"), "{html}");
    assert_eq!(factors.get_totp_factor(&user.id).await.unwrap(), None);
    // A forged enrolment (not sealed by the service for this request) is refused.
    let forged = browser
        .post(&[
            ("csrf_token", &csrf(&html)),
            ("enrolment", &format!("{sealed}x")),
            ("code", &right),
        ])
        .await;
    assert_eq!(forged.status(), StatusCode::BAD_REQUEST);
    assert_eq!(factors.get_totp_factor(&user.id).await.unwrap(), None);

    let answer = browser
        .post(&[
            ("csrf_token", &csrf(&html)),
            ("enrolment", &sealed),
            ("code", &right),
        ])
        .await;
    assert_eq!(answer.status(), StatusCode::OK);
    assert_eq!(
        starts_session(&answer),
        None,
        "the recovery codes come before the session"
    );
    let html = answer.text().await.unwrap();
    let codes = recovery_codes_in(&html);
    assert_eq!(codes.len(), RECOVERY_CODE_COUNT, "{html}");
    assert!(factors.get_totp_factor(&user.id).await.unwrap().is_some());

    let answer = browser
        .post(&[("csrf_token", &csrf(&html)), ("enrolled", "continue")])
        .await;
    assert!(starts_session(&answer).is_some(), "now the session starts");
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

    // Enrolled: the next sign-in (another browser) asks for the code.
    app.clock.advance(30);
    let mut other = Session::new(&app);
    let answer = other.sign_in_answer(&query, PASSWORD).await;
    assert_eq!(starts_session(&answer), None);
    let page = answer.text().await.unwrap();
    assert!(page.contains("One more step"), "{page}");
    let answer = other
        .post(&[
            ("csrf_token", &csrf(&page)),
            ("code", &secret.code_at(app.clock.now())),
        ])
        .await;
    assert!(starts_session(&answer).is_some());
    assert_eq!(answer.status(), StatusCode::FOUND, "consent remembered");
    let code = redirect_query(&answer)["code"].clone();
    let (_, tokens) = exchange(&app, &client, &code, &[("code_verifier", "")]).await;
    let claims = verify_with_jwks(&app, tokens["id_token"].as_str().unwrap())
        .await
        .1;
    assert_eq!(claims["amr"], serde_json::json!(["pwd", "otp", "mfa"]));

    // And a recovery code from the enrolment signs in once.
    let mut third = Session::new(&app);
    let page = third.sign_in_answer(&query, PASSWORD).await;
    let page = page.text().await.unwrap();
    let answer = third
        .post(&[("csrf_token", &csrf(&page)), ("code", &codes[9])])
        .await;
    assert_eq!(answer.status(), StatusCode::FOUND, "a recovery code");

    let kinds: Vec<AuditKind> = events_of(&app, AuditSubject::Principal(user.id))
        .await
        .into_iter()
        .map(|event| event.kind)
        .filter(|kind| kind.name().starts_with("second_factor."))
        .collect();
    assert_eq!(
        kinds,
        [AuditKind::SecondFactorEnrolled],
        "the enrolment (a wrong first code guesses nothing: the user holds the secret)"
    );
}

async fn account_post(app: &TestApp, cookie: &str, form: &[(&str, &str)]) -> reqwest::Response {
    app.http
        .post(app.url(ACCOUNT))
        .header(header::COOKIE, cookie)
        .form(form)
        .send()
        .await
        .unwrap()
}

async fn a_required_companys_user_enrols_on_the_account_pages_sign_in(app: TestApp) {
    let (_, user) = company_user(&app, MfaPolicy::Required).await;
    let (nonce, answer) = super::account_sign_in(&app).await;
    assert_eq!(answer.status(), StatusCode::OK);
    assert_eq!(starts_session(&answer), None);
    let html = answer.text().await.unwrap();
    assert!(
        html.contains("Your company requires a second factor"),
        "{html}"
    );
    let secret =
        TotpSecret::from_base32(&between(&html, r#"<code id="totp-secret">"#, '<')).unwrap();
    let sealed = between(&html, r#"name="enrolment" value=""#, '"');
    let pending = between(&html, r#"name="pending" value=""#, '"');
    let code = secret.code_at(app.clock.now());
    let confirm = [
        ("csrf_token", csrf(&html)),
        ("action", "sign_in_totp_confirm".to_owned()),
        ("pending", pending.clone()),
        ("enrolment", sealed),
        ("code", code),
    ];
    let confirm: Vec<(&str, &str)> = confirm.iter().map(|(n, v)| (*n, v.as_str())).collect();
    // Another browser's nonce opens neither the password step nor the enrolment.
    let elsewhere = account_post(&app, "account_sign_in=another", &confirm).await;
    assert_eq!(elsewhere.status(), StatusCode::BAD_REQUEST);
    let answer = account_post(&app, &nonce, &confirm).await;
    assert_eq!(answer.status(), StatusCode::OK);
    assert_eq!(starts_session(&answer), None, "the recovery codes first");
    let html = answer.text().await.unwrap();
    assert_eq!(
        recovery_codes_in(&html).len(),
        RECOVERY_CODE_COUNT,
        "{html}"
    );
    let proof = between(&html, r#"name="pending" value=""#, '"');
    assert_ne!(proof, pending);
    // The password step alone does not start a session where the enrolment's proof is asked.
    let early = [
        ("csrf_token", csrf(&html)),
        ("action", "sign_in_enrolled".to_owned()),
        ("pending", pending),
    ];
    let early: Vec<(&str, &str)> = early.iter().map(|(n, v)| (*n, v.as_str())).collect();
    assert_eq!(
        starts_session(&account_post(&app, &nonce, &early).await),
        None
    );
    let form = [
        ("csrf_token", csrf(&html)),
        ("action", "sign_in_enrolled".to_owned()),
        ("pending", proof),
    ];
    let form: Vec<(&str, &str)> = form.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let answer = account_post(&app, &nonce, &form).await;
    assert_eq!(answer.status(), StatusCode::SEE_OTHER);
    assert!(starts_session(&answer).is_some());
    let sessions = app
        .store
        .sessions()
        .list_sessions(&user.id, app.clock.now())
        .await
        .unwrap();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].amr, AuthMethod::PASSWORD_AND_CODE);
}
