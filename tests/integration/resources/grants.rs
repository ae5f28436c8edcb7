//! `resource` on the grants that start something new (client credentials, a password, the
//! device authorization request), in a form or JSON, and their refusals: a malformed resource
//! and one the client's `--resource` list does not name are `invalid_target` (160).

use reqwest::StatusCode;
use serde_json::json;

use super::{claims, introspect, token_with_resources, API, FILES};
use crate::device::{approval, decide, poll, request_codes};
use crate::support::app::{json_of, TestApp, TestClient};
use crate::support::assertions::assert_token_error;
use token_core::admin::NewClient;
use token_domain::clock::Clock;
use token_domain::{Resource, Scopes};

crate::on_both_stores!(
    client_credentials_tokens_are_for_the_named_resources,
    password_families_keep_their_resources,
    malformed_resources_are_invalid_target,
    a_client_resource_list_narrows_every_grant,
    the_device_grant_carries_its_resources,
    aud_carries_the_normal_form_the_allow_list_compared,
);

const LOGIN: &str = "res@example.com";
const PASSWORD: &str = "resource indicators 1";

fn client_credentials() -> Vec<(&'static str, &'static str)> {
    vec![("grant_type", "client_credentials")]
}

async fn narrowed_client(app: &TestApp, resources: &[&str]) -> TestClient {
    app.create_client_with(NewClient {
        resources: resources
            .iter()
            .map(|r| Resource::parse(r).unwrap())
            .collect(),
        ..NewClient::named("narrowed", Scopes::parse("read").unwrap())
    })
    .await
}

async fn client_credentials_tokens_are_for_the_named_resources(app: TestApp) {
    let client = app.create_client("read").await;
    let (status, one) = token_with_resources(&app, &client, &client_credentials(), &[API]).await;
    assert_eq!(status, StatusCode::OK, "{one}");
    let access = one["access_token"].as_str().unwrap();
    assert_eq!(claims(&app, access).await["aud"], API);
    let active = introspect(&app, &client, access).await;
    assert_eq!(active["aud"], API, "{active}");
    assert_eq!(active["principal_type"], "application");

    // Repeats of one resource count once; two are an array, in the order sent.
    let (status, two) =
        token_with_resources(&app, &client, &client_credentials(), &[FILES, API, FILES]).await;
    assert_eq!(status, StatusCode::OK, "{two}");
    let access = two["access_token"].as_str().unwrap();
    assert_eq!(claims(&app, access).await["aud"], json!([FILES, API]));

    // JSON says several with an array.
    let (status, json_body) = json_of(
        app.post_json(
            "/v0/token",
            &json!({
                "grant_type": "client_credentials",
                "client_id": client.id,
                "client_secret": client.secret,
                "resource": [API, FILES],
            }),
        )
        .await,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{json_body}");
    let access = json_body["access_token"].as_str().unwrap();
    assert_eq!(claims(&app, access).await["aud"], json!([API, FILES]));

    // Without resource: as before, this deployment.
    let plain = app.app_token(&client).await;
    let geolocation = app.geolocation().to_string();
    assert_eq!(claims(&app, &plain).await["aud"], geolocation.as_str());
    assert_eq!(
        introspect(&app, &client, &plain).await["aud"],
        geolocation.as_str()
    );
}

async fn password_families_keep_their_resources(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = app.create_client("read").await;
    let form = [
        ("grant_type", "password"),
        ("username", LOGIN),
        ("password", PASSWORD),
    ];
    let (status, tokens) = token_with_resources(&app, &client, &form, &[API]).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    assert_eq!(
        claims(&app, tokens["access_token"].as_str().unwrap()).await["aud"],
        API
    );
    let refresh = tokens["refresh_token"].as_str().unwrap();
    let (status, refreshed) = app.refresh(&client, refresh).await;
    assert_eq!(status, StatusCode::OK, "{refreshed}");
    assert_eq!(
        claims(&app, refreshed["access_token"].as_str().unwrap()).await["aud"],
        API
    );
    let refused = token_with_resources(
        &app,
        &client,
        &[
            ("grant_type", "refresh_token"),
            (
                "refresh_token",
                refreshed["refresh_token"].as_str().unwrap(),
            ),
        ],
        &[FILES],
    )
    .await;
    assert_token_error(&refused, 400, "invalid_target", 160);
}

async fn malformed_resources_are_invalid_target(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = app.create_client("read").await;
    for resource in [
        "https://api.example.com/mcp#section",
        "https://api.example.com/#",
        "/mcp",
        "mcp",
        "urn:example:api",
        "ftp://files.example.com/",
        "http://api.example.com/mcp",
        "https://api.example.com/a b",
    ] {
        let refused = token_with_resources(&app, &client, &client_credentials(), &[resource]).await;
        assert_token_error(&refused, 400, "invalid_target", 160);
        let form = [
            ("grant_type", "password"),
            ("username", LOGIN),
            ("password", PASSWORD),
        ];
        let refused = token_with_resources(&app, &client, &form, &[API, resource]).await;
        assert_token_error(&refused, 400, "invalid_target", 160);
    }
    let too_many: Vec<String> = (0..17)
        .map(|i| format!("https://r{i}.example.com"))
        .collect();
    let too_many: Vec<&str> = too_many.iter().map(String::as_str).collect();
    let refused = token_with_resources(&app, &client, &client_credentials(), &too_many).await;
    assert_token_error(&refused, 400, "invalid_target", 160);
    // An unauthenticated client learns nothing about resources: 401 first.
    let wrong = TestClient {
        secret: "wrong".into(),
        ..client.clone()
    };
    let refused = token_with_resources(&app, &wrong, &client_credentials(), &["/mcp"]).await;
    assert_eq!(refused.0, StatusCode::UNAUTHORIZED, "{}", refused.1);
}

async fn a_client_resource_list_narrows_every_grant(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = narrowed_client(&app, &[API]).await;
    let (status, allowed) =
        token_with_resources(&app, &client, &client_credentials(), &[API]).await;
    assert_eq!(status, StatusCode::OK, "{allowed}");
    let refused = token_with_resources(&app, &client, &client_credentials(), &[FILES]).await;
    assert_token_error(&refused, 400, "invalid_target", 160);
    let refused = token_with_resources(&app, &client, &client_credentials(), &[API, FILES]).await;
    assert_token_error(&refused, 400, "invalid_target", 160);
    let form = [
        ("grant_type", "password"),
        ("username", LOGIN),
        ("password", PASSWORD),
    ];
    let refused = token_with_resources(&app, &client, &form, &[FILES]).await;
    assert_token_error(&refused, 400, "invalid_target", 160);
    // Without resource the client's list does not matter: a token for this deployment.
    let plain = app.app_token(&client).await;
    let geolocation = app.geolocation().to_string();
    assert_eq!(claims(&app, &plain).await["aud"], geolocation.as_str());
    // The list is stored with the client.
    let stored = app
        .store
        .clients()
        .get_client(&client.id.parse().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.resources, vec![Resource::parse(API).unwrap()]);
}

async fn the_device_grant_carries_its_resources(app: TestApp) {
    let user = app.create_user(LOGIN, PASSWORD).await;
    let client = narrowed_client(&app, &[API, FILES]).await;
    let refused = request_codes(&app, &client, &[("resource", "https://other.example.com")]).await;
    assert_token_error(&refused, 400, "invalid_target", 160);
    let (status, codes) =
        request_codes(&app, &client, &[("resource", API), ("resource", FILES)]).await;
    assert_eq!(status, StatusCode::OK, "{codes}");
    let user_code = codes["user_code"].as_str().unwrap();
    assert!(decide(&app, user_code, &approval(user.id, app.clock.now())).await);
    let device_code = codes["device_code"].as_str().unwrap();
    let (status, tokens) = poll(&app, &client, device_code).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    assert_eq!(
        claims(&app, tokens["access_token"].as_str().unwrap()).await["aud"],
        json!([API, FILES])
    );
    let refresh = tokens["refresh_token"].as_str().unwrap();
    let (status, narrowed) = token_with_resources(
        &app,
        &client,
        &[("grant_type", "refresh_token"), ("refresh_token", refresh)],
        &[FILES],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{narrowed}");
    assert_eq!(
        claims(&app, narrowed["access_token"].as_str().unwrap()).await["aud"],
        FILES
    );
}

/// A client narrowed to `/mcp` that spells it with a dot segment, an upper-case host and the
/// default port gets `aud` as the allow-list compared it, never as spelled: a resource server
/// matching its own name must not see a path it never allowed.
async fn aud_carries_the_normal_form_the_allow_list_compared(app: TestApp) {
    let client = narrowed_client(&app, &[API]).await;
    let spelled = "https://API.example.com:443/a/../mcp";
    let (status, body) =
        token_with_resources(&app, &client, &client_credentials(), &[spelled]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let access = body["access_token"].as_str().unwrap();
    assert_eq!(claims(&app, access).await["aud"], API);
    assert_eq!(introspect(&app, &client, access).await["aud"], API);
    // A path outside the list stays refused however it is spelled.
    let refused = token_with_resources(
        &app,
        &client,
        &client_credentials(),
        &["https://api.example.com/mcp/../admin"],
    )
    .await;
    assert_token_error(&refused, 400, "invalid_target", 160);
}
