//! Back-channel logout delivery (OpenID Connect Back-Channel Logout 1.0), on both stores: a
//! session's end, announced as the session code announces it, reaches each client's logout URI
//! on loopback (allowed as `CLIENT_ID_METADATA_ALLOW_HOSTS` allows it) as a logout token that
//! `jsonwebtoken` verifies against the published JWK Set; a failing client gets three attempts
//! and `logout.failed`; an internal address that is not allowed is never called; a redirect is
//! not followed. The Lambda path (SQS, the `logout-delivery` handler) is `sqs`.

mod sqs;

use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use reqwest::StatusCode;
use serde_json::Value;
use token_core::flows::backchannel_logout::{announce_session_end, EndedSession};
use token_core::logout_delivery::LogoutQueue;
use token_domain::audit::{AuditEvent, AuditKind, LogoutFailure};
use token_domain::{ClientId, NewClient, PrincipalId, Scopes};

use crate::audit::{client_subject, events_of, json};
use crate::on_both_stores;
use crate::support::app::TestApp;
use crate::support::logout_receiver::{quick_retries, LogoutReceiver};

const SID: &str = "bcl-test-session-00001";

on_both_stores!(
    a_logout_token_reaches_the_client_and_verifies_against_the_jwks,
    a_failing_client_gets_three_attempts_then_logout_failed,
    an_internal_address_not_allowed_is_never_called,
    a_redirect_is_not_followed
);

/// A client that signs users in, told of logouts at `uri`.
async fn relying_party(app: &TestApp, uri: &str) -> ClientId {
    let new = NewClient {
        backchannel_logout_uri: Some(uri.to_owned()),
        ..NewClient::named("relying party", Scopes::parse("read").unwrap())
    };
    ClientId::parse(&app.create_client_with(new).await.id).unwrap()
}

fn ended(principal: PrincipalId, clients: Vec<ClientId>) -> EndedSession {
    EndedSession {
        sid: SID.to_owned(),
        principal_id: principal,
        clients,
    }
}

/// The client's logout events, newest first.
async fn logout_events(app: &TestApp, client: ClientId) -> Vec<AuditEvent> {
    events_of(app, client_subject(&client.to_string()))
        .await
        .into_iter()
        .filter(|event| event.kind.name().starts_with("logout."))
        .collect()
}

/// `token` verified by `jsonwebtoken` with the key the app's JWK Set publishes for its `kid`,
/// as the relying party's audience and this deployment's issuer; its header and claims.
pub(crate) async fn verified(
    app: &TestApp,
    token: &str,
    client: ClientId,
) -> (jsonwebtoken::Header, Value) {
    let jwks = app.get_json("/oauth2/v0/jwks").await;
    let set: jsonwebtoken::jwk::JwkSet = serde_json::from_value(jwks).unwrap();
    let header = jsonwebtoken::decode_header(token).unwrap();
    let jwk = set
        .find(header.kid.as_deref().expect("a kid"))
        .expect("the kid is published");
    let mut validation = Validation::new(Algorithm::ES256);
    validation.set_audience(&[client.to_string()]);
    validation.set_issuer(&[app.geolocation().as_str()]);
    // The app's clock is a manual one that started now: the token is current.
    validation.set_required_spec_claims(&["exp", "iat", "iss", "aud", "sub"]);
    let claims =
        jsonwebtoken::decode::<Value>(token, &DecodingKey::from_jwk(jwk).unwrap(), &validation)
            .expect("the logout token verifies against the JWK Set")
            .claims;
    (header, claims)
}

async fn a_logout_token_reaches_the_client_and_verifies_against_the_jwks(app: TestApp) {
    let receiver = LogoutReceiver::start(StatusCode::OK, None).await;
    let (services, queue) = app.logout_services(&[&receiver.host_port], quick_retries());
    let rp = relying_party(&app, &receiver.url("/backchannel-logout?tenant=7")).await;
    let other = relying_party(&app, &receiver.url("/other")).await;
    let without_uri = ClientId::parse(&app.create_client("read").await.id).unwrap();
    let user = app.create_user("bcl.user", "bcl password 1").await;

    announce_session_end(&services, &ended(user.id, vec![rp, without_uri]))
        .await
        .unwrap();
    queue.drain().await;

    let received = receiver.received();
    assert_eq!(
        received.len(),
        1,
        "one POST, to the one client of the session: {received:?}"
    );
    assert_eq!(
        received[0].content_type.as_deref(),
        Some("application/x-www-form-urlencoded")
    );
    let token = received[0].logout_token();
    let (header, claims) = verified(&app, token, rp).await;
    assert_eq!(header.typ.as_deref(), Some("logout+jwt"));
    assert_eq!(claims["iss"], app.geolocation().as_str());
    assert_eq!(claims["aud"], rp.to_string());
    assert_eq!(claims["sub"], user.id.to_string());
    assert_eq!(claims["sid"], SID);
    assert_eq!(
        claims["events"],
        serde_json::json!({"http://schemas.openid.net/event/backchannel-logout": {}})
    );
    assert!(claims["jti"].as_str().is_some_and(|jti| !jti.is_empty()));
    let (iat, exp) = (
        claims["iat"].as_i64().unwrap(),
        claims["exp"].as_i64().unwrap(),
    );
    assert!(exp > iat && exp - iat <= 120, "short-lived: {claims}");
    assert!(claims.get("nonce").is_none(), "never a nonce: {claims}");

    let events = logout_events(&app, rp).await;
    assert!(
        matches!(
            &events[..],
            [AuditEvent {
                kind: AuditKind::LogoutDelivered { attempts: 1, .. },
                ..
            }]
        ),
        "{events:?}"
    );
    let stored = json(&events[0]);
    assert_eq!(stored["sid"], SID);
    assert_eq!(stored["principal_id"], user.id.to_string());
    assert!(
        !stored.to_string().contains(token),
        "never the token: {stored}"
    );
    assert!(
        logout_events(&app, other).await.is_empty(),
        "not in the session"
    );
}

async fn a_failing_client_gets_three_attempts_then_logout_failed(app: TestApp) {
    let receiver = LogoutReceiver::start(StatusCode::SERVICE_UNAVAILABLE, None).await;
    // Retries a second apart: an announcement that waited for the deliveries would return
    // after all three, however loaded the machine (no clock budget to miss).
    let retries =
        token_core::logout_delivery::RetrySchedule::new(vec![std::time::Duration::from_secs(1); 2]);
    let (services, queue) = app.logout_services(&[&receiver.host_port], retries);
    let rp = relying_party(&app, &receiver.url("/bcl")).await;
    announce_session_end(
        &services,
        &ended(PrincipalId::new(uuid::Uuid::new_v4()), vec![rp]),
    )
    .await
    .unwrap();
    assert!(
        receiver.received().len() < 3,
        "the announcement does not wait for the deliveries"
    );
    queue.drain().await;
    assert_eq!(receiver.received().len(), 3, "three attempts");
    let tokens: Vec<String> = receiver
        .received()
        .iter()
        .map(|r| r.logout_token().to_owned())
        .collect();
    assert!(
        tokens.windows(2).all(|w| w[0] == w[1]),
        "the same token each time"
    );
    let events = logout_events(&app, rp).await;
    assert_eq!(events.len(), 1, "{events:?}");
    match &events[0].kind {
        AuditKind::LogoutFailed {
            attempts,
            reason,
            status,
            ..
        } => {
            assert_eq!(*attempts, 3);
            assert_eq!(*reason, LogoutFailure::Rejected);
            assert_eq!(*status, Some(503));
        }
        other => panic!("{other:?}"),
    }
}

async fn an_internal_address_not_allowed_is_never_called(app: TestApp) {
    let receiver = LogoutReceiver::start(StatusCode::OK, None).await;
    // Nothing allowed: the receiver is loopback, over http and over https, by address and by name.
    let (services, queue) = app.logout_services(&[], quick_retries());
    let port = receiver.host_port.rsplit_once(':').unwrap().1.to_owned();
    let mut clients = Vec::new();
    for uri in [
        receiver.url("/bcl"),
        format!("https://127.0.0.1:{port}/bcl"),
        format!("https://localhost:{port}/bcl"),
        "https://169.254.169.254/latest/meta-data".to_owned(),
        "https://10.0.0.1/bcl".to_owned(),
    ] {
        clients.push(relying_party(&app, &uri).await);
    }
    announce_session_end(
        &services,
        &ended(PrincipalId::new(uuid::Uuid::new_v4()), clients.clone()),
    )
    .await
    .unwrap();
    queue.drain().await;
    assert!(receiver.received().is_empty(), "never called");
    for client in clients {
        let events = logout_events(&app, client).await;
        assert!(
            matches!(
                &events[..],
                [AuditEvent {
                    kind: AuditKind::LogoutFailed {
                        attempts: 1,
                        reason: LogoutFailure::AddressRefused,
                        status: None,
                        ..
                    },
                    ..
                }]
            ),
            "{client}: {events:?}"
        );
    }
}

async fn a_redirect_is_not_followed(app: TestApp) {
    let target = LogoutReceiver::start(StatusCode::OK, None).await;
    let redirecting =
        LogoutReceiver::start(StatusCode::TEMPORARY_REDIRECT, Some(target.url("/bcl"))).await;
    let allowed = [redirecting.host_port.as_str(), target.host_port.as_str()];
    let (services, queue) = app.logout_services(&allowed, quick_retries());
    let rp = relying_party(&app, &redirecting.url("/bcl")).await;
    announce_session_end(
        &services,
        &ended(PrincipalId::new(uuid::Uuid::new_v4()), vec![rp]),
    )
    .await
    .unwrap();
    queue.drain().await;
    assert_eq!(redirecting.received().len(), 3);
    assert!(
        target.received().is_empty(),
        "the redirect was not followed"
    );
    let events = logout_events(&app, rp).await;
    assert!(
        matches!(
            &events[..],
            [AuditEvent {
                kind: AuditKind::LogoutFailed {
                    reason: LogoutFailure::Redirected,
                    status: Some(307),
                    ..
                },
                ..
            }]
        ),
        "{events:?}"
    );
}
