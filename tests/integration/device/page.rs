//! The verification page over HTTP: enter the code, sign in (starting a session) or use a live
//! one, consent naming the client and scopes, approve or deny, "return to your device"; the
//! page rules; wrong codes counted against the address.

use super::*;
use crate::authorize::flow::{csrf, verify_with_jwks};
use crate::support::assertions::assert_token_error;
use reqwest::{header, StatusCode};
use token_core::admin::NewClient;
use token_domain::Scopes;

crate::on_both_stores!(
    enter_sign_in_approve_then_the_poll_gets_the_family,
    a_live_session_skips_the_sign_in_and_deny_is_access_denied,
    wrong_codes_are_counted_against_the_address_then_refused,
    forms_without_their_csrf_token_are_refused,
    the_code_page_warns_and_a_self_registered_app_is_marked,
);

pub const LOGIN: &str = "ann";
pub const PASSWORD: &str = "correct horse battery";
pub const APP_NAME: &str = "Living Room TV";

/// A device client asking for `openid read`.
pub async fn device_client(app: &TestApp) -> TestClient {
    app.create_client_with(NewClient::named(APP_NAME, Scopes::parse("read").unwrap()))
        .await
}

/// One browser on the page: its cookies between requests.
pub(crate) struct Page<'a> {
    app: &'a TestApp,
    cookies: Vec<String>,
}

impl<'a> Page<'a> {
    pub(crate) fn new(app: &'a TestApp) -> Self {
        Self {
            app,
            cookies: Vec::new(),
        }
    }

    fn keep(&mut self, response: &reqwest::Response) {
        for set in response.headers().get_all(header::SET_COOKIE) {
            let pair = set.to_str().unwrap().split(';').next().unwrap().to_owned();
            let name = pair.split('=').next().unwrap().to_owned();
            self.cookies.retain(|c| !c.starts_with(&format!("{name}=")));
            self.cookies.push(pair);
        }
    }

    /// The `Cookie` header this browser sends.
    pub(super) fn cookie_header(&self) -> String {
        self.cookies.join("; ")
    }

    pub(crate) async fn open(&mut self, query: &str) -> reqwest::Response {
        let mut request = self
            .app
            .http
            .get(self.app.url(&format!("/oauth2/v0/device{query}")));
        if !self.cookies.is_empty() {
            request = request.header(header::COOKIE, self.cookies.join("; "));
        }
        let response = request.send().await.unwrap();
        self.keep(&response);
        response
    }

    pub(crate) async fn post(&mut self, form: &[(&str, &str)]) -> reqwest::Response {
        let mut request = self
            .app
            .http
            .post(self.app.url("/oauth2/v0/device"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(serde_urlencoded::to_string(form).unwrap());
        if !self.cookies.is_empty() {
            request = request.header(header::COOKIE, self.cookies.join("; "));
        }
        let response = request.send().await.unwrap();
        self.keep(&response);
        response
    }

    /// Opens the page and submits `typed`; the answer's HTML.
    pub(crate) async fn enter(&mut self, typed: &str) -> (StatusCode, String) {
        let html = self.open("").await.text().await.unwrap();
        let answer = self
            .post(&[
                ("csrf_token", &csrf(&html)),
                ("action", "code"),
                ("user_code", typed),
            ])
            .await;
        (answer.status(), answer.text().await.unwrap())
    }
}

pub(crate) fn field(html: &str, name: &str) -> String {
    let marker = format!(r#"name="{name}" value=""#);
    let start = html.find(&marker).expect("the field") + marker.len();
    html[start..].split('"').next().unwrap().to_owned()
}

async fn enter_sign_in_approve_then_the_poll_gets_the_family(app: TestApp) {
    let user = app.create_user(LOGIN, PASSWORD).await;
    let client = device_client(&app).await;
    let body = codes(&app, &client, "openid read").await;
    let user_code = body["user_code"].as_str().unwrap();
    let mut page = Page::new(&app);

    let complete = page.open(&format!("?user_code={user_code}")).await;
    assert_eq!(complete.status(), StatusCode::OK);
    let headers = complete.headers().clone();
    assert!(headers.contains_key("content-security-policy"));
    assert_eq!(headers["x-frame-options"], "DENY");
    assert!(headers["cache-control"]
        .to_str()
        .unwrap()
        .contains("no-store"));
    let html = complete.text().await.unwrap();
    assert_eq!(field(&html, "user_code"), user_code, "pre-filled");
    assert!(html.contains(r#"<label for="user_code">"#), "labelled");

    let typed = user_code.replace('-', "").to_lowercase();
    let (status, sign_in) = page.enter(&typed).await;
    assert_eq!(status, StatusCode::OK, "{sign_in}");
    assert!(sign_in.contains(APP_NAME), "{sign_in}");
    assert!(sign_in.contains(r#"name="password""#), "{sign_in}");
    let answer = page
        .post(&[
            ("csrf_token", &csrf(&sign_in)),
            ("action", "sign_in"),
            ("user_code", &field(&sign_in, "user_code")),
            ("login", LOGIN),
            ("password", "wrong"),
        ])
        .await;
    let again = answer.text().await.unwrap();
    assert!(
        again.contains("The login or password is not correct."),
        "{again}"
    );
    let signed_in_at = app.clock.now();
    let answer = page
        .post(&[
            ("csrf_token", &csrf(&again)),
            ("action", "sign_in"),
            ("user_code", &field(&again, "user_code")),
            ("login", LOGIN),
            ("password", PASSWORD),
        ])
        .await;
    assert!(
        answer
            .headers()
            .get_all(header::SET_COOKIE)
            .iter()
            .any(|c| c.to_str().unwrap().starts_with("__Host-session=")),
        "the sign-in starts a session"
    );
    let consent = answer.text().await.unwrap();
    assert!(consent.contains(APP_NAME), "{consent}");
    assert!(
        consent.contains("Confirm who you are when you sign in"),
        "{consent}"
    );
    assert!(consent.contains("read"), "{consent}");
    assert_token_error(
        &poll(&app, &client, body["device_code"].as_str().unwrap()).await,
        400,
        "authorization_pending",
        170,
    );

    let done = page
        .post(&[
            ("csrf_token", &csrf(&consent)),
            ("user_code", &field(&consent, "user_code")),
            ("action", "approve"),
        ])
        .await;
    assert_eq!(done.status(), StatusCode::OK);
    let done = done.text().await.unwrap();
    assert!(done.contains("Return to your device"), "{done}");

    app.clock.advance(5);
    let (status, tokens) = poll(&app, &client, body["device_code"].as_str().unwrap()).await;
    assert_eq!(status, 200, "{tokens}");
    assert_eq!(tokens["id"], user.id.to_string());
    let (_, claims) = verify_with_jwks(&app, tokens["id_token"].as_str().unwrap()).await;
    assert!(claims["sid"].is_string(), "{claims}");
    assert_eq!(claims["auth_time"], signed_in_at, "{claims}");
}

async fn a_live_session_skips_the_sign_in_and_deny_is_access_denied(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = device_client(&app).await;
    let mut page = Page::new(&app);
    // A first code, to sign in.
    let first = codes(&app, &client, "read").await;
    let (_, sign_in) = page.enter(first["user_code"].as_str().unwrap()).await;
    page.post(&[
        ("csrf_token", &csrf(&sign_in)),
        ("action", "sign_in"),
        ("user_code", &field(&sign_in, "user_code")),
        ("login", LOGIN),
        ("password", PASSWORD),
    ])
    .await;
    // The next code goes straight to the consent screen.
    let second = codes(&app, &client, "read").await;
    let (status, consent) = page.enter(second["user_code"].as_str().unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    assert!(!consent.contains(r#"name="password""#), "{consent}");
    assert!(consent.contains("Allow"), "{consent}");
    // The consent form is useless for another code.
    let forged = page
        .post(&[
            ("csrf_token", &csrf(&consent)),
            ("user_code", first["user_code"].as_str().unwrap()),
            ("action", "approve"),
        ])
        .await;
    assert_eq!(forged.status(), StatusCode::BAD_REQUEST);
    let denied = page
        .post(&[
            ("csrf_token", &csrf(&consent)),
            ("user_code", &field(&consent, "user_code")),
            ("action", "deny"),
        ])
        .await;
    assert!(denied
        .text()
        .await
        .unwrap()
        .contains("Return to your device"));
    assert_token_error(
        &poll(&app, &client, second["device_code"].as_str().unwrap()).await,
        400,
        "access_denied",
        172,
    );
}

async fn wrong_codes_are_counted_against_the_address_then_refused(app: TestApp) {
    let client = device_client(&app).await;
    let body = codes(&app, &client, "read").await;
    let mut page = Page::new(&app);
    // RATE_LIMIT_OTP_FAILURES_PER_HOUR's default: ten wrong codes, then the address is blocked.
    for attempt in 0..10 {
        let (status, html) = page.enter("BBBB-BBBB").await;
        assert_eq!(status, StatusCode::OK, "attempt {attempt}: {html}");
        assert!(html.contains("That code is not valid"), "{html}");
    }
    let (status, html) = page.enter(body["user_code"].as_str().unwrap()).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{html}");
}

async fn forms_without_their_csrf_token_are_refused(app: TestApp) {
    let client = device_client(&app).await;
    let body = codes(&app, &client, "read").await;
    let mut page = Page::new(&app);
    page.open("").await;
    let answer = page
        .post(&[
            ("csrf_token", "forged"),
            ("action", "code"),
            ("user_code", body["user_code"].as_str().unwrap()),
        ])
        .await;
    assert_eq!(answer.status(), StatusCode::BAD_REQUEST);
    let mut stranger = Page::new(&app);
    let answer = stranger
        .post(&[
            ("action", "approve"),
            ("user_code", body["user_code"].as_str().unwrap()),
        ])
        .await;
    assert_eq!(answer.status(), StatusCode::BAD_REQUEST);
}

/// Part 20 (RFC 8628 §5.4): the code page warns, before anything is typed, against a code
/// someone sent; the consent marks an app that registered itself (part 17), and only such an
/// app.
async fn the_code_page_warns_and_a_self_registered_app_is_marked(app: TestApp) {
    use token_domain::secrets::TokenHash;
    use token_domain::{DynamicRegistration, RegisteredAuthMethod};
    app.create_user(LOGIN, PASSWORD).await;
    let mut page = Page::new(&app);
    let blank = page.open("").await.text().await.unwrap();
    let warning = "Never enter a code that someone sent you";
    assert!(blank.contains(warning), "{blank}");

    for self_registered in [false, true] {
        let client = device_client(&app).await;
        if self_registered {
            let clients = app.store.clients();
            let id = token_domain::ClientId::parse(&client.id).unwrap();
            let mut stored = clients.get_client(&id).await.unwrap().unwrap();
            stored.registration = Some(DynamicRegistration {
                access_token_hash: TokenHash::of("registration access token"),
                auth_method: RegisteredAuthMethod::ClientSecretBasic,
                client_uri: None,
                logo_uri: None,
                policy_uri: None,
                tos_uri: None,
                backchannel_logout_session_required: false,
                jwks_uri: None,
            });
            clients.put_client(&stored).await.unwrap();
        }
        let body = codes(&app, &client, "read").await;
        let mut page = Page::new(&app);
        let (status, sign_in) = page.enter(body["user_code"].as_str().unwrap()).await;
        assert_eq!(status, StatusCode::OK, "{sign_in}");
        let consent = page
            .post(&[
                ("csrf_token", &csrf(&sign_in)),
                ("action", "sign_in"),
                ("user_code", &field(&sign_in, "user_code")),
                ("login", LOGIN),
                ("password", PASSWORD),
            ])
            .await
            .text()
            .await
            .unwrap();
        assert!(consent.contains(APP_NAME), "{consent}");
        assert_eq!(
            consent.contains("This app registered itself and is not verified."),
            self_registered,
            "{consent}"
        );
    }
}
