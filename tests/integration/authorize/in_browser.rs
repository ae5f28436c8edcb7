//! The code flow in a real headless Chromium against the real router (`TestApp`, on both
//! stores): sign in, consent, land on the client's redirect URI with a code, exchange it. The redirect URI is
//! on another origin (`localhost` vs `127.0.0.1`), so the CSP's `form-action` is exercised too.
//! Screenshots of every page go to `target/screenshots/authorize-*.png`.

use crate::support::app::{Backend, TestApp, TestClient};
use crate::support::browser::Browser;
use axum::routing::get;
use axum::Router;
use reqwest::StatusCode;
use token_core::admin::NewClient;
use token_domain::Scopes;

use super::flow::{APP_NAME, LOGIN, PASSWORD};

const STATE: &str = "xyzzy";

/// The client's own site: a callback page on `localhost`, another origin than the service.
pub(crate) async fn client_site() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let router = Router::new().route(
        "/callback",
        get(|| async { "The application received the answer." }),
    );
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    format!("http://localhost:{port}/callback")
}

/// A fresh app with a user and a code-flow client, and a real browser on that client's
/// authorize page.
struct BrowserFlow {
    app: TestApp,
    client: TestClient,
    redirect_uri: String,
    browser: Browser,
}

async fn open_authorize_page(backend: Backend) -> Option<BrowserFlow> {
    let app = TestApp::spawn(backend).await?;
    app.create_user(LOGIN, PASSWORD).await;
    let redirect_uri = client_site().await;
    let mut new = NewClient::named(
        APP_NAME,
        Scopes::parse("openid payroll com.example.read").unwrap(),
    );
    new.redirect_uris = vec![redirect_uri.clone()];
    let client = app.create_client_with(new).await;
    let browser = Browser::start()
        .await
        .expect("chromedriver and chromium start");
    browser
        .goto(&authorize_url(&app, &client, &redirect_uri))
        .await
        .unwrap();
    Some(BrowserFlow {
        app,
        client,
        redirect_uri,
        browser,
    })
}

fn authorize_url(app: &TestApp, client: &TestClient, redirect_uri: &str) -> String {
    let query = serde_urlencoded::to_string([
        ("client_id", client.id.as_str()),
        ("redirect_uri", redirect_uri),
        ("response_type", "code"),
        ("scope", "openid payroll com.example.read"),
        ("state", STATE),
        ("nonce", "browser-nonce"),
    ])
    .unwrap();
    app.url(&format!("/oauth2/v0/authorize?{query}"))
}

async fn sign_in(browser: &Browser, password: &str) {
    browser.fill_by_label("Login", LOGIN).await.unwrap();
    browser.fill_by_label("Password", password).await.unwrap();
    browser.click_button("Sign in").await.unwrap();
}

/// Redeems the code the browser landed with; the token answer.
async fn redeem(
    app: &TestApp,
    client: &TestClient,
    landed: &url::Url,
    redirect_uri: &str,
) -> serde_json::Value {
    let code = query_value(landed, "code").expect("a code");
    let (status, body) = app
        .token(&[
            ("grant_type", "authorization_code"),
            ("client_id", &client.id),
            ("client_secret", &client.secret),
            ("code", &code),
            ("redirect_uri", redirect_uri),
        ])
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

fn query_value(url: &url::Url, name: &str) -> Option<String> {
    url.query_pairs()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.into_owned())
}

crate::on_both_stores!(using super::open_authorize_page;
    sign_in_approve_and_exchange_in_a_real_browser,
    deny_in_a_real_browser_redirects_with_access_denied,
    single_sign_on_and_the_account_page_in_a_real_browser,
    a_logout_link_without_a_hint_asks_first_in_a_real_browser
);

async fn sign_in_approve_and_exchange_in_a_real_browser(flow: BrowserFlow) {
    let BrowserFlow {
        app,
        client,
        redirect_uri,
        browser,
    } = flow;
    assert!(browser.text().await.unwrap().contains(APP_NAME));
    browser.screenshot("authorize-sign-in").await.unwrap();

    sign_in(&browser, "wrong password").await;
    let text = browser.text().await.unwrap();
    assert!(
        text.contains("The login or password is not correct."),
        "{text}"
    );
    assert!(!text.contains("invalid_grant"), "{text}");
    browser.screenshot("authorize-sign-in-error").await.unwrap();

    sign_in(&browser, PASSWORD).await;
    let text = browser.text().await.unwrap();
    assert!(
        text.contains(&format!("{APP_NAME} would like to:")),
        "{text}"
    );
    assert!(
        text.contains("Confirm who you are when you sign in"),
        "{text}"
    );
    assert!(text.contains("See and manage your payroll data"), "{text}");
    assert!(text.contains("com.example.read"), "{text}");
    browser.screenshot("authorize-consent").await.unwrap();

    browser.click_button("Allow").await.unwrap();
    let landed = browser.current_url().await.unwrap();
    assert_eq!(landed.host_str(), Some("localhost"), "{landed}");
    assert_eq!(landed.path(), "/callback");
    assert_eq!(query_value(&landed, "state").as_deref(), Some(STATE));
    assert_eq!(
        query_value(&landed, "geolocation").as_deref(),
        Some(app.geolocation().as_str())
    );
    browser.screenshot("authorize-callback").await.unwrap();
    browser.close().await.unwrap();

    let body = redeem(&app, &client, &landed, &redirect_uri).await;
    assert_eq!(body["principal_type"], "user");
    let (_, claims) = super::flow::verify_with_jwks(&app, body["id_token"].as_str().unwrap()).await;
    assert_eq!(claims["nonce"], "browser-nonce");
}

async fn deny_in_a_real_browser_redirects_with_access_denied(flow: BrowserFlow) {
    // `_app` is bound, not `..`-dropped: the service must outlive the browser's visit.
    let BrowserFlow {
        app,
        client,
        redirect_uri,
        browser,
    } = flow;
    // For a resource (RFC 8707): the consent page names it.
    let resource = "https://mcp.example.com/mcp";
    let url = format!(
        "{}&resource={}",
        authorize_url(&app, &client, &redirect_uri),
        url::form_urlencoded::byte_serialize(resource.as_bytes()).collect::<String>()
    );
    browser.goto(&url).await.unwrap();
    sign_in(&browser, PASSWORD).await;
    let text = browser.wait_for_text("Only at").await.unwrap();
    assert!(text.contains(resource), "{text}");
    browser
        .screenshot("authorize-consent-resource")
        .await
        .unwrap();
    browser.click_button("Deny").await.unwrap();
    let landed = browser.current_url().await.unwrap();
    assert_eq!(landed.path(), "/callback");
    assert_eq!(
        query_value(&landed, "error").as_deref(),
        Some("access_denied")
    );
    assert_eq!(query_value(&landed, "error_code").as_deref(), Some("12"));
    assert_eq!(query_value(&landed, "state").as_deref(), Some(STATE));
    assert!(query_value(&landed, "code").is_none());
    browser.close().await.unwrap();
}

/// Single sign-on and the account page in a real browser: the `__Host-session` cookie is kept
/// by Chromium, a second authorization lands on the client at once, and the account page lists
/// the session and the app, disconnects the app and signs out everywhere.
async fn single_sign_on_and_the_account_page_in_a_real_browser(flow: BrowserFlow) {
    let BrowserFlow {
        app,
        client,
        redirect_uri,
        browser,
    } = flow;
    sign_in(&browser, PASSWORD).await;
    browser.click_button("Allow").await.unwrap();
    let landed = browser.current_url().await.unwrap();
    let tokens = redeem(&app, &client, &landed, &redirect_uri).await;

    // Signed in and approved: the next authorization shows no page at all.
    browser
        .goto(&authorize_url(&app, &client, &redirect_uri))
        .await
        .unwrap();
    let again = browser.current_url().await.unwrap();
    assert_eq!(again.path(), "/callback", "{again}");
    assert!(query_value(&again, "code").is_some(), "{again}");

    browser.goto(&app.url("/oauth2/v0/account")).await.unwrap();
    let text = browser.text().await.unwrap();
    assert!(text.contains("Your account"), "{text}");
    assert!(text.contains("This browser"), "{text}");
    assert!(text.contains(APP_NAME), "{text}");
    browser.screenshot("account").await.unwrap();

    browser
        .click_button(&format!("Disconnect {APP_NAME}"))
        .await
        .unwrap();
    let text = browser.text().await.unwrap();
    assert!(
        text.contains("No application has access to your account."),
        "{text}"
    );
    let (status, _) = app
        .refresh(&client, tokens["refresh_token"].as_str().unwrap())
        .await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "disconnecting revoked the family"
    );

    browser.click_button("Sign out everywhere").await.unwrap();
    assert!(browser.text().await.unwrap().contains("You are signed out"));
    browser
        .goto(&authorize_url(&app, &client, &redirect_uri))
        .await
        .unwrap();
    let text = browser.text().await.unwrap();
    assert!(
        text.contains("Sign in"),
        "signed out: the sign-in page again: {text}"
    );
    browser.close().await.unwrap();
}

/// A link to the end-session endpoint without an `id_token_hint` (what a cross-site page can
/// make a browser open) ends nothing: the page asks, the session lives on, and only the
/// page's own button signs the browser out.
async fn a_logout_link_without_a_hint_asks_first_in_a_real_browser(flow: BrowserFlow) {
    let BrowserFlow {
        app,
        client,
        redirect_uri,
        browser,
    } = flow;
    sign_in(&browser, PASSWORD).await;
    browser.click_button("Allow").await.unwrap();
    let signed_in = |landed: &url::Url| landed.path() == "/callback";

    browser.goto(&app.url("/oauth2/v0/logout")).await.unwrap();
    browser.wait_for_text("Sign out?").await.unwrap();
    browser.screenshot("logout-confirmation").await.unwrap();
    browser
        .goto(&authorize_url(&app, &client, &redirect_uri))
        .await
        .unwrap();
    let landed = browser.current_url().await.unwrap();
    assert!(signed_in(&landed), "the link ended nothing: {landed}");

    browser.goto(&app.url("/oauth2/v0/logout")).await.unwrap();
    browser.click_button("Sign out").await.unwrap();
    browser.wait_for_text("You are signed out").await.unwrap();
    browser
        .goto(&authorize_url(&app, &client, &redirect_uri))
        .await
        .unwrap();
    let text = browser.wait_for_text("Sign in").await.unwrap();
    assert!(!signed_in(&browser.current_url().await.unwrap()), "{text}");
    browser.close().await.unwrap();
}
