//! Public clients (RFC 8628 §3.1): a client pinned to `none` starts and polls with its
//! `client_id` alone, and its secret no longer authenticates it; a confidential client sending
//! only its `client_id` is still refused, at the endpoint and when polling.

use super::*;
use crate::support::assertions::assert_token_error;
use token_core::admin::{self, AdminError, NewClient};
use token_domain::{ClientAuthMethod, ClientId, GrantType, Scopes};

crate::on_both_stores!(
    a_public_client_starts_and_polls_with_its_client_id_alone,
    a_confidential_client_with_only_its_client_id_is_refused,
    a_client_that_may_use_client_credentials_cannot_be_made_public,
);

/// A client of the device and refresh grants pinned to `none`; `secret` is the one it was
/// created with, which no longer authenticates it.
async fn public_client(app: &TestApp) -> TestClient {
    let mut new = NewClient::named("tv app", Scopes::parse("read").unwrap());
    new.grants = [GrantType::DeviceCode, GrantType::RefreshToken]
        .into_iter()
        .collect();
    let client = app.create_client_with(new).await;
    let id = ClientId::parse(&client.id).unwrap();
    admin::set_auth_method(app.ctx(), &id, Some(ClientAuthMethod::Public))
        .await
        .unwrap();
    client
}

async fn poll_as_public(app: &TestApp, client: &TestClient, device_code: &str) -> Answer {
    app.token(&[
        ("grant_type", DEVICE_GRANT),
        ("device_code", device_code),
        ("client_id", client.id.as_str()),
    ])
    .await
}

async fn a_public_client_starts_and_polls_with_its_client_id_alone(app: TestApp) {
    let client = public_client(&app).await;
    let user = app.create_user("ann", "a password").await;
    let (status, body) = json_of(
        app.post_form(
            DEVICE_AUTHORIZATION,
            &[("client_id", client.id.as_str()), ("scope", "openid read")],
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let device_code = body["device_code"].as_str().unwrap();
    assert_token_error(
        &poll_as_public(&app, &client, device_code).await,
        400,
        "authorization_pending",
        170,
    );
    // Its secret, even the right one, no longer authenticates it.
    assert_token_error(
        &poll(&app, &client, device_code).await,
        401,
        "invalid_client",
        64,
    );
    assert_token_error(
        &request_codes(&app, &client, &[]).await,
        401,
        "invalid_client",
        64,
    );
    let user_code = body["user_code"].as_str().unwrap();
    assert!(decide(&app, user_code, &approval(user.id, app.clock.now())).await);
    app.clock.advance(5);
    let (status, tokens) = poll_as_public(&app, &client, device_code).await;
    assert_eq!(status, 200, "{tokens}");
    assert_eq!(tokens["id"], user.id.to_string());
    assert_eq!(tokens["scope"], "openid read");
    assert!(tokens["id_token"].is_string(), "{tokens}");
    app.clock.advance(5);
    assert_token_error(
        &poll_as_public(&app, &client, device_code).await,
        400,
        "invalid_grant",
        174,
    );
    // Its refresh token refreshes with the client_id alone too.
    let (status, refreshed) = app
        .token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", tokens["refresh_token"].as_str().unwrap()),
            ("client_id", client.id.as_str()),
        ])
        .await;
    assert_eq!(status, 200, "{refreshed}");
}

async fn a_confidential_client_with_only_its_client_id_is_refused(app: TestApp) {
    let client = app.create_client("read").await;
    let only_id = [("client_id", client.id.as_str()), ("scope", "read")];
    let answer = json_of(app.post_form(DEVICE_AUTHORIZATION, &only_id).await).await;
    assert_token_error(&answer, 400, "invalid_request", 63);
    // Codes it obtained with its secret are not polled without it.
    let body = codes(&app, &client, "read").await;
    let device_code = body["device_code"].as_str().unwrap();
    assert_token_error(
        &poll_as_public(&app, &client, device_code).await,
        400,
        "invalid_request",
        63,
    );
    assert_token_error(
        &poll(&app, &client, device_code).await,
        400,
        "authorization_pending",
        170,
    );
}

async fn a_client_that_may_use_client_credentials_cannot_be_made_public(app: TestApp) {
    let client = app.create_client("read").await;
    let id = ClientId::parse(&client.id).unwrap();
    let refused = admin::set_auth_method(app.ctx(), &id, Some(ClientAuthMethod::Public)).await;
    assert!(
        matches!(refused, Err(AdminError::Invalid(_))),
        "{refused:?}"
    );
    // Still confidential: its secret works, its id alone does not.
    codes(&app, &client, "read").await;
    let only_id = [("client_id", client.id.as_str())];
    let answer = json_of(app.post_form(DEVICE_AUTHORIZATION, &only_id).await).await;
    assert_token_error(&answer, 400, "invalid_request", 63);
}
