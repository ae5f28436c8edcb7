//! Polling the token endpoint with a device code: pending, slow_down with the interval growing,
//! denied, expired, the user family once, and one winner among parallel polls. Pace is a
//! pending code's only (`slow_down` is a variant of `authorization_pending`, RFC 8628 §3.5).

use super::*;
use crate::authorize::flow::assert_id_token;
use crate::support::assertions::assert_token_error;
use token_domain::audit::{AuditKind, AuditSubject, StartedBy};
use token_domain::DeviceDecision;

crate::on_both_stores!(
    pending_then_slow_down_with_the_interval_growing_by_5_seconds,
    a_denied_code_answers_access_denied,
    a_code_expires_after_ten_minutes,
    an_approved_code_yields_a_user_family_once,
    parallel_polls_of_an_approved_code_redeem_it_once,
    unknown_and_other_clients_codes_are_174,
    a_decided_code_is_answered_at_once_however_soon_the_device_polls,
);

async fn pending_then_slow_down_with_the_interval_growing_by_5_seconds(app: TestApp) {
    let client = app.create_client("read").await;
    let body = codes(&app, &client, "read").await;
    let device_code = body["device_code"].as_str().unwrap();
    assert_token_error(
        &poll(&app, &client, device_code).await,
        400,
        "authorization_pending",
        170,
    );
    app.clock.advance(2);
    assert_token_error(
        &poll(&app, &client, device_code).await,
        400,
        "slow_down",
        171,
    );
    // The interval is now 10 s from that poll: 5 s later is still too fast.
    app.clock.advance(5);
    assert_token_error(
        &poll(&app, &client, device_code).await,
        400,
        "slow_down",
        171,
    );
    // And now 15 s.
    app.clock.advance(15);
    assert_token_error(
        &poll(&app, &client, device_code).await,
        400,
        "authorization_pending",
        170,
    );
    app.clock.advance(15);
    assert_token_error(
        &poll(&app, &client, device_code).await,
        400,
        "authorization_pending",
        170,
    );
}

async fn a_denied_code_answers_access_denied(app: TestApp) {
    let client = app.create_client("read").await;
    let body = codes(&app, &client, "read").await;
    assert!(
        decide(
            &app,
            body["user_code"].as_str().unwrap(),
            &DeviceDecision::Denied
        )
        .await
    );
    let device_code = body["device_code"].as_str().unwrap();
    assert_token_error(
        &poll(&app, &client, device_code).await,
        400,
        "access_denied",
        172,
    );
    app.clock.advance(5);
    assert_token_error(
        &poll(&app, &client, device_code).await,
        400,
        "access_denied",
        172,
    );
}

async fn a_code_expires_after_ten_minutes(app: TestApp) {
    let client = app.create_client("read").await;
    let user = app.create_user("ann", "a password").await;
    let body = codes(&app, &client, "read").await;
    let device_code = body["device_code"].as_str().unwrap();
    app.clock.advance(600);
    assert_token_error(
        &poll(&app, &client, device_code).await,
        400,
        "expired_token",
        173,
    );
    assert!(
        !decide(
            &app,
            body["user_code"].as_str().unwrap(),
            &approval(user.id, 0)
        )
        .await,
        "an expired code cannot be approved"
    );
    app.clock.advance(10);
    assert_token_error(
        &poll(&app, &client, device_code).await,
        400,
        "expired_token",
        173,
    );
}

async fn an_approved_code_yields_a_user_family_once(app: TestApp) {
    let client = app.create_client("read").await;
    let user = app.create_user("ann", "a password").await;
    let body = codes(&app, &client, "openid read").await;
    let device_code = body["device_code"].as_str().unwrap();
    assert_token_error(
        &poll(&app, &client, device_code).await,
        400,
        "authorization_pending",
        170,
    );
    let signed_in = app.clock.now();
    // Typed in lower case without the dash: the same code.
    let typed = body["user_code"]
        .as_str()
        .unwrap()
        .replace('-', "")
        .to_lowercase();
    assert!(decide(&app, &typed, &approval(user.id, signed_in)).await);
    app.clock.advance(5);
    let (status, tokens) = poll(&app, &client, device_code).await;
    assert_eq!(status, 200, "{tokens}");
    assert_eq!(tokens["principal_type"], "user");
    assert_eq!(tokens["id"], user.id.to_string());
    assert_eq!(tokens["scope"], "openid read");
    assert!(tokens["refresh_token"].is_string(), "{tokens}");
    let claims = assert_id_token(&app, &tokens, &user.id.to_string(), &client, "user").await;
    assert_eq!(claims["auth_time"], signed_in, "{claims}");
    let events = crate::audit::events_of(&app, AuditSubject::Principal(user.id)).await;
    assert!(
        events.iter().any(|e| matches!(
            e.kind,
            AuditKind::FamilyStarted {
                grant: StartedBy::DeviceCode,
                ..
            }
        )),
        "{events:?}"
    );
    app.clock.advance(5);
    assert_token_error(
        &poll(&app, &client, device_code).await,
        400,
        "invalid_grant",
        174,
    );
    // The refresh token works like any other.
    let refresh = tokens["refresh_token"].as_str().unwrap();
    let (status, refreshed) = app
        .token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh),
            ("client_id", client.id.as_str()),
            ("client_secret", client.secret.as_str()),
        ])
        .await;
    assert_eq!(status, 200, "{refreshed}");
}

async fn parallel_polls_of_an_approved_code_redeem_it_once(app: TestApp) {
    let client = app.create_client("read").await;
    let user = app.create_user("ann", "a password").await;
    let body = codes(&app, &client, "read").await;
    let device_code = body["device_code"].as_str().unwrap();
    assert!(
        decide(
            &app,
            body["user_code"].as_str().unwrap(),
            &approval(user.id, 1)
        )
        .await
    );
    let answers =
        futures::future::join_all((0..10).map(|_| poll(&app, &client, device_code))).await;
    let winners = answers.iter().filter(|(status, _)| *status == 200).count();
    assert_eq!(winners, 1, "{answers:?}");
    for (status, body) in answers.iter().filter(|(status, _)| *status != 200) {
        assert_eq!(*status, 400, "{body}");
        assert_eq!(body["error"], "invalid_grant", "{body}");
        assert_eq!(body["code"], 174, "{body}");
    }
}

async fn unknown_and_other_clients_codes_are_174(app: TestApp) {
    let client = app.create_client("read").await;
    let other = app.create_client("read").await;
    let body = codes(&app, &client, "read").await;
    let device_code = body["device_code"].as_str().unwrap();
    assert_token_error(
        &poll(&app, &other, device_code).await,
        400,
        "invalid_grant",
        174,
    );
    assert_token_error(
        &poll(&app, &client, "unknown").await,
        400,
        "invalid_grant",
        174,
    );
    let (status, body) = app
        .token(&[
            ("grant_type", DEVICE_GRANT),
            ("client_id", client.id.as_str()),
            ("client_secret", client.secret.as_str()),
        ])
        .await;
    assert_token_error(&(status, body), 400, "invalid_request", 176);
}

async fn a_decided_code_is_answered_at_once_however_soon_the_device_polls(app: TestApp) {
    let client = app.create_client("read").await;
    let user = app.create_user("ann", "a password").await;
    let (denied, approved) = (
        codes(&app, &client, "read").await,
        codes(&app, &client, "read").await,
    );
    for body in [&denied, &approved] {
        let device_code = body["device_code"].as_str().unwrap();
        assert_token_error(
            &poll(&app, &client, device_code).await,
            400,
            "authorization_pending",
            170,
        );
    }
    let user_code = |body: &Value| body["user_code"].as_str().unwrap().to_owned();
    assert!(decide(&app, &user_code(&denied), &DeviceDecision::Denied).await);
    assert!(
        decide(
            &app,
            &user_code(&approved),
            &approval(user.id, app.clock.now())
        )
        .await
    );
    app.clock.advance(1);
    assert_token_error(
        &poll(&app, &client, denied["device_code"].as_str().unwrap()).await,
        400,
        "access_denied",
        172,
    );
    let (status, tokens) = poll(&app, &client, approved["device_code"].as_str().unwrap()).await;
    assert_eq!(status, 200, "{tokens}");
}
