//! The verification page's second factors, on the page alone (the pages' one sign-in): a user
//! with an authenticator app types its code after the password, and a user of a company that
//! requires a second factor but has none sets up an authenticator app right after the password,
//! sees the recovery codes, then approves; either way no session starts before the second
//! factor, and the device's ID token says `pwd otp mfa`.

use super::page::{device_client, field, Page, APP_NAME};
use super::*;
use crate::authorize::flow::{csrf, verify_with_jwks, LOGIN, PASSWORD};
use crate::support::assertions::assert_token_error;
use reqwest::{header, StatusCode};
use token_core::admin;
use token_domain::{MfaPolicy, TotpSecret, RECOVERY_CODE_COUNT};

crate::on_both_stores!(
    a_user_with_an_authenticator_app_approves_a_device_with_its_code,
    a_required_companys_user_enrols_on_the_device_page_then_approves,
);

fn starts_session(response: &reqwest::Response) -> bool {
    response
        .headers()
        .get_all(header::SET_COOKIE)
        .iter()
        .any(|c| c.to_str().unwrap().starts_with("__Host-session="))
}

/// A fresh code entered and the password posted on the page: the answer.
async fn password_on_the_page(page: &mut Page<'_>, user_code: &str) -> reqwest::Response {
    let (status, sign_in) = page.enter(user_code).await;
    assert_eq!(status, StatusCode::OK, "{sign_in}");
    page.post(&[
        ("csrf_token", &csrf(&sign_in)),
        ("action", "sign_in"),
        ("user_code", &field(&sign_in, "user_code")),
        ("login", LOGIN),
        ("password", PASSWORD),
    ])
    .await
}

/// Approves on the consent page `consent`; then the device's poll gets the family, whose ID
/// token names the methods of a password and a code.
async fn approve_and_poll(
    app: &TestApp,
    client: &TestClient,
    page: &mut Page<'_>,
    consent: &str,
    device_code: &str,
) {
    assert!(consent.contains(APP_NAME), "the consent screen: {consent}");
    let done = page
        .post(&[
            ("csrf_token", &csrf(consent)),
            ("user_code", &field(consent, "user_code")),
            ("action", "approve"),
        ])
        .await;
    assert!(done.text().await.unwrap().contains("Return to your device"));
    app.clock.advance(5);
    let (status, tokens) = poll(app, client, device_code).await;
    assert_eq!(status, 200, "{tokens}");
    let (_, claims) = verify_with_jwks(app, tokens["id_token"].as_str().unwrap()).await;
    assert_eq!(claims["amr"], serde_json::json!(["pwd", "otp", "mfa"]));
}

async fn a_user_with_an_authenticator_app_approves_a_device_with_its_code(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let (secret, _) = crate::openid::second_factor::enrolled(&app).await;
    let client = device_client(&app).await;
    let body = codes(&app, &client, "openid read").await;
    let device_code = body["device_code"].as_str().unwrap();
    let mut page = Page::new(&app);
    let answer = password_on_the_page(&mut page, body["user_code"].as_str().unwrap()).await;
    assert!(
        !starts_session(&answer),
        "no session from the password alone"
    );
    let html = answer.text().await.unwrap();
    assert!(html.contains("One more step"), "the code page: {html}");

    let code_form = |html: &str, code: &str| {
        [
            ("csrf_token", csrf(html)),
            ("action", field(html, "action")),
            ("user_code", field(html, "user_code")),
            ("pending", field(html, "pending")),
            ("code", code.to_owned()),
        ]
    };
    let form = code_form(&html, "000000x");
    let pairs: Vec<(&str, &str)> = form.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let answer = page.post(&pairs).await;
    assert!(!starts_session(&answer));
    let again = answer.text().await.unwrap();
    assert!(again.contains("That code was not right"), "{again}");
    assert_token_error(
        &poll(&app, &client, device_code).await,
        400,
        "authorization_pending",
        170,
    );

    app.clock.advance(30);
    let form = code_form(&again, &secret.code_at(app.clock.now()));
    let pairs: Vec<(&str, &str)> = form.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let answer = page.post(&pairs).await;
    assert!(starts_session(&answer), "the session starts with the code");
    let consent = answer.text().await.unwrap();
    approve_and_poll(&app, &client, &mut page, &consent, device_code).await;
}

async fn a_required_companys_user_enrols_on_the_device_page_then_approves(app: TestApp) {
    let company = app.create_company("Acme").await;
    let user = app
        .create_user_with(LOGIN, PASSWORD, |new| new.company_id = Some(company.id))
        .await;
    admin::set_company_mfa(app.ctx(), &company.id, MfaPolicy::Required)
        .await
        .unwrap();
    let client = device_client(&app).await;
    let body = codes(&app, &client, "openid read").await;
    let device_code = body["device_code"].as_str().unwrap();
    let mut page = Page::new(&app);
    let answer = password_on_the_page(&mut page, body["user_code"].as_str().unwrap()).await;
    assert!(!starts_session(&answer), "no session before the enrolment");
    let html = answer.text().await.unwrap();
    let key = html
        .split(r#"<code id="totp-secret">"#)
        .nth(1)
        .and_then(|rest| rest.split('<').next())
        .unwrap_or_else(|| panic!("the enrolment page: {html}"));
    let secret = TotpSecret::from_base32(key).expect("a base32 key");
    let code = secret.code_at(app.clock.now());
    let answer = page
        .post(&[
            ("csrf_token", &csrf(&html)),
            ("action", &field(&html, "action")),
            ("user_code", &field(&html, "user_code")),
            ("pending", &field(&html, "pending")),
            ("enrolment", &field(&html, "enrolment")),
            ("code", &code),
        ])
        .await;
    assert!(
        !starts_session(&answer),
        "no session before the recovery codes"
    );
    let codes_page = answer.text().await.unwrap();
    assert_eq!(
        codes_page.matches("<li><code>").count(),
        RECOVERY_CODE_COUNT,
        "{codes_page}"
    );
    assert!(app
        .store
        .second_factors()
        .get_totp_factor(&user.id)
        .await
        .unwrap()
        .is_some());
    let answer = page
        .post(&[
            ("csrf_token", &csrf(&codes_page)),
            ("action", &field(&codes_page, "action")),
            ("user_code", &field(&codes_page, "user_code")),
            ("pending", &field(&codes_page, "pending")),
        ])
        .await;
    assert!(
        starts_session(&answer),
        "the session starts after the codes"
    );
    let consent = answer.text().await.unwrap();
    approve_and_poll(&app, &client, &mut page, &consent, device_code).await;
}
