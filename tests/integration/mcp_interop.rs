//! The official MCP SDKs as agents with no prior relationship (TypeScript,
//! `tests/interop/node/mcp.mjs`; Python, `tests/interop/python/mcp_agent.py`): discovery through a small MCP server's protected resource
//! metadata, dynamic registration, the code flow with PKCE and `resource` (the driver plays the
//! user on our pages), a tool call the MCP server accepts only when the token's `aud` is itself,
//! and a refresh. On both stores, with registration open. `documents`: the same SDKs with a
//! client ID metadata document instead of registration.

use crate::support::app::TestApp;
use crate::support::relying_party::{run_case, Driver, RelyingParty};
use token_domain::ClientId;

mod documents;

crate::on_both_stores!(with crate::registration::open();
    the_typescript_sdk_registers_authorizes_and_calls_a_tool,
    the_python_sdk_registers_authorizes_and_calls_a_tool,
);

async fn the_typescript_sdk_registers_authorizes_and_calls_a_tool(app: TestApp) {
    passes(app, Driver::McpNode, "mcp-dcr", "MCP SDK interop agent").await;
}

async fn the_python_sdk_registers_authorizes_and_calls_a_tool(app: TestApp) {
    passes(
        app,
        Driver::McpPython,
        "mcp-python-dcr",
        "MCP Python SDK interop agent",
    )
    .await;
}

/// Runs `case` of `driver`; checks the user, the audience and the stored registration.
async fn passes(app: TestApp, driver: Driver, case: &str, client_name: &str) {
    let rp = RelyingParty::register(&app).await;
    let result = run_case(&app, &rp, driver, case).await;
    assert_eq!(result["sub"], rp.user.id.to_string(), "{result}");
    let aud = result["aud"]
        .as_str()
        .expect("one audience: the MCP server");
    assert!(
        aud.starts_with("http://127.0.0.1:") && aud.ends_with("/mcp"),
        "{aud}"
    );
    let id = ClientId::parse(result["client_id"].as_str().unwrap()).unwrap();
    let client = app
        .store
        .clients()
        .get_client(&id)
        .await
        .unwrap()
        .expect("the SDK's registration is stored");
    assert!(client.registration.is_some(), "a self-registered client");
    assert_eq!(client.name, client_name);
}
