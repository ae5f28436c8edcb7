//! The MCP SDKs with a client ID metadata document instead of registration: each SDK is given
//! the document's URL (TypeScript `OAuthClientProvider.clientMetadataUrl`, Python
//! `OAuthClientProvider(client_metadata_url=...)`), sees `client_id_metadata_document_supported`
//! and uses the URL as its `client_id`; the test serves the document over https on loopback
//! with a certificate of a test authority that only this app's fetcher trusts
//! (`token_adapters::outbound::fetcher_with_roots`). Registration is off, so nothing else could have named the client.

use std::sync::Arc;

use reqwest::StatusCode;
use serde_json::json;
use token_adapters::outbound::fetcher_with_roots;
use token_core::config::Policy;
use token_core::outbound::AllowedHosts;
use token_domain::clock::Clock;
use token_domain::ClientId;

use crate::client_documents::{fresh_path, open_authorize};
use crate::support::app::{AppOptions, Backend, TestApp};
use crate::support::document_server::{DocumentServer, Served, TestResolver};
use crate::support::relying_party::{run_case_with, Driver, RelyingParty};
use crate::support::test_ca::TestCa;

crate::on_both_stores!(using super::agent_host;
    the_typescript_sdk_names_itself_by_its_metadata_document,
    the_python_sdk_names_itself_by_its_metadata_document,
    a_certificate_of_another_authority_is_refused,
);

/// The agent's host name: resolved to loopback and allowed, with a certificate for it.
const AGENT_HOST: &str = "mcp-agent.test";

struct AgentHost {
    app: TestApp,
    server: DocumentServer,
    /// Allowed as `server` is, with a certificate of another authority.
    stranger: DocumentServer,
}

impl AgentHost {
    fn url(&self, path: &str) -> String {
        format!("https://{AGENT_HOST}:{}{path}", self.server.port)
    }
}

/// The app with documents on (registration off, the default), fetching from an https server
/// whose certificate a fresh test authority signed.
async fn agent_host(backend: Backend) -> Option<AgentHost> {
    let ca = TestCa::new();
    let server = DocumentServer::start_tls(ca.server_config(&[AGENT_HOST])).await;
    let stranger = DocumentServer::start_tls(TestCa::new().server_config(&[AGENT_HOST])).await;
    let resolver: Arc<TestResolver> = TestResolver::new(&[(AGENT_HOST, &["127.0.0.1"])]);
    let allowed = AllowedHosts::parse(&format!(
        "{AGENT_HOST}:{} {AGENT_HOST}:{}",
        server.port, stranger.port
    ))
    .unwrap();
    let fetcher = fetcher_with_roots(allowed, ca.roots()).with_resolver(resolver);
    let options = AppOptions {
        policy: Policy {
            client_id_metadata_documents: true,
            ..Policy::default()
        },
        document_fetcher: Some(fetcher),
        ..AppOptions::default()
    };
    let app = TestApp::spawn_with(backend, options).await?;
    Some(AgentHost {
        app,
        server,
        stranger,
    })
}

async fn the_typescript_sdk_names_itself_by_its_metadata_document(host: AgentHost) {
    passes(&host, Driver::McpNode, "mcp-cimd").await;
}

async fn the_python_sdk_names_itself_by_its_metadata_document(host: AgentHost) {
    passes(&host, Driver::McpPython, "mcp-python-cimd").await;
}

/// Serves the agent's document, runs `case` with its URL; checks the user, the audience, that
/// the URL was the client throughout and that one fetch served the whole flow.
async fn passes(host: &AgentHost, driver: Driver, case: &str) {
    let app = &host.app;
    let rp = RelyingParty::register(app).await;
    let path = fresh_path("agent.json");
    let url = host.url(&path);
    // The scope is every one registration allows: the Python SDK asks for the server's
    // `scopes_supported` when the MCP server's metadata names none.
    let document = json!({
        "client_id": url,
        "client_name": "MCP agent by document",
        "redirect_uris": [rp.redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "scope": "openid profile email offline_access",
    });
    host.server
        .serve(&path, Served::json(&document, Some(3600)));

    let extra = vec![("CLIENT_METADATA_URL", url.clone())];
    let result = run_case_with(app, &rp, driver, case, extra).await;
    assert_eq!(result["client_id"], url, "{result}");
    assert_eq!(result["sub"], rp.user.id.to_string(), "{result}");
    let aud = result["aud"]
        .as_str()
        .expect("one audience: the MCP server");
    assert!(
        aud.starts_with("http://127.0.0.1:") && aud.ends_with("/mcp"),
        "{aud}"
    );
    assert_eq!(
        host.server.hits(&path),
        1,
        "authorize, code, refresh: one fetch (fresh for an hour)"
    );
    let kept = app
        .store
        .document_clients()
        .get_document_client(&ClientId::of_document_url(&url), app.clock.now())
        .await
        .unwrap()
        .expect("the document's client is kept");
    assert_eq!(kept.client.document_url.as_deref(), Some(url.as_str()));
    assert_eq!(kept.client.name, "MCP agent by document");
}

/// The test root is trusted by this app's fetcher only, and only for what it signed: a server
/// for the same name, equally allowed, with another authority's certificate is refused (the
/// error page), its document never requested.
async fn a_certificate_of_another_authority_is_refused(host: AgentHost) {
    let path = fresh_path("agent.json");
    let url = format!("https://{AGENT_HOST}:{}{path}", host.stranger.port);
    host.stranger
        .serve(&path, Served::json(&json!({"client_id": url}), None));

    let response = open_authorize(&host.app, &url).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert!(response.headers().get("location").is_none());
    assert_eq!(
        host.stranger.all_hits(),
        0,
        "no request without a trusted handshake"
    );
    let logged = crate::support::logs::captured_lines_with(&format!("\"client_id\":\"{url}\""));
    assert!(
        logged
            .iter()
            .any(|line| line.contains("document refused") && line.contains("TLS")),
        "the reason is logged: {logged:#?}"
    );
}
