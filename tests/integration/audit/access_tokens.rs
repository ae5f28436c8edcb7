//! `access_token.revoked`: an access token revoked on its own (RFC 7009) is recorded once, with
//! its client, principal and family (an application token's: its client only), by the request
//! that revoked it; a repeat records nothing.

use crate::support::app::{json_of, jti_of, TestApp, TestClient};
use reqwest::StatusCode;
use serde_json::Value;
use uuid::Uuid;

use super::{
    assert_no_secret_recorded, assert_recorded, client_subject, events_of, family_of, json, traced,
    Expected,
};
use crate::authorize::flow::PASSWORD;

crate::on_both_stores!(
    an_access_token_revoked_alone_is_recorded_once,
    an_application_token_revoked_is_recorded_under_its_client,
);

/// `POST /oauth2/v0/revoke` of `token` as `client`, traced with `correlation_id`.
async fn revoke(app: &TestApp, client: &TestClient, token: &str, correlation_id: &str) {
    let request = traced(app.http.post(app.url("/oauth2/v0/revoke")), correlation_id).form(&[
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
        ("token", token),
    ]);
    let response = request.send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}

fn text<'a>(body: &'a Value, name: &str) -> &'a str {
    body[name].as_str().unwrap()
}

async fn an_access_token_revoked_alone_is_recorded_once(app: TestApp) {
    let client = app.create_client("read").await;
    let login = format!("revoked-{}", Uuid::new_v4().simple());
    let user = app.create_user(&login, PASSWORD).await;
    let tokens = app.user_tokens(&client, &login, PASSWORD).await;
    let family_id = family_of(&app, &tokens).await;
    let access_token = text(&tokens, "access_token");

    app.clock.advance(1);
    let correlation_id = format!("audit-revoke-{}", Uuid::new_v4());
    revoke(&app, &client, access_token, &correlation_id).await;
    let expected = Expected {
        event: "access_token.revoked",
        client_id: &client.id,
        principal_type: "user",
        principal_id: user.id.to_string(),
        family_id: &family_id,
        correlation_id: &correlation_id,
    };
    let revoked = assert_recorded(&app, &expected).await;
    assert_eq!(revoked["jti"], jti_of(access_token).to_string());
    assert_eq!(revoked["reason"], "revocation_endpoint");

    // Again: nothing more (`assert_recorded` finds exactly one), and the family lives on.
    app.clock.advance(1);
    revoke(
        &app,
        &client,
        access_token,
        &format!("again-{correlation_id}"),
    )
    .await;
    assert_recorded(&app, &expected).await;
    let (status, body) = app.refresh(&client, text(&tokens, "refresh_token")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_no_secret_recorded(
        &app,
        &[client_subject(&client.id)],
        &[
            access_token,
            text(&tokens, "refresh_token"),
            &client.secret,
            PASSWORD,
        ],
    )
    .await;
}

async fn an_application_token_revoked_is_recorded_under_its_client(app: TestApp) {
    let client = app.create_client("read").await;
    let form = [
        ("grant_type", "client_credentials"),
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
    ];
    let (status, body) = json_of(app.post_form("/v0/token", &form).await).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let access_token = text(&body, "access_token");
    let correlation_id = format!("audit-revoke-app-{}", Uuid::new_v4());
    revoke(&app, &client, access_token, &correlation_id).await;
    revoke(&app, &client, access_token, &correlation_id).await;

    let events: Vec<Value> = events_of(&app, client_subject(&client.id))
        .await
        .iter()
        .filter(|event| event.kind.name() == "access_token.revoked")
        .map(json)
        .collect();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["jti"], jti_of(access_token).to_string());
    assert_eq!(events[0]["client_id"], client.id);
    assert_eq!(events[0]["principal_id"], Value::Null);
    assert_eq!(events[0]["family_id"], Value::Null);
    assert_eq!(events[0]["correlation_id"], correlation_id);
    assert_no_secret_recorded(
        &app,
        &[client_subject(&client.id)],
        &[access_token, &client.secret],
    )
    .await;
}
