//! Passkeys in a real headless Chromium with ChromeDriver's virtual authenticator, on both
//! stores: a user adds a passkey on the account page, signs out, signs in with it by autofill
//! (the virtual authenticator answers the page's conditional request at once, as a user picking
//! the passkey in the login field's menu would) and by the button, removes it, and is refused
//! with it afterwards. The app is served on `localhost` (the RP ID cannot be an IP address).
//! Screenshots go to `target/screenshots/passkeys-*.png`.

use token_domain::audit::AuditSubject;
use token_store::AuditQuery;

use token_core::admin::NewClient;
use token_domain::Scopes;

use crate::support::app::{AppOptions, Backend, TestApp};
use crate::support::browser::Browser;

const LOGIN: &str = "passkey.user@example.com";
const PASSWORD: &str = "correct horse battery staple";

async fn scenario(backend: Backend) {
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
    let user = app.create_user(LOGIN, PASSWORD).await;
    let browser = Browser::start()
        .await
        .expect("chromedriver and chromium start");
    let authenticator = browser.add_virtual_authenticator().await.unwrap();
    let account = app.url("/oauth2/v0/account");

    browser.goto(&account).await.unwrap();
    browser.fill_by_label("Login", LOGIN).await.unwrap();
    browser.fill_by_label("Password", PASSWORD).await.unwrap();
    browser.click_button("Sign in").await.unwrap();
    browser
        .wait_for_text("You have no passkey yet.")
        .await
        .unwrap();

    browser
        .fill_by_label("Name of the new passkey", "Work laptop")
        .await
        .unwrap();
    browser.press("Add a passkey").await.unwrap();
    // Added; changing it again needs a sign-in with it (the session's was a password alone).
    let page = browser
        .wait_for_text("Sign in again to change how you sign in")
        .await
        .unwrap();
    assert!(page.contains("Work laptop"), "{page}");
    assert!(!page.contains("Remove Work laptop"), "{page}");
    assert!(page.contains("last used never"), "{page}");
    browser.screenshot("passkeys-added").await.unwrap();
    let stored = app
        .ctx()
        .store
        .passkeys()
        .list_passkeys(&user.id)
        .await
        .unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].name, "Work laptop");

    browser.click_button("Sign out everywhere").await.unwrap();
    browser.wait_for_text("You are signed out").await.unwrap();

    // Signed out, the sign-in form signs in by autofill (conditional mediation) on its own.
    browser.goto(&account).await.unwrap();
    let page = browser.wait_for_text("Remove Work laptop").await.unwrap();
    assert!(page.contains("Your account"), "{page}");
    browser
        .screenshot("passkeys-signed-in-by-autofill")
        .await
        .unwrap();
    let used = app
        .ctx()
        .store
        .passkeys()
        .list_passkeys(&user.id)
        .await
        .unwrap();
    assert!(used[0].last_used_at.is_some(), "the sign-in was recorded");

    // The button: the autofill request fails (no user verification, refused by the service),
    // and the page that says so offers the button, which works once the user is verified.
    browser.click_button("Sign out everywhere").await.unwrap();
    browser
        .set_user_verified(&authenticator, false)
        .await
        .unwrap();
    browser.goto(&account).await.unwrap();
    browser
        .wait_for_text("Sign in with a passkey")
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    browser
        .wait_for_text("Sign in with a passkey")
        .await
        .unwrap();
    browser
        .set_user_verified(&authenticator, true)
        .await
        .unwrap();
    browser.press("Sign in with a passkey").await.unwrap();
    let page = browser.wait_for_text("Remove Work laptop").await.unwrap();
    assert!(page.contains("Your account"), "{page}");
    browser
        .screenshot("passkeys-signed-in-by-button")
        .await
        .unwrap();

    // Removed: the authenticator still holds the key, the service no longer accepts it.
    browser.click_button("Remove Work laptop").await.unwrap();
    browser
        .wait_for_text("You have no passkey yet.")
        .await
        .unwrap();
    browser.click_button("Sign out everywhere").await.unwrap();
    browser.goto(&account).await.unwrap();
    let page = browser
        .wait_for_text("This passkey could not be used to sign in.")
        .await
        .unwrap();
    assert!(
        page.contains("Password"),
        "the password form is still there: {page}"
    );
    browser
        .screenshot("passkeys-removed-refused")
        .await
        .unwrap();

    let app = &app;
    let events = |subject| async move {
        let query = AuditQuery {
            subject,
            since: None,
            now: app.ctx().clock.now(),
        };
        let events = app.ctx().store.audit().audit_events(query).await.unwrap();
        events
            .iter()
            .map(|event| event.kind.name())
            .collect::<Vec<_>>()
    };
    let users = events(AuditSubject::Principal(user.id)).await;
    assert!(users.contains(&"passkey.added"), "{users:?}");
    assert!(users.contains(&"passkey.removed"), "{users:?}");
    // An unknown credential names no user (its user handle is the browser's word only).
    let deployment = events(AuditSubject::Deployment).await;
    assert!(deployment.contains(&"passkey.refused"), "{deployment:?}");
    browser.close().await.unwrap();
}

#[tokio::test]
async fn a_passkey_is_added_used_and_refused_once_removed_sqlite() {
    scenario(Backend::Sqlite).await;
}

#[tokio::test]
async fn a_passkey_is_added_used_and_refused_once_removed_dynamodb() {
    scenario(Backend::DynamoDb).await;
}

/// The authorize page: a passkey sign-in (autofill) continues the code flow as a password does,
/// to the consent page and back to the client with a code.
#[tokio::test]
async fn a_passkey_signs_in_on_the_authorize_page_and_the_code_flow_continues() {
    let app = TestApp::spawn_with(
        Backend::Sqlite,
        AppOptions {
            localhost: true,
            ..AppOptions::default()
        },
    )
    .await
    .unwrap();
    app.create_user(LOGIN, PASSWORD).await;
    let redirect_uri = "http://127.0.0.1:9/callback".to_owned();
    let mut new = NewClient::named("Passkey App", Scopes::parse("openid").unwrap());
    new.redirect_uris = vec![redirect_uri.clone()];
    let client = app.create_client_with(new).await;
    let browser = Browser::start()
        .await
        .expect("chromedriver and chromium start");
    browser.add_virtual_authenticator().await.unwrap();

    browser.goto(&app.url("/oauth2/v0/account")).await.unwrap();
    browser.fill_by_label("Login", LOGIN).await.unwrap();
    browser.fill_by_label("Password", PASSWORD).await.unwrap();
    browser.click_button("Sign in").await.unwrap();
    browser.press("Add a passkey").await.unwrap();
    browser
        .wait_for_text("Sign in again to change how you sign in")
        .await
        .unwrap();
    browser.click_button("Sign out everywhere").await.unwrap();

    let query = serde_urlencoded::to_string([
        ("client_id", client.id.as_str()),
        ("redirect_uri", redirect_uri.as_str()),
        ("response_type", "code"),
        ("scope", "openid"),
        ("state", "st"),
    ])
    .unwrap();
    browser
        .goto(&app.url(&format!("/oauth2/v0/authorize?{query}")))
        .await
        .unwrap();
    browser.wait_for_text("Allow").await.unwrap();
    browser
        .screenshot("passkeys-authorize-consent")
        .await
        .unwrap();
    let allow = browser.press("Allow").await;
    assert!(allow.is_ok(), "{allow:?}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let url = browser.current_url().await.unwrap();
        if url.as_str().starts_with(&redirect_uri) {
            assert!(url.query_pairs().any(|(key, _)| key == "code"), "{url}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "still at {url}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}
