//! The device flow's page in a real headless Chromium (SQLite): the user types the code, signs
//! in (with a password, or a passkey) and allows; the device's poll then gets its tokens.
//! Screenshots go to
//! `target/screenshots/device-*.png`.

use super::page::{device_client, APP_NAME, LOGIN, PASSWORD};
use super::*;
use crate::support::app::Backend;
use crate::support::browser::Browser;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enter_the_code_sign_in_and_allow_in_a_real_browser_sqlite() {
    enter_the_code_sign_in_and_allow(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn enter_the_code_sign_in_and_allow_in_a_real_browser_dynamodb() {
    enter_the_code_sign_in_and_allow(Backend::DynamoDb).await;
}

async fn enter_the_code_sign_in_and_allow(backend: Backend) {
    let Some(app) = TestApp::spawn(backend).await else {
        return;
    };
    app.create_user(LOGIN, PASSWORD).await;
    let client = device_client(&app).await;
    let body = codes(&app, &client, "openid read").await;
    let device_code = body["device_code"].as_str().unwrap();
    let browser = Browser::start()
        .await
        .expect("chromedriver and chromium start");
    browser
        .goto(body["verification_uri"].as_str().unwrap())
        .await
        .unwrap();
    // RFC 8628 5.4: before anything is typed, the page warns against a code someone sent.
    let text = browser.wait_for_text("Connect a device").await.unwrap();
    assert!(
        text.contains("Never enter a code that someone sent you"),
        "{text}"
    );
    browser.screenshot("device-code").await.unwrap();
    let typed = body["user_code"].as_str().unwrap().to_lowercase();
    browser.fill_by_label("Code", &typed).await.unwrap();
    browser.click_button("Continue").await.unwrap();
    let text = browser.text().await.unwrap();
    assert!(text.contains(APP_NAME), "{text}");
    browser.fill_by_label("Login", LOGIN).await.unwrap();
    browser.fill_by_label("Password", PASSWORD).await.unwrap();
    browser.click_button("Sign in").await.unwrap();
    let text = browser.text().await.unwrap();
    assert!(text.contains("Allow access on your device?"), "{text}");
    assert!(text.contains(APP_NAME), "{text}");
    browser.screenshot("device-consent").await.unwrap();
    browser.click_button("Allow").await.unwrap();
    let text = browser.text().await.unwrap();
    assert!(text.contains("Return to your device"), "{text}");
    browser.screenshot("device-done").await.unwrap();
    browser.close().await.unwrap();

    let (status, tokens) = poll(&app, &client, device_code).await;
    assert_eq!(status, 200, "{tokens}");
    assert_eq!(tokens["principal_type"], "user");
    assert!(tokens["id_token"].is_string(), "{tokens}");
}

/// The page's sign-in offers passkeys as the other sign-in pages do: a user of a company that
/// requires a second factor, with a passkey added on the account page, is signed in by autofill
/// (ChromeDriver's virtual authenticator) without a password, allows, and the device's ID token
/// says `swk mfa`. Served on `localhost` (an RP ID is never an IP address).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_passkey_signs_in_on_the_device_page_sqlite() {
    a_passkey_signs_in_on_the_device_page(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn a_passkey_signs_in_on_the_device_page_dynamodb() {
    a_passkey_signs_in_on_the_device_page(Backend::DynamoDb).await;
}

async fn a_passkey_signs_in_on_the_device_page(backend: Backend) {
    use crate::support::app::AppOptions;
    let Some(app) = TestApp::spawn_with(
        backend,
        AppOptions {
            localhost: true,
            ..AppOptions::default()
        },
    )
    .await
    else {
        return;
    };
    let company = app.create_company("Acme").await;
    token_core::admin::set_company_mfa(app.ctx(), &company.id, token_domain::MfaPolicy::Required)
        .await
        .unwrap();
    app.create_user_with(LOGIN, PASSWORD, |new| new.company_id = Some(company.id))
        .await;
    let client = device_client(&app).await;
    let browser = Browser::start()
        .await
        .expect("chromedriver and chromium start");
    browser.add_virtual_authenticator().await.unwrap();

    // The company requires a second factor: the password alone does not sign in here.
    let body = codes(&app, &client, "openid read").await;
    browser
        .goto(body["verification_uri"].as_str().unwrap())
        .await
        .unwrap();
    let typed = body["user_code"].as_str().unwrap().to_lowercase();
    browser.fill_by_label("Code", &typed).await.unwrap();
    browser.click_button("Continue").await.unwrap();
    browser
        .wait_for_text("Sign in with a passkey")
        .await
        .unwrap();
    browser.fill_by_label("Login", LOGIN).await.unwrap();
    browser.fill_by_label("Password", PASSWORD).await.unwrap();
    browser.click_button("Sign in").await.unwrap();
    browser
        .wait_for_text("Your company requires a second factor")
        .await
        .unwrap();

    // A passkey, added after enrolling an authenticator app at the account page's sign-in.
    browser.goto(&app.url("/oauth2/v0/account")).await.unwrap();
    browser.fill_by_label("Login", LOGIN).await.unwrap();
    browser.fill_by_label("Password", PASSWORD).await.unwrap();
    browser.click_button("Sign in").await.unwrap();
    let text = browser.wait_for_text("Key: ").await.unwrap();
    let key = text
        .lines()
        .find_map(|line| line.trim().strip_prefix("Key: "))
        .unwrap();
    let secret = token_domain::TotpSecret::from_base32(key).unwrap();
    browser
        .fill_by_label(
            "The six-digit code your app shows",
            &secret.code_at(app.clock.now()),
        )
        .await
        .unwrap();
    browser.click_button("Confirm").await.unwrap();
    browser
        .click_button("I have saved them: continue")
        .await
        .unwrap();
    browser.press("Add a passkey").await.unwrap();
    browser.wait_for_text("Remove Passkey").await.unwrap();
    browser.click_button("Sign out everywhere").await.unwrap();
    browser.wait_for_text("You are signed out").await.unwrap();

    let body = codes(&app, &client, "openid read").await;
    let device_code = body["device_code"].as_str().unwrap();
    browser
        .goto(body["verification_uri"].as_str().unwrap())
        .await
        .unwrap();
    let typed = body["user_code"].as_str().unwrap().to_lowercase();
    browser.fill_by_label("Code", &typed).await.unwrap();
    browser.click_button("Continue").await.unwrap();
    // The sign-in page's autofill request is answered by the authenticator at once.
    browser
        .wait_for_text("Allow access on your device?")
        .await
        .unwrap();
    browser.screenshot("device-passkey-consent").await.unwrap();
    browser.click_button("Allow").await.unwrap();
    browser
        .wait_for_text("Return to your device")
        .await
        .unwrap();
    browser.close().await.unwrap();

    let (status, tokens) = poll(&app, &client, device_code).await;
    assert_eq!(status, 200, "{tokens}");
    let claims =
        crate::authorize::flow::verify_with_jwks(&app, tokens["id_token"].as_str().unwrap())
            .await
            .1;
    assert_eq!(claims["amr"], serde_json::json!(["swk", "mfa"]));
}
