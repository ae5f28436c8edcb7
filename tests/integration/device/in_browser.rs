//! The device flow's page in a real headless Chromium (SQLite): the user types the code, signs
//! in and allows; the device's poll then gets its tokens. Screenshots go to
//! `target/screenshots/device-*.png`.

use super::page::{device_client, APP_NAME, LOGIN, PASSWORD};
use super::*;
use crate::support::app::Backend;
use crate::support::browser::Browser;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enter_the_code_sign_in_and_allow_in_a_real_browser() {
    let app = TestApp::spawn(Backend::Sqlite).await.unwrap();
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
