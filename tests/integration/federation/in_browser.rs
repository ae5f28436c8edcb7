//! The federated sign-in in headless Chromium: the authorize page's login goes to the IdP's own
//! login page, and the browser comes back to the consent page and the client.

use reqwest::StatusCode;

use super::fixture::{Federated, DOMAIN};
use token_core::admin::NewClient;
use token_domain::Scopes;

use crate::authorize::flow::{query, APP_NAME};
use crate::support::browser::Browser;

async fn a_login_signs_in_at_the_idp_and_lands_on_the_client_in_a_real_browser(f: Federated) {
    let redirect_uri = crate::authorize::in_browser::client_site().await;
    let mut new = NewClient::named(APP_NAME, Scopes::parse("openid read").unwrap());
    new.redirect_uris = vec![redirect_uri.clone()];
    let client = f.app.create_client_with(new).await;
    let browser = Browser::start().await.expect("Chromium starts");
    let pairs = query(&client, &[("redirect_uri", redirect_uri.as_str())]);
    let url = format!(
        "{}?{}",
        f.app.url("/oauth2/v0/authorize"),
        serde_urlencoded::to_string(&pairs).unwrap()
    );
    browser.goto(&url).await.unwrap();
    let login = format!("kim@{DOMAIN}");
    browser.fill_by_label("Login", &login).await.unwrap();
    browser.click_button("Sign in").await.unwrap();
    // The IdP's page, the login already filled in from our `login_hint`.
    browser.wait_for_text("Acme sign-in").await.unwrap();
    assert!(browser
        .current_url()
        .await
        .unwrap()
        .as_str()
        .starts_with(&f.idp.issuer));
    browser.fill_by_label("Password", "anything").await.unwrap();
    browser.click_button("Sign-in").await.unwrap();
    let consent = browser.wait_for_text("would like to").await.unwrap();
    assert!(consent.contains(APP_NAME), "{consent}");
    browser.screenshot("federation-consent").await.unwrap();
    browser.click_button("Allow").await.unwrap();
    let landed = browser.current_url().await.unwrap();
    assert!(landed.as_str().starts_with(&redirect_uri), "{landed}");
    let code = landed
        .query_pairs()
        .find(|(name, _)| name == "code")
        .map(|(_, value)| value.into_owned())
        .expect("a code");
    // The account page says how this browser's session was started.
    browser
        .goto(&f.app.url("/oauth2/v0/account"))
        .await
        .unwrap();
    let account = browser.wait_for_text("Your account").await.unwrap();
    assert!(account.contains("via Sign in with Acme"), "{account}");
    browser.close().await.unwrap();
    let extra = [
        ("code_verifier", ""),
        ("redirect_uri", redirect_uri.as_str()),
    ];
    let (status, body) = crate::authorize::flow::exchange(&f.app, &client, &code, &extra).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

crate::on_both_stores!(using crate::federation::fixture::federated;
    a_login_signs_in_at_the_idp_and_lands_on_the_client_in_a_real_browser,
);
