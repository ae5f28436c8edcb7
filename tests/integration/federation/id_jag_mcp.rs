//! Enterprise-managed authorization with the official MCP Python SDK (`mcp` 2.3.0,
//! `tests/interop/python/enterprise_auth.py`), on both stores: the agent trades its ID token
//! for an assertion at the company's identity provider (one deployment), the SDK's
//! `IdentityAssertionOAuthProvider` redeems it with the jwt-bearer grant at the MCP server's
//! authorization server (the other), and the SDK's own MCP server accepts the token for a tool
//! call only when it is that server's, for itself.

use std::path::Path;

use serde_json::Value;
use token_core::admin;
use token_domain::{ClientId, IdJagTarget, Resource, Scopes};
use tokio::process::Command;

use super::id_jag_fixture::{Pair, ID_JAG, SCOPES};
use crate::support::oidc_idp::free_port;

crate::on_both_stores!(using crate::federation::id_jag_fixture::pair;
    the_mcp_sdk_calls_a_tool_with_an_assertion_of_the_companys_idp,
);

async fn the_mcp_sdk_calls_a_tool_with_an_assertion_of_the_companys_idp(p: Pair) {
    let port = free_port();
    let server = format!("http://127.0.0.1:{port}/mcp");
    // The target names the MCP server the SDK derives from its URL.
    let target = IdJagTarget {
        audience: p.app.geolocation().as_str().to_owned(),
        client_id: p.app_agent.id.clone(),
        resources: vec![Resource::parse(&server).unwrap()],
        scopes: Some(Scopes::parse(SCOPES).unwrap()),
    };
    let agent = ClientId::parse(&p.agent.id).unwrap();
    admin::add_id_jag_target(p.idp.ctx(), &agent, target)
        .await
        .unwrap();
    let id_token = p.id_token().await;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let python = root.join(".cache/rp-venv/bin/python");
    assert!(
        python.is_file(),
        "{} is missing: run `infra/relying-parties.sh install` (infra/test.sh does)",
        python.display()
    );
    let output = Command::new(python)
        .arg(root.join("tests/interop/python/enterprise_auth.py"))
        .env("IDP_TOKEN_ENDPOINT", p.idp.url("/v0/token"))
        .env("IDP_CLIENT_ID", &p.agent.id)
        .env("IDP_CLIENT_SECRET", &p.agent.secret)
        .env("ID_TOKEN", &id_token)
        .env("AS_ISSUER", p.app.geolocation().as_str())
        .env("AS_CLIENT_ID", &p.app_agent.id)
        .env("AS_CLIENT_SECRET", &p.app_agent.secret)
        .env("MCP_PORT", port.to_string())
        .env("SCOPE", SCOPES)
        .kill_on_drop(true)
        .output()
        .await
        .expect("the MCP agent runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let result: Value = serde_json::from_str(&stdout).unwrap_or_else(|_| {
        panic!(
            "the MCP agent printed no JSON ({}): {stdout}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        )
    });
    assert!(output.status.success(), "{result}");
    assert_eq!(result["resource"], server, "{result}");
    assert_eq!(result["id_jag_answer"]["issued_token_type"], ID_JAG);
    assert_eq!(result["id_jag_answer"]["token_type"], "N_A");
    assert_eq!(result["id_jag_header"]["typ"], "oauth-id-jag+jwt");
    let asserted = &result["id_jag_claims"];
    assert_eq!(asserted["iss"], p.idp.geolocation().as_str(), "{result}");
    assert_eq!(asserted["aud"], p.app.geolocation().as_str(), "{result}");
    assert_eq!(asserted["client_id"], p.app_agent.id, "{result}");
    assert_eq!(asserted["resource"], server, "{result}");
    assert_eq!(asserted["sub"], p.user.id.to_string(), "{result}");
    assert_eq!(result["token_type"], "Bearer", "{result}");
    assert_eq!(result["tools"], serde_json::json!(["whoami"]));
    let whoami = &result["whoami"];
    assert_eq!(whoami["iss"], p.app.geolocation().as_str(), "{result}");
    assert_eq!(whoami["aud"], server, "{result}");
    assert_eq!(whoami["client_id"], p.app_agent.id, "{result}");
    assert_eq!(whoami["scope"], SCOPES, "{result}");
    assert_eq!(result["invalid_token_status"], 401);
    // The token the tool saw is the app's user linked to the identity provider's subject.
    let link = p.link().await;
    assert_eq!(whoami["sub"], link.user_id.to_string(), "{result}");
}
