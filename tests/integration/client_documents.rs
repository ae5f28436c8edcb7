//! Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document), on both stores:
//! a `client_id` that is a URL names a document the server fetches from the test's own server
//! on loopback (allowed as `CLIENT_ID_METADATA_ALLOW_HOSTS` allows it, under the name
//! `agent.test`). `flow`: the code flow with PKCE and `private_key_jwt`, the URL as `client_id`
//! in every token and answer, the cache per `Cache-Control` and its clamp, the switch. `refusals`:
//! every refusal of the fetcher (internal addresses, a name with one internal address, http, a
//! redirect, a large body, a slow server) and of the document, each an error page, never a
//! redirect. `limit`: fetches per source address (`RATE_LIMIT_DOCUMENT_FETCHES_PER_HOUR`).

use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};
use token_adapters::outbound::fetcher;
use token_core::config::{Policy, RateLimits};
use token_core::outbound::AllowedHosts;
use uuid::Uuid;

use crate::authorize::flow::{query, Session, REDIRECT_URI};
use crate::support::app::{AppOptions, Backend, TestApp, TestClient};
use crate::support::document_server::{DocumentServer, Served, TestResolver};

mod flow;
mod limit;
mod refusals;

/// The name the test's document server is reached by (resolved to loopback, and allowed).
pub const AGENT_HOST: &str = "agent.test";

/// An app with the documents on, and the server its documents come from.
pub struct Documents {
    pub app: TestApp,
    pub server: DocumentServer,
    pub resolver: Arc<TestResolver>,
}

/// Names the refusals use, and what they resolve to.
const NAMES: &[(&str, &[&str])] = &[
    (AGENT_HOST, &["127.0.0.1"]),
    ("public.test", &["93.184.215.14"]),
    ("loopback.test", &["127.0.0.1"]),
    ("private.test", &["192.168.1.20"]),
    ("metadata.test", &["169.254.169.254"]),
    ("v6-loopback.test", &["::1"]),
    ("mapped.test", &["::ffff:127.0.0.1"]),
    // One public address and one private one: either could be the one connected to.
    ("mixed.test", &["93.184.215.14", "10.0.0.7"]),
];

/// The documents on, fetched with a 3 s time limit.
pub async fn documents(backend: Backend) -> Option<Documents> {
    with_timeout(backend, Duration::from_secs(3), true).await
}

/// The documents on, at most [`limit::FETCHES`] fetched per source address and hour.
pub async fn fetches_limited(backend: Backend) -> Option<Documents> {
    let limits = RateLimits {
        document_fetches_per_hour: limit::FETCHES,
        ..RateLimits::default()
    };
    with_policy(backend, Duration::from_secs(3), true, limits).await
}

/// The documents on, fetched with a 300 ms time limit (the slow server's test: the production
/// limit, 5 s, is the outbound client's own unit test).
pub async fn impatient(backend: Backend) -> Option<Documents> {
    with_timeout(backend, Duration::from_millis(300), true).await
}

/// The documents off (the default), the server and the resolver there all the same.
pub async fn switched_off(backend: Backend) -> Option<Documents> {
    with_timeout(backend, Duration::from_secs(3), false).await
}

async fn with_timeout(backend: Backend, timeout: Duration, on: bool) -> Option<Documents> {
    with_policy(backend, timeout, on, RateLimits::default()).await
}

async fn with_policy(
    backend: Backend,
    timeout: Duration,
    on: bool,
    rate_limits: RateLimits,
) -> Option<Documents> {
    let server = DocumentServer::start().await;
    let resolver = TestResolver::new(NAMES);
    let allowed = AllowedHosts::parse(&format!("{AGENT_HOST}:{}", server.port)).unwrap();
    let fetcher = fetcher(allowed)
        .with_resolver(resolver.clone())
        .with_timeout(timeout);
    let options = AppOptions {
        policy: Policy {
            client_id_metadata_documents: on,
            rate_limits,
            ..Policy::default()
        },
        document_fetcher: Some(fetcher),
        ..AppOptions::default()
    };
    let app = TestApp::spawn_with(backend, options).await?;
    Some(Documents {
        app,
        server,
        resolver,
    })
}

/// A path of its own on the server, so that log lines and counts are the test's.
pub fn fresh_path(name: &str) -> String {
    format!("/{}/{name}", Uuid::new_v4())
}

impl Documents {
    /// `http://agent.test:<port><path>`: a client_id URL the server may fetch.
    pub fn url(&self, path: &str) -> String {
        format!("http://{AGENT_HOST}:{}{path}", self.server.port)
    }

    /// Serves a public client's document at a fresh path; its URL, the client_id.
    pub fn public_client(&self, max_age: Option<u64>) -> TestClient {
        let path = fresh_path("client.json");
        let url = self.url(&path);
        self.server
            .serve(&path, Served::json(&public_document(&url), max_age));
        TestClient {
            id: url,
            secret: String::new(),
        }
    }
}

/// A public client's document: the code flow and refresh, PKCE its only protection.
pub fn public_document(client_id: &str) -> Value {
    json!({
        "client_id": client_id,
        "client_name": "Docs Agent",
        "client_uri": "https://app.example.com",
        "redirect_uris": [REDIRECT_URI],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "scope": "openid profile",
    })
}

/// `GET /oauth2/v0/authorize` for `client_id` (with PKCE), as a browser.
pub async fn open_authorize(app: &TestApp, client_id: &str) -> reqwest::Response {
    let client = TestClient {
        id: client_id.to_owned(),
        secret: String::new(),
    };
    let challenge = token_core::flows::authorize::s256_challenge(crate::authorize::flow::VERIFIER);
    let query = query(
        &client,
        &[
            ("scope", "openid profile"),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
        ],
    );
    Session::new(app).open(&query).await
}

/// The authorize request for `client_id` ends on the error page naming the document (400, no
/// redirect), and the service logged why, in words containing `reason`.
pub async fn assert_refused(documents: &Documents, client_id: &str, reason: &str) {
    let response = open_authorize(&documents.app, client_id).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{client_id}");
    assert!(
        response.headers().get("location").is_none(),
        "never a redirect: {client_id}"
    );
    let page = response.text().await.unwrap();
    assert!(
        page.contains("client ID metadata document"),
        "{client_id}: {page}"
    );
    assert!(
        !page.contains(REDIRECT_URI),
        "no address of the client is trusted: {page}"
    );
    let logged =
        crate::support::logs::captured_lines_with(&format!("\"client_id\":\"{client_id}\""));
    assert!(
        logged
            .iter()
            .any(|line| line.contains("document refused") && line.contains(reason)),
        "{client_id}: the reason ({reason}) is logged: {logged:#?}"
    );
}
