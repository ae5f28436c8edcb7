//! Resource indicators (RFC 8707) end to end on both stores: `resource` at the authorize
//! endpoint and the token endpoint, the access token's `aud` (a string for one resource, an
//! array for several, this deployment without any), narrowing on a code's redemption and on
//! refresh, introspection's `aud`, and every `invalid_target` (160): a malformed resource, one
//! outside the deployment's `RESOURCES`, outside the client's `--resource` list, or never
//! granted. `code_flow` covers the browser flow and refresh, `grants` the grants that start
//! something new, `policy` a deployment with `RESOURCES` set.

mod code_flow;
mod consent;
mod grants;
mod policy;

use reqwest::StatusCode;
use serde_json::Value;

use crate::authorize::flow::verify_with_jwks;
use crate::support::app::{json_of, TestApp, TestClient};

pub const API: &str = "https://api.example.com/mcp";
pub const FILES: &str = "https://files.example.com";

/// The claims of `access_token`, verified against the published JWK Set.
pub async fn claims(app: &TestApp, access_token: &str) -> Value {
    verify_with_jwks(app, access_token).await.1
}

/// `POST /oauth2/v0/introspect` as `client`; asserts 200.
pub async fn introspect(app: &TestApp, client: &TestClient, token: &str) -> Value {
    let (status, body) = json_of(
        app.post_form(
            "/oauth2/v0/introspect",
            &[
                ("token", token),
                ("client_id", &client.id),
                ("client_secret", &client.secret),
            ],
        )
        .await,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "introspection: {body}");
    body
}

/// A token request as `client` with `form` and each of `resources` as a `resource`.
pub async fn token_with_resources(
    app: &TestApp,
    client: &TestClient,
    form: &[(&str, &str)],
    resources: &[&str],
) -> (StatusCode, Value) {
    let mut request = vec![
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
    ];
    request.extend_from_slice(form);
    request.extend(resources.iter().map(|r| ("resource", *r)));
    app.token(&request).await
}

/// The OpenAPI document names `resource` at the token endpoint, the device authorization
/// endpoint and the authorize endpoint, and `aud` in introspection's answer.
#[tokio::test]
async fn the_openapi_document_lists_the_resource_parameter() {
    let app = TestApp::spawn(crate::support::app::Backend::Sqlite)
        .await
        .unwrap();
    let document = app.get_json("/openapi.json").await;
    let schemas = &document["components"]["schemas"];
    let token = &schemas["TokenRequest"]["properties"]["resource"];
    assert!(
        token["description"].as_str().unwrap().contains("RFC 8707"),
        "{token}"
    );
    let authorize = document["paths"]["/oauth2/v0/authorize"]["get"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "resource")
        .expect("the authorize endpoint lists resource");
    assert_eq!(authorize["in"], "query");
    assert!(
        document.to_string().contains("\"aud\""),
        "introspection's answer lists aud"
    );
}
