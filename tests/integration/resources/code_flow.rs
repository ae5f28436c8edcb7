//! The authorization code flow with `resource`: the authorize request names them, the code
//! grants them, the token's `aud` is them; a refresh narrows to one of them and is refused any
//! other; the authorize endpoint redirects `invalid_target` (160) for one not allowed.

use reqwest::StatusCode;
use serde_json::json;

use super::{claims, introspect, token_with_resources, API, FILES};
use crate::authorize::flow::{
    code_client, exchange, query, redirect_query, Session, LOGIN, PASSWORD, REDIRECT_URI, STATE,
    VERIFIER,
};
use crate::support::app::{TestApp, TestClient};
use crate::support::assertions::assert_token_error;
use token_core::admin::NewClient;
use token_core::flows::authorize::s256_challenge;
use token_domain::{Resource, Scopes};

crate::on_both_stores!(
    one_resource_gives_a_string_aud_and_two_an_array,
    a_refresh_narrows_to_a_granted_resource_and_never_another,
    the_token_request_narrows_what_the_code_granted,
    without_resource_tokens_are_for_this_deployment,
    the_authorize_endpoint_redirects_invalid_target,
    a_client_resource_list_narrows_the_authorize_endpoint,
);

/// The page flow for `client` with each of `resources`, approved; returns the code.
async fn code_for(app: &TestApp, client: &TestClient, resources: &[&str]) -> String {
    let challenge = s256_challenge(VERIFIER);
    let mut query = query(
        client,
        &[
            ("scope", "openid read offline_access"),
            ("prompt", "consent"),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
        ],
    );
    query.extend(resources.iter().map(|r| ("resource", *r)));
    let redirect = Session::new(app).decide(&query, "approve").await;
    redirect["code"].clone()
}

/// The code flow's tokens for `resources`.
async fn code_flow_tokens(
    app: &TestApp,
    client: &TestClient,
    resources: &[&str],
) -> serde_json::Value {
    let code = code_for(app, client, resources).await;
    let (status, body) = exchange(app, client, &code, &[]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

fn refresh_form(refresh_token: &str) -> Vec<(&str, &str)> {
    vec![
        ("grant_type", "refresh_token"),
        ("refresh_token", refresh_token),
    ]
}

async fn one_resource_gives_a_string_aud_and_two_an_array(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = code_client(&app).await;

    let one = code_flow_tokens(&app, &client, &[API]).await;
    let access = one["access_token"].as_str().unwrap();
    assert_eq!(claims(&app, access).await["aud"], API);
    let active = introspect(&app, &client, access).await;
    assert_eq!(active["active"], true, "{active}");
    assert_eq!(active["aud"], API, "{active}");

    let two = code_flow_tokens(&app, &client, &[API, FILES]).await;
    let access = two["access_token"].as_str().unwrap();
    assert_eq!(claims(&app, access).await["aud"], json!([API, FILES]));
    assert_eq!(
        introspect(&app, &client, access).await["aud"],
        json!([API, FILES])
    );
    // The family remembers both: its refresh token introspects with them.
    let refresh = two["refresh_token"].as_str().unwrap();
    let family = introspect(&app, &client, refresh).await;
    assert_eq!(family["aud"], json!([API, FILES]), "{family}");
    // The ID token is still the client's.
    let id_token = two["id_token"].as_str().unwrap();
    assert_eq!(claims(&app, id_token).await["aud"], client.id);
}

async fn a_refresh_narrows_to_a_granted_resource_and_never_another(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = code_client(&app).await;
    let tokens = code_flow_tokens(&app, &client, &[API, FILES]).await;
    let refresh = tokens["refresh_token"].as_str().unwrap().to_owned();

    // Another resource, even one the deployment allows: 160, and nothing rotates.
    let refused = token_with_resources(
        &app,
        &client,
        &refresh_form(&refresh),
        &["https://other.example.com"],
    )
    .await;
    assert_token_error(&refused, 400, "invalid_target", 160);
    let malformed = token_with_resources(&app, &client, &refresh_form(&refresh), &["/mcp"]).await;
    assert_token_error(&malformed, 400, "invalid_target", 160);
    let mixed = token_with_resources(
        &app,
        &client,
        &refresh_form(&refresh),
        &[FILES, "https://x.example.com"],
    )
    .await;
    assert_token_error(&mixed, 400, "invalid_target", 160);

    // One of them: a token for that one alone.
    let (status, narrowed) =
        token_with_resources(&app, &client, &refresh_form(&refresh), &[FILES]).await;
    assert_eq!(status, StatusCode::OK, "{narrowed}");
    let access = narrowed["access_token"].as_str().unwrap();
    assert_eq!(claims(&app, access).await["aud"], FILES);
    assert_eq!(introspect(&app, &client, access).await["aud"], FILES);

    // The family keeps both: the next refresh may name the other, or none for both.
    let next = narrowed["refresh_token"].as_str().unwrap();
    let (status, other) = token_with_resources(&app, &client, &refresh_form(next), &[API]).await;
    assert_eq!(status, StatusCode::OK, "{other}");
    assert_eq!(
        claims(&app, other["access_token"].as_str().unwrap()).await["aud"],
        API
    );
    let next = other["refresh_token"].as_str().unwrap();
    let (status, both) = token_with_resources(&app, &client, &refresh_form(next), &[]).await;
    assert_eq!(status, StatusCode::OK, "{both}");
    assert_eq!(
        claims(&app, both["access_token"].as_str().unwrap()).await["aud"],
        json!([API, FILES])
    );
    let family_id = app
        .stored_refresh_token(both["refresh_token"].as_str().unwrap())
        .await
        .family_id;
    let family = app.stored_family(&family_id).await;
    assert_eq!(
        family.resources,
        vec![
            Resource::parse(API).unwrap(),
            Resource::parse(FILES).unwrap()
        ]
    );
}

async fn the_token_request_narrows_what_the_code_granted(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = code_client(&app).await;
    // A resource the code did not grant: refused, and the code is still good.
    let code = code_for(&app, &client, &[API, FILES]).await;
    let refused = exchange(
        &app,
        &client,
        &code,
        &[("resource", "https://other.example.com")],
    )
    .await;
    assert_token_error(&refused, 400, "invalid_target", 160);
    let (status, body) = exchange(&app, &client, &code, &[("resource", API)]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        claims(&app, body["access_token"].as_str().unwrap()).await["aud"],
        API
    );
    // The family was granted both: a refresh may name the other.
    let refresh = body["refresh_token"].as_str().unwrap();
    let (status, other) =
        token_with_resources(&app, &client, &refresh_form(refresh), &[FILES]).await;
    assert_eq!(status, StatusCode::OK, "{other}");

    // A code granted without resources grants none: naming one at the token endpoint is 160.
    let plain = code_for(&app, &client, &[]).await;
    let refused = exchange(&app, &client, &plain, &[("resource", API)]).await;
    assert_token_error(&refused, 400, "invalid_target", 160);
}

async fn without_resource_tokens_are_for_this_deployment(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = code_client(&app).await;
    let tokens = code_flow_tokens(&app, &client, &[]).await;
    let access = tokens["access_token"].as_str().unwrap();
    let geolocation = app.geolocation().to_string();
    assert_eq!(claims(&app, access).await["aud"], geolocation.as_str());
    assert_eq!(
        introspect(&app, &client, access).await["aud"],
        geolocation.as_str()
    );
    // The family has none: a refresh may not name one, and without one stays the same.
    let refresh = tokens["refresh_token"].as_str().unwrap();
    assert!(introspect(&app, &client, refresh)
        .await
        .get("aud")
        .is_none());
    let refused = token_with_resources(&app, &client, &refresh_form(refresh), &[API]).await;
    assert_token_error(&refused, 400, "invalid_target", 160);
    let (status, refreshed) = app.refresh(&client, refresh).await;
    assert_eq!(status, StatusCode::OK, "{refreshed}");
    let access = refreshed["access_token"].as_str().unwrap();
    assert_eq!(claims(&app, access).await["aud"], geolocation.as_str());
    // Only tokens for this deployment are accepted by its own APIs (userinfo).
    let userinfo = app
        .http
        .get(app.url("/oauth2/v0/userinfo"))
        .bearer_auth(access)
        .send()
        .await
        .unwrap();
    assert_eq!(userinfo.status(), StatusCode::OK);
    let for_api = code_flow_tokens(&app, &client, &[API]).await;
    let userinfo = app
        .http
        .get(app.url("/oauth2/v0/userinfo"))
        .bearer_auth(for_api["access_token"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(userinfo.status(), StatusCode::UNAUTHORIZED);
}

/// The authorize request with `resources`; asserts a `302` to the client with 160.
async fn assert_authorize_refused(app: &TestApp, client: &TestClient, resources: &[&str]) {
    let mut query = query(client, &[]);
    query.extend(resources.iter().map(|r| ("resource", *r)));
    let answer = Session::new(app).open(&query).await;
    let redirect = redirect_query(&answer);
    assert_eq!(redirect["error"], "invalid_target", "{resources:?}");
    assert_eq!(redirect["error_code"], "160", "{resources:?}");
    assert_eq!(redirect["state"], STATE);
    assert!(!redirect.contains_key("code"));
}

async fn the_authorize_endpoint_redirects_invalid_target(app: TestApp) {
    let client = code_client(&app).await;
    for resources in [
        &["https://api.example.com/mcp#fragment"][..],
        &["/mcp"],
        &["api.example.com"],
        &["urn:example:api"],
        // Plain http only on loopback when RESOURCES is empty.
        &["http://api.example.com/mcp"],
        &[API, "https://api.example.com/#x"],
    ] {
        assert_authorize_refused(&app, &client, resources).await;
    }
    // The same refusal by POST (OpenID Connect Core 3.1.2.1).
    let mut form = query(&client, &[]);
    form.push(("resource", "/relative"));
    let answer = Session::new(&app).post(&form).await;
    assert_eq!(redirect_query(&answer)["error_code"], "160");
    // Loopback http is allowed: the sign-in page.
    let mut query = query(&client, &[]);
    query.push(("resource", "http://127.0.0.1:9000/mcp"));
    let page = Session::new(&app).open(&query).await;
    assert_eq!(page.status(), StatusCode::OK);
}

async fn a_client_resource_list_narrows_the_authorize_endpoint(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let mut new = NewClient::named(
        "narrowed",
        Scopes::parse("openid read offline_access").unwrap(),
    );
    new.redirect_uris = vec![REDIRECT_URI.to_owned()];
    new.resources = vec![Resource::parse(API).unwrap()];
    let client = app.create_client_with(new).await;
    assert_authorize_refused(&app, &client, &[FILES]).await;
    assert_authorize_refused(&app, &client, &[API, FILES]).await;
    let tokens = code_flow_tokens(&app, &client, &[API]).await;
    assert_eq!(
        claims(&app, tokens["access_token"].as_str().unwrap()).await["aud"],
        API
    );
}
