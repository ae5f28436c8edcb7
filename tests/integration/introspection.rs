//! `POST /oauth2/v0/introspect` (RFC 7662): own, foreign, expired, revoked and garbage tokens, on
//! both stores.

use crate::support::app::{json_of, TestApp, TestClient};
use reqwest::StatusCode;
use serde_json::{json, Value};
use token_domain::clock::Clock;
use token_domain::secrets::TokenHash;
use token_domain::RefreshRotation;

use crate::refresh_rotation::user_family;

const PASSWORD: &str = "introspection password 1";

crate::on_both_stores!(
    own_access_and_refresh_tokens_are_active_with_their_claims,
    another_clients_tokens_read_inactive,
    expired_tokens_read_inactive,
    rotated_refresh_tokens_read_inactive,
    garbage_reads_inactive_and_requests_are_checked,
);

/// Introspects `token` as `client` (client_secret_post); panics unless the answer is 200.
pub(crate) async fn introspect(app: &TestApp, client: &TestClient, token: &str) -> Value {
    let (status, body) = json_of(
        app.post_form(
            "/oauth2/v0/introspect",
            &[
                ("client_id", &client.id),
                ("client_secret", &client.secret),
                ("token", token),
            ],
        )
        .await,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "introspection: {body}");
    body
}

pub(crate) fn assert_inactive(body: &Value, what: &str) {
    assert_eq!(
        body,
        &json!({"active": false}),
        "{what} must read inactive, and nothing else"
    );
}

async fn own_access_and_refresh_tokens_are_active_with_their_claims(app: TestApp) {
    let client = app.create_client("read write").await;
    let user = app.create_user("ida", PASSWORD).await;
    let tokens = app.user_tokens(&client, "ida", PASSWORD).await;
    let now = app.clock.now();

    let access = introspect(&app, &client, tokens["access_token"].as_str().unwrap()).await;
    assert_eq!(access["active"], true, "{access}");
    assert_eq!(access["scope"], "read write");
    assert_eq!(access["client_id"], client.id);
    assert_eq!(access["sub"], user.id.to_string());
    assert_eq!(access["token_type"], "Bearer");
    assert_eq!(access["principal_type"], "user");
    assert_eq!(access["iat"], now);
    assert_eq!(access["exp"], now + 3600);

    let refresh = introspect(&app, &client, tokens["refresh_token"].as_str().unwrap()).await;
    assert_eq!(refresh["active"], true, "{refresh}");
    assert_eq!(refresh["token_type"], "refresh_token");
    assert_eq!(refresh["client_id"], client.id);
    assert_eq!(refresh["sub"], user.id.to_string());
    assert_eq!(refresh["principal_type"], "user");
    assert_eq!(refresh["scope"], "read write");
    assert_eq!(refresh["exp"], now + 180 * 86_400, "the family's expiry");
    assert_eq!(refresh["iat"], now, "when the refresh token was issued");
    // All of it from the family: the first token names its family and has no record.
    let first = TokenHash::of(tokens["refresh_token"].as_str().unwrap());
    let record = app.store.families().get_refresh_token(&first, now).await;
    assert_eq!(
        record.unwrap(),
        None,
        "nothing stored under the first token's digest"
    );

    // Basic authentication and JSON bodies work too; the hint is only a hint.
    let response = app
        .http
        .post(app.url("/oauth2/v0/introspect"))
        .basic_auth(&client.id, Some(&client.secret))
        .json(&json!({"token": tokens["access_token"], "token_type_hint": "refresh_token"}))
        .send()
        .await
        .unwrap();
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["active"], true, "{body}");

    let application = app.app_token(&client).await;
    let body = introspect(&app, &client, &application).await;
    assert_eq!(body["active"], true, "{body}");
    assert_eq!(body["principal_type"], "application");
    assert_eq!(body["sub"], client.id);
}

async fn another_clients_tokens_read_inactive(app: TestApp) {
    let owner = app.create_client("read").await;
    let other = app.create_client("read").await;
    app.create_user("jules", PASSWORD).await;
    let tokens = app.user_tokens(&owner, "jules", PASSWORD).await;
    for name in ["access_token", "refresh_token"] {
        let body = introspect(&app, &other, tokens[name].as_str().unwrap()).await;
        assert_inactive(&body, &format!("another client's {name}"));
    }
    let application = app.app_token(&owner).await;
    assert_inactive(
        &introspect(&app, &other, &application).await,
        "another client's application token",
    );
}

async fn expired_tokens_read_inactive(app: TestApp) {
    let client = app.create_client("read").await;
    app.create_user("kim", PASSWORD).await;
    let tokens = app.user_tokens(&client, "kim", PASSWORD).await;
    let access = tokens["access_token"].as_str().unwrap();
    let refresh = tokens["refresh_token"].as_str().unwrap();

    app.clock.advance(3600);
    assert_inactive(
        &introspect(&app, &client, access).await,
        "an expired access token",
    );
    assert_eq!(introspect(&app, &client, refresh).await["active"], true);

    app.clock.advance(180 * 86_400);
    assert_inactive(
        &introspect(&app, &client, refresh).await,
        "an expired refresh token",
    );
}

async fn rotated_refresh_tokens_read_inactive(app: TestApp) {
    let (client, tokens) = user_family(&app, RefreshRotation::Rotate, "read").await;
    let first = tokens["refresh_token"].as_str().unwrap();
    app.clock.advance(60);
    let rotated_at = app.clock.now();
    let (status, rotated) = app.refresh(&client, first).await;
    assert_eq!(status, StatusCode::OK, "{rotated}");
    let successor = rotated["refresh_token"].as_str().unwrap();
    assert_ne!(
        successor, first,
        "a rotating client's refresh answers a new token"
    );
    assert_inactive(
        &introspect(&app, &client, first).await,
        "a rotated refresh token",
    );
    let successor_claims = introspect(&app, &client, successor).await;
    assert_eq!(successor_claims["active"], true, "{successor_claims}");
    assert_eq!(
        successor_claims["iat"], rotated_at,
        "the successor's own issue time"
    );
}

async fn garbage_reads_inactive_and_requests_are_checked(app: TestApp) {
    let client = app.create_client("read").await;
    for garbage in ["x", "eyJhbGciOiJFUzI1NiJ9.e30.sig", &"A".repeat(300)] {
        assert_inactive(&introspect(&app, &client, garbage).await, "garbage");
    }

    let (status, body) = json_of(
        app.post_form(
            "/oauth2/v0/introspect",
            &[("client_id", &client.id), ("client_secret", &client.secret)],
        )
        .await,
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "no token: {body}");
    assert_eq!(body["error"], "invalid_request");

    let (status, body) = json_of(
        app.post_form(
            "/oauth2/v0/introspect",
            &[
                ("client_id", &client.id),
                ("client_secret", "wrong"),
                ("token", "x"),
            ],
        )
        .await,
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_eq!(body["code"], 64);
}
