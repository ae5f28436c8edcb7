//! The sign-in and consent pages in a real headless browser, served by a tiny axum app that
//! wires the authorize building blocks the way the router will: the pending request in its
//! encrypted cookie, CSRF tokens bound to it, a code minted on approval. The redirect URI is on
//! another origin (`localhost` vs `127.0.0.1`), so the CSP's `form-action` is exercised too.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Form, Router};
use integration_tests::browser::Browser;
use token_service::domain::{ClientId, Geolocation, PrincipalId, Scopes};
use token_service::errors::ErrorCode;
use token_service::flows::authorize::{
    code_location, csrf_token, issue_code, set_pending_cookie, sign_in_message, verify_csrf_token,
    AuthorizeKeys, ErrorRedirect, Form as CsrfForm, PendingAuthorization, Prompt,
    ValidatedAuthorization, PENDING_COOKIE_NAME,
};
use token_service::http::pages::{
    render_consent, render_sign_in, security_headers, ConsentPage, SignInPage,
};
use token_service::random::{OsRandom, RandomExt};

const APP_NAME: &str = "Expense Reports";
const LOGIN: &str = "ann@example.com";
const PASSWORD: &str = "correct horse battery staple";
const NOW: i64 = 1_700_000_000;

struct PageApp {
    keys: AuthorizeKeys,
    redirect_uri: String,
}

fn page(status: StatusCode, redirect_uri: &str, html: String, cookie: Option<String>) -> Response {
    let mut headers = HeaderMap::new();
    for (name, value) in security_headers(Some(redirect_uri)) {
        headers.insert(name, value.parse().unwrap());
    }
    if let Some(cookie) = cookie {
        headers.insert(header::SET_COOKIE, cookie.parse().unwrap());
    }
    (status, headers, html).into_response()
}

fn redirect(location: String) -> Response {
    (StatusCode::FOUND, [(header::LOCATION, location)]).into_response()
}

fn pending_from(headers: &HeaderMap, keys: &AuthorizeKeys) -> Option<PendingAuthorization> {
    let cookies = headers.get(header::COOKIE)?.to_str().ok()?;
    let value = cookies
        .split(';')
        .filter_map(|c| c.trim().split_once('='))
        .find(|(name, _)| *name == PENDING_COOKIE_NAME)?
        .1;
    PendingAuthorization::open(value, keys, NOW).ok()
}

/// The pending request a form post continues: 400 without one, 403 unless the post's CSRF
/// token answers `form` for it.
fn pending_for_form(
    app: &PageApp,
    headers: &HeaderMap,
    form: CsrfForm,
    csrf_token: &str,
) -> Result<PendingAuthorization, StatusCode> {
    let pending = pending_from(headers, &app.keys).ok_or(StatusCode::BAD_REQUEST)?;
    if !verify_csrf_token(&app.keys, form, &pending, csrf_token) {
        return Err(StatusCode::FORBIDDEN);
    }
    Ok(pending)
}

fn sign_in_page(app: &PageApp, pending: &PendingAuthorization, error: Option<&str>) -> String {
    render_sign_in(&SignInPage {
        app_name: APP_NAME,
        form_action: "/oauth2/v0/authorize",
        csrf_token: &csrf_token(&app.keys, CsrfForm::SignIn, pending),
        login: if error.is_some() { LOGIN } else { "" },
        error,
    })
}

async fn start(State(app): State<Arc<PageApp>>) -> Response {
    let request = ValidatedAuthorization {
        client_id: ClientId::new(OsRandom.uuid()),
        redirect_uri: app.redirect_uri.clone(),
        scopes: Scopes::parse("openid payroll com.example.read").unwrap(),
        state: Some("af0ifjsldkj".into()),
        nonce: None,
        prompt: Prompt::default(),
        code_challenge: None,
    };
    let pending = PendingAuthorization::new(request, &OsRandom, NOW);
    let cookie = set_pending_cookie(&pending.seal(&app.keys, &OsRandom).unwrap(), false);
    let html = sign_in_page(&app, &pending, None);
    page(StatusCode::OK, &app.redirect_uri, html, Some(cookie))
}

#[derive(serde::Deserialize)]
struct ConsentForm {
    decision: String,
    csrf_token: String,
}

#[derive(serde::Deserialize)]
struct SignInForm {
    login: String,
    password: String,
    csrf_token: String,
}

async fn sign_in(
    State(app): State<Arc<PageApp>>,
    headers: HeaderMap,
    Form(form): Form<SignInForm>,
) -> Result<Response, StatusCode> {
    let mut pending = pending_for_form(&app, &headers, CsrfForm::SignIn, &form.csrf_token)?;
    if form.login != LOGIN || form.password != PASSWORD {
        let message = sign_in_message(ErrorCode::IncorrectCredentials);
        let html = sign_in_page(&app, &pending, Some(message));
        return Ok(page(StatusCode::OK, &app.redirect_uri, html, None));
    }
    pending.signed_in_user = Some(PrincipalId::new(OsRandom.uuid()));
    let cookie = set_pending_cookie(&pending.seal(&app.keys, &OsRandom).unwrap(), false);
    let scopes: Vec<&str> = pending.request.scopes.iter().collect();
    let html = render_consent(&ConsentPage {
        app_name: APP_NAME,
        form_action: "/oauth2/v0/authorize/consent",
        csrf_token: &csrf_token(&app.keys, CsrfForm::Consent, &pending),
        scopes: &scopes,
    });
    Ok(page(StatusCode::OK, &app.redirect_uri, html, Some(cookie)))
}

async fn consent(
    State(app): State<Arc<PageApp>>,
    headers: HeaderMap,
    Form(form): Form<ConsentForm>,
) -> Result<Response, StatusCode> {
    let pending = pending_for_form(&app, &headers, CsrfForm::Consent, &form.csrf_token)?;
    let Some(user) = pending.signed_in_user else {
        return Err(StatusCode::FORBIDDEN);
    };
    let request = &pending.request;
    if form.decision != "approve" {
        return Ok(redirect(
            ErrorRedirect::denied(&request.redirect_uri, request.state.as_deref()).location(),
        ));
    }
    let issued = issue_code(&pending, user, &OsRandom, NOW);
    let geolocation = Geolocation::parse("https://us.api.example.com").unwrap();
    Ok(redirect(code_location(
        &request.redirect_uri,
        &issued.code,
        &geolocation,
        request.state.as_deref(),
    )))
}

async fn callback() -> &'static str {
    "The application received the answer."
}

/// Serves the pages on 127.0.0.1 and the client's callback on `localhost` (another origin).
async fn serve() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let app = Arc::new(PageApp {
        keys: AuthorizeKeys::derive(&[42; 32]).unwrap(),
        redirect_uri: format!("http://localhost:{port}/callback"),
    });
    let router = Router::new()
        .route("/oauth2/v0/authorize", get(start).post(sign_in))
        .route("/oauth2/v0/authorize/consent", axum::routing::post(consent))
        .route("/callback", get(callback))
        .with_state(app);
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    format!("http://127.0.0.1:{port}")
}

async fn sign_in_as(browser: &Browser, base: &str, password: &str) {
    browser
        .goto(&format!("{base}/oauth2/v0/authorize"))
        .await
        .unwrap();
    browser.fill_by_label("Login", LOGIN).await.unwrap();
    browser.fill_by_label("Password", password).await.unwrap();
    browser.click_button("Sign in").await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_consent_and_approve_in_a_real_browser() {
    let base = serve().await;
    let browser = Browser::start()
        .await
        .expect("chromedriver and chromium start");

    browser
        .goto(&format!("{base}/oauth2/v0/authorize"))
        .await
        .unwrap();
    assert!(browser.text().await.unwrap().contains(APP_NAME));
    browser.screenshot("pages-sign-in").await.unwrap();

    sign_in_as(&browser, &base, "wrong password").await;
    let text = browser.text().await.unwrap();
    assert!(
        text.contains("The login or password is not correct."),
        "{text}"
    );
    assert!(
        !text.contains("invalid_grant") && !text.contains(" 5 "),
        "{text}"
    );
    browser.screenshot("pages-sign-in-error").await.unwrap();

    sign_in_as(&browser, &base, PASSWORD).await;
    let text = browser.text().await.unwrap();
    assert!(
        text.contains(&format!("{APP_NAME} would like to:")),
        "{text}"
    );
    assert!(text.contains("See and manage your payroll data"), "{text}");
    assert!(
        text.contains("com.example.read"),
        "unknown scopes are still shown: {text}"
    );
    browser.screenshot("pages-consent").await.unwrap();

    browser.click_button("Allow").await.unwrap();
    let landed = browser.current_url().await.unwrap();
    assert_eq!(landed.host_str(), Some("localhost"), "{landed}");
    assert_eq!(landed.path(), "/callback");
    let query: Vec<(String, String)> = landed.query_pairs().into_owned().collect();
    let get = |k: &str| {
        query
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(get("code").map(|c| c.len()), Some(43), "{landed}");
    assert_eq!(get("state").as_deref(), Some("af0ifjsldkj"));
    assert_eq!(
        get("geolocation").as_deref(),
        Some("https://us.api.example.com")
    );
    browser.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deny_redirects_with_access_denied() {
    let base = serve().await;
    let browser = Browser::start()
        .await
        .expect("chromedriver and chromium start");
    sign_in_as(&browser, &base, PASSWORD).await;
    browser.click_button("Deny").await.unwrap();
    let landed = browser.current_url().await.unwrap();
    assert_eq!(landed.path(), "/callback");
    assert!(
        landed
            .query_pairs()
            .any(|(k, v)| k == "error" && v == "access_denied"),
        "{landed}"
    );
    assert!(
        landed
            .query_pairs()
            .any(|(k, v)| k == "state" && v == "af0ifjsldkj"),
        "{landed}"
    );
    browser.close().await.unwrap();
}
