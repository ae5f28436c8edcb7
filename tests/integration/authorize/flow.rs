//! Drives `/oauth2/v0/authorize` over plain HTTP the way a browser would: keeps the pending
//! request's cookie, reads the CSRF token from the page, posts the forms. And checks ID tokens
//! against the published JWK Set with p256 alone.

use std::collections::HashMap;

use crate::support::app::{TestApp, TestClient};
use crate::support::assertions::assert_signed_by_jwks;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use reqwest::{header, StatusCode};
use serde_json::Value;
use token_core::admin::NewClient;
use token_core::flows::authorize::s256_challenge;
use token_domain::Scopes;

pub const REDIRECT_URI: &str = "https://app.example.com/callback";
pub const APP_NAME: &str = "Expense Reports";
pub const LOGIN: &str = "ann@example.com";
pub const PASSWORD: &str = "correct horse battery staple";
pub const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
pub const STATE: &str = "af0ifjsldkj";

/// A client registered for the code flow, with `REDIRECT_URI`.
pub async fn code_client(app: &TestApp) -> TestClient {
    let mut new = NewClient::named(
        APP_NAME,
        Scopes::parse("openid read offline_access").unwrap(),
    );
    new.redirect_uris = vec![REDIRECT_URI.to_owned()];
    app.create_client_with(new).await
}

/// The authorize query for `client`, with `extra` added or overriding.
pub fn query<'a>(client: &'a TestClient, extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut query = vec![
        ("client_id", client.id.as_str()),
        ("redirect_uri", REDIRECT_URI),
        ("response_type", "code"),
        ("scope", "openid read"),
        ("state", STATE),
    ];
    for (name, value) in extra {
        query.retain(|(n, _)| n != name);
        query.push((name, value));
    }
    query
}

/// One browser: the pending-request cookie and the sign-in session's cookie between requests.
pub struct Session<'a> {
    app: &'a TestApp,
    http: reqwest::Client,
    /// The pending request's cookie (`name=value`), as the browser would send it next.
    pub cookie: Option<String>,
    /// The sign-in session's cookie (`__Host-session=value`), sent with every request.
    pub sso_cookie: Option<String>,
}

impl<'a> Session<'a> {
    pub fn new(app: &'a TestApp) -> Self {
        Self {
            app,
            http: app.http.clone(),
            cookie: None,
            sso_cookie: None,
        }
    }

    /// A browser at another loopback address (`127.0.0.2`, ...): another source to the server.
    pub fn from_address(app: &'a TestApp, source: std::net::IpAddr) -> Self {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .local_address(source)
            .build()
            .unwrap();
        Self {
            app,
            http,
            cookie: None,
            sso_cookie: None,
        }
    }

    pub async fn open(&mut self, query: &[(&str, &str)]) -> reqwest::Response {
        self.get(query, false).await
    }

    /// A `GET` of the authorize endpoint with the pending request's cookie too, as a browser
    /// sends it back there (after a company identity provider).
    pub async fn resume(&mut self, query: &[(&str, &str)]) -> reqwest::Response {
        self.get(query, true).await
    }

    async fn get(&mut self, query: &[(&str, &str)], pending: bool) -> reqwest::Response {
        let mut request = self
            .http
            .get(self.app.url("/oauth2/v0/authorize"))
            .query(query);
        if let Some(cookie) = self.cookie_header(pending) {
            request = request.header(header::COOKIE, cookie);
        }
        let response = request
            .send()
            .await
            .expect("request reaches the test server");
        self.keep_cookie(&response);
        response
    }

    pub async fn post(&mut self, form: &[(&str, &str)]) -> reqwest::Response {
        let mut request = self
            .http
            .post(self.app.url("/oauth2/v0/authorize"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(serde_urlencoded::to_string(form).unwrap());
        if let Some(cookie) = self.cookie_header(true) {
            request = request.header(header::COOKIE, cookie);
        }
        let response = request
            .send()
            .await
            .expect("request reaches the test server");
        self.keep_cookie(&response);
        response
    }

    /// The `Cookie` header: the session's cookie, and the pending request's with `pending`.
    fn cookie_header(&self, pending: bool) -> Option<String> {
        let pending = self.cookie.as_ref().filter(|_| pending);
        let cookies: Vec<&str> = [pending, self.sso_cookie.as_ref()]
            .into_iter()
            .flatten()
            .map(String::as_str)
            .collect();
        (!cookies.is_empty()).then(|| cookies.join("; "))
    }

    fn keep_cookie(&mut self, response: &reqwest::Response) {
        for set in response.headers().get_all(header::SET_COOKIE) {
            let pair = set.to_str().unwrap().split(';').next().unwrap().to_owned();
            if pair.starts_with("__Host-session=") {
                self.sso_cookie = Some(pair).filter(|pair| pair != "__Host-session=");
            } else {
                self.cookie = Some(pair);
            }
        }
    }

    /// Opens the page and signs in; returns the answer to the sign-in form.
    pub async fn sign_in_answer(
        &mut self,
        query: &[(&str, &str)],
        password: &str,
    ) -> reqwest::Response {
        let page = self.open(query).await;
        assert_eq!(page.status(), StatusCode::OK, "the sign-in page");
        let html = page.text().await.unwrap();
        self.post(&[
            ("csrf_token", &csrf(&html)),
            ("login", LOGIN),
            ("password", password),
        ])
        .await
    }

    /// Opens the page and signs in; returns the consent page's HTML.
    pub async fn sign_in(&mut self, query: &[(&str, &str)], password: &str) -> String {
        let answer = self.sign_in_answer(query, password).await;
        assert_eq!(answer.status(), StatusCode::OK);
        answer.text().await.unwrap()
    }

    /// Signs in and answers the consent page; returns the redirect's query. A consent the user
    /// gave before answers at once (then `decision` must be `approve`).
    pub async fn decide(
        &mut self,
        query: &[(&str, &str)],
        decision: &str,
    ) -> HashMap<String, String> {
        let answer = self.sign_in_answer(query, PASSWORD).await;
        if answer.status() == StatusCode::FOUND {
            assert_eq!(decision, "approve", "a remembered consent approves");
            return redirect_query(&answer);
        }
        assert_eq!(answer.status(), StatusCode::OK);
        let consent = answer.text().await.unwrap();
        let answer = self
            .post(&[("csrf_token", &csrf(&consent)), ("decision", decision)])
            .await;
        redirect_query(&answer)
    }
}

/// The CSRF token in a page's form.
pub fn csrf(html: &str) -> String {
    let marker = r#"name="csrf_token" value=""#;
    let start = html.find(marker).expect("the page has a CSRF field") + marker.len();
    html[start..].split('"').next().unwrap().to_owned()
}

/// A `302` to `REDIRECT_URI`: its query parameters.
#[track_caller]
pub fn redirect_query(response: &reqwest::Response) -> HashMap<String, String> {
    assert_eq!(response.status(), StatusCode::FOUND, "a redirect");
    let location = response.headers()[header::LOCATION].to_str().unwrap();
    assert!(location.starts_with(REDIRECT_URI), "{location}");
    url::Url::parse(location)
        .unwrap()
        .query_pairs()
        .into_owned()
        .collect()
}

/// Runs the whole page flow with PKCE and a nonce; returns the code.
pub async fn approved_code(app: &TestApp, client: &TestClient) -> String {
    let challenge = s256_challenge(VERIFIER);
    let query = query(
        client,
        &[
            ("nonce", "n-0S6_WzA2Mj"),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
        ],
    );
    let redirect = Session::new(app).decide(&query, "approve").await;
    redirect["code"].clone()
}

/// The token request for `code`, with `extra` added or overriding.
pub async fn exchange(
    app: &TestApp,
    client: &TestClient,
    code: &str,
    extra: &[(&str, &str)],
) -> (StatusCode, Value) {
    let mut form = vec![
        ("grant_type", "authorization_code"),
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
        ("code", code),
        ("redirect_uri", REDIRECT_URI),
        ("code_verifier", VERIFIER),
    ];
    for (name, value) in extra {
        form.retain(|(n, _)| n != name);
        if !value.is_empty() {
            form.push((name, value));
        }
    }
    app.token(&form).await
}

/// Checks a JWT's ES256 signature with the app's published JWK Set and p256 alone (not the
/// library that signed it); returns its header and claims.
pub async fn verify_with_jwks(app: &TestApp, token: &str) -> (Value, Value) {
    let jwks: Value = app.get_json("/v0/token/jwks").await;
    let signed = assert_signed_by_jwks(token, &jwks);
    (signed.header, signed.claims)
}

/// `at_hash` recomputed by hand: the left half of SHA-256 over the access token's ASCII.
pub fn at_hash(access_token: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(access_token.as_bytes());
    URL_SAFE_NO_PAD.encode(&digest[..16])
}

/// The ID token of a grant's answer `body`, checked: signed per the JWK Set, issued here for
/// `subject` and `client`, its `at_hash` the answer's access token's, and the principal type.
/// Returns its claims.
pub async fn assert_id_token(
    app: &TestApp,
    body: &Value,
    subject: &str,
    client: &TestClient,
    principal_type: &str,
) -> Value {
    let id_token = body["id_token"]
        .as_str()
        .unwrap_or_else(|| panic!("no id_token in {body}"));
    let (header, claims) = verify_with_jwks(app, id_token).await;
    assert_ne!(
        header["typ"], "at+jwt",
        "an ID token is not an access token"
    );
    assert_eq!(claims["iss"], app.geolocation().as_str(), "{claims}");
    assert_eq!(claims["sub"], subject, "{claims}");
    assert_eq!(claims["aud"], client.id, "{claims}");
    assert_eq!(claims["principal_type"], principal_type, "{claims}");
    let access_token = body["access_token"].as_str().expect("an access token");
    assert_eq!(claims["at_hash"], at_hash(access_token), "{claims}");
    claims
}
