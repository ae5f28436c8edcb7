//! The SAML sign-in in headless Chromium: the authorize page's login goes to the pysaml2 IdP's
//! login page with our signed `AuthnRequest`, its auto-posting page brings the browser to our
//! ACS and on to the consent page and the client; the account page's sign-out then goes through
//! the IdP's single logout and ends on the signed-out page.

use reqwest::StatusCode;
use token_core::admin::NewClient;
use token_domain::Scopes;

use super::fixture::DOMAIN;
use super::saml_fixture::SamlFederated;
use crate::authorize::flow::{query, APP_NAME};
use crate::support::browser::Browser;

async fn a_login_signs_in_at_the_saml_idp_and_signs_out_there_in_a_real_browser(f: SamlFederated) {
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
    let login = format!("lou@{DOMAIN}");
    browser.fill_by_label("Login", &login).await.unwrap();
    browser.click_button("Sign in").await.unwrap();
    browser.wait_for_text("Sign in to the test IdP").await.ok();
    let at_idp = browser.current_url().await.unwrap();
    assert!(
        at_idp.as_str().starts_with(&format!("{}/sso?", f.idp.base)),
        "{at_idp}"
    );
    browser.fill_by_label("Email", &login).await.unwrap();
    browser.click_button("Sign in").await.unwrap();
    let consent = browser.wait_for_text("would like to").await.unwrap();
    assert!(consent.contains(APP_NAME), "{consent}");
    browser.click_button("Allow").await.unwrap();
    let landed = browser.current_url().await.unwrap();
    assert!(landed.as_str().starts_with(&redirect_uri), "{landed}");
    let code = landed
        .query_pairs()
        .find(|(name, _)| name == "code")
        .map(|(_, value)| value.into_owned())
        .expect("a code");
    let extra = [
        ("code_verifier", ""),
        ("redirect_uri", redirect_uri.as_str()),
    ];
    let (status, body) = crate::authorize::flow::exchange(&f.app, &client, &code, &extra).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    browser
        .goto(&f.app.url("/oauth2/v0/account"))
        .await
        .unwrap();
    let account = browser.wait_for_text("Your account").await.unwrap();
    assert!(account.contains("via Sign in with Acme"), "{account}");
    browser.click_button("Sign out everywhere").await.unwrap();
    let signed_out = browser.wait_for_text("signed out").await.unwrap();
    browser.screenshot("saml-signed-out").await.unwrap();
    let here = browser.current_url().await.unwrap();
    assert!(
        here.as_str()
            .starts_with(&f.app.url(&format!("/federation/v0/saml/{}/slo?", f.idp_id))),
        "back at our single logout service: {here} {signed_out}"
    );
    browser.close().await.unwrap();
    let records = f.idp.records().await;
    assert_eq!(records[0]["kind"], "logout_request");
    assert_eq!(records[0]["signature_valid"], true, "{records:?}");
    let user = f.linked_user(&login).await.unwrap();
    let now = token_domain::clock::Clock::now(f.app.clock.as_ref());
    assert!(f
        .app
        .store
        .sessions()
        .list_sessions(&user, now)
        .await
        .unwrap()
        .is_empty());
}

crate::on_both_stores!(using crate::federation::saml_fixture::saml_federated;
    a_login_signs_in_at_the_saml_idp_and_signs_out_there_in_a_real_browser,
);
