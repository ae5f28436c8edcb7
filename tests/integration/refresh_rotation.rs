//! Refresh tokens (docs/decisions.md, Refresh tokens), on both stores: idempotent rotation (a retry
//! within the window gets the same successor, concurrent refreshes share one), reuse once the
//! successor was used or the window is over, the `sliding` policy, geolocation before reuse, and
//! the client's current scopes.

use crate::support::app::{jti_of, AppOptions, TestApp, TestClient};
use crate::support::assertions::assert_token_error as assert_error;
use futures::future::join_all;
use reqwest::StatusCode;
use serde_json::Value;
use token_core::admin::NewClient;
use token_core::config::Policy;
use token_domain::clock::Clock;
use token_domain::secrets::TokenHash;
use token_domain::{FamilyId, RefreshRotation, Scopes};

crate::on_both_stores!(
    retry_within_the_window_returns_the_same_successor,
    twenty_concurrent_refreshes_share_one_successor,
    using_the_successor_turns_the_old_token_into_reuse,
    the_window_ends_by_the_clock,
    sliding_keeps_the_token_and_slides_its_expiry,
    geolocation_is_checked_before_reuse,
    narrowing_a_client_applies_at_the_next_refresh,
);

/// `REFRESH_GRACE_SECONDS=0`: a rotated token is never a retry, not even within its second.
mod without_grace {
    use super::*;

    crate::on_both_stores!(with super::no_grace(); a_replay_in_the_same_second_is_reuse);

    fn no_grace() -> AppOptions {
        AppOptions {
            policy: Policy {
                refresh_grace_seconds: 0,
                ..Policy::default()
            },
            ..AppOptions::default()
        }
    }

    async fn a_replay_in_the_same_second_is_reuse(app: TestApp) {
        let (client, first) = user_family(&app, RefreshRotation::Rotate, "read").await;
        let rt1 = field(&first, "refresh_token");
        let second = ok(refresh(&app, &client, rt1).await);
        assert_error(
            &refresh(&app, &client, rt1).await,
            400,
            "invalid_grant",
            108,
        );
        assert_family_revoked(&app, &[&first, &second]).await;
    }
}

const PASSWORD: &str = "correct horse battery staple";

pub(crate) use crate::support::app::field;

pub(crate) fn ok((status, body): (StatusCode, Value)) -> Value {
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

pub(crate) async fn refresh(
    app: &TestApp,
    client: &TestClient,
    token: &str,
) -> (StatusCode, Value) {
    app.refresh(client, token).await
}

/// A client with `policy` and a user family started by the password grant.
pub(crate) async fn user_family(
    app: &TestApp,
    policy: RefreshRotation,
    scopes: &str,
) -> (TestClient, Value) {
    let client = app
        .create_client_with(NewClient {
            refresh_rotation: policy,
            ..NewClient::named("rotation test", Scopes::parse(scopes).unwrap())
        })
        .await;
    let login = format!("user-{}", uuid::Uuid::new_v4().simple());
    app.create_user(&login, PASSWORD).await;
    let tokens = app.user_tokens(&client, &login, PASSWORD).await;
    (client, tokens)
}

async fn family_of(app: &TestApp, refresh_token: &str) -> FamilyId {
    app.stored_refresh_token(refresh_token).await.family_id
}

/// The family is revoked in the store, and so are the access tokens of every answer given.
async fn assert_family_revoked(app: &TestApp, answers: &[&Value]) {
    let family_id = family_of(app, field(answers[0], "refresh_token")).await;
    let family = app.stored_family(&family_id).await;
    assert!(family.revoked_at.is_some(), "the family is revoked");
    for answer in answers {
        let access = app
            .stored_access_token(&jti_of(field(answer, "access_token")))
            .await
            .expect("access token stored");
        assert!(access.revoked, "its access tokens read revoked");
    }
}

async fn retry_within_the_window_returns_the_same_successor(app: TestApp) {
    let (client, first) = user_family(&app, RefreshRotation::Rotate, "read").await;
    let rt1 = field(&first, "refresh_token");
    let second = ok(refresh(&app, &client, rt1).await);
    let rotated_at = app.clock.now();

    app.clock
        .advance(app.services.policy.refresh_grace_seconds - 1);
    let retried = ok(refresh(&app, &client, rt1).await);
    assert_eq!(
        retried["refresh_token"], second["refresh_token"],
        "same successor"
    );
    assert_eq!(
        retried["refresh_expires_in"], second["refresh_expires_in"],
        "the successor's expiry is unchanged by a retry"
    );
    assert_ne!(
        retried["access_token"], second["access_token"],
        "a fresh access token"
    );
    let access = app
        .stored_access_token(&jti_of(field(&retried, "access_token")))
        .await
        .expect("the retry's access token is persisted");
    let family_id = family_of(&app, rt1).await;
    assert_eq!(access.family_id, Some(family_id), "with the family");
    let family = app.stored_family(&family_id).await;
    assert_eq!(family.generation, 1, "a retry does not rotate again");
    assert_eq!(
        family.expires_at,
        rotated_at + app.services.policy.refresh_token_ttl_seconds
    );

    // The successor is still unused, and rotates normally.
    let third = ok(refresh(&app, &client, field(&second, "refresh_token")).await);
    assert_ne!(third["refresh_token"], second["refresh_token"]);
}

async fn twenty_concurrent_refreshes_share_one_successor(app: TestApp) {
    let (client, first) = user_family(&app, RefreshRotation::Rotate, "read").await;
    let rt = field(&first, "refresh_token");
    let answers = join_all((0..20).map(|_| refresh(&app, &client, rt))).await;
    let successors: std::collections::BTreeSet<&str> = answers
        .iter()
        .map(|(status, body)| {
            assert_eq!(*status, StatusCode::OK, "every racer succeeds: {body}");
            field(body, "refresh_token")
        })
        .collect();
    assert_eq!(successors.len(), 1, "one successor: {successors:?}");
    let successor = *successors.first().unwrap();
    let family_id = family_of(&app, rt).await;
    let family = app.stored_family(&family_id).await;
    assert_eq!(family.generation, 1, "rotated exactly once");
    assert_eq!(family.current_token, TokenHash::of(successor));
    for (_, body) in &answers {
        assert!(
            app.stored_access_token(&jti_of(field(body, "access_token")))
                .await
                .is_some(),
            "every racer's access token is persisted"
        );
    }
    ok(refresh(&app, &client, successor).await);
}

async fn using_the_successor_turns_the_old_token_into_reuse(app: TestApp) {
    let (client, first) = user_family(&app, RefreshRotation::Rotate, "read").await;
    let rt1 = field(&first, "refresh_token");
    let second = ok(refresh(&app, &client, rt1).await);
    let third = ok(refresh(&app, &client, field(&second, "refresh_token")).await);

    // Still within the window, but the successor has been used: reuse.
    assert_error(
        &refresh(&app, &client, rt1).await,
        400,
        "invalid_grant",
        108,
    );
    assert_family_revoked(&app, &[&first, &second, &third]).await;
    assert_error(
        &refresh(&app, &client, field(&third, "refresh_token")).await,
        400,
        "invalid_grant",
        108,
    );
}

async fn the_window_ends_by_the_clock(app: TestApp) {
    let grace = app.services.policy.refresh_grace_seconds;
    let (client, first) = user_family(&app, RefreshRotation::Rotate, "read").await;
    let rt1 = field(&first, "refresh_token");
    let second = ok(refresh(&app, &client, rt1).await);

    app.clock.advance(grace - 1);
    let retried = ok(refresh(&app, &client, rt1).await);
    assert_eq!(
        retried["refresh_token"], second["refresh_token"],
        "last second of the window"
    );

    // `now - rotated_at < grace` is strict: at exactly `grace` seconds it is reuse.
    app.clock.advance(1);
    assert_error(
        &refresh(&app, &client, rt1).await,
        400,
        "invalid_grant",
        108,
    );
    assert_family_revoked(&app, &[&first, &second, &retried]).await;
}

async fn sliding_keeps_the_token_and_slides_its_expiry(app: TestApp) {
    let ttl = app.services.policy.refresh_token_ttl_seconds;
    let (client, first) = user_family(&app, RefreshRotation::Sliding, "read").await;
    let rt = field(&first, "refresh_token");
    for hour in 1..=3 {
        app.clock.advance(3600);
        let now = app.clock.now();
        let answer = ok(refresh(&app, &client, rt).await);
        assert_eq!(answer["refresh_token"], rt, "hour {hour}: the token stays");
        assert_eq!(answer["refresh_expires_in"], now + ttl, "hour {hour}");
        let record = app.stored_refresh_token(rt).await;
        assert_eq!(
            record.expires_at,
            now + ttl,
            "the stored token's expiry slides"
        );
        assert_eq!(record.rotated_at, None);
        let family = app.stored_family(&record.family_id).await;
        assert_eq!(family.expires_at, now + ttl, "and the family's");
        assert_eq!(family.generation, 0, "never rotated");
        assert_eq!(family.revoked_at, None);
    }
    // Beyond the first issue's lifetime, it lives on.
    app.clock.advance(ttl - 1);
    ok(refresh(&app, &client, rt).await);
}

async fn geolocation_is_checked_before_reuse(app: TestApp) {
    let (client, first) = user_family(&app, RefreshRotation::Rotate, "read").await;
    let rt1 = field(&first, "refresh_token");
    let second = ok(refresh(&app, &client, rt1).await);
    app.clock.advance(app.services.policy.refresh_grace_seconds);

    // Outside the window this would be reuse at home; elsewhere it is only code 16.
    let elsewhere = app.spawn_other_region().await;
    let answer = refresh(&elsewhere, &client, rt1).await;
    assert_error(&answer, 400, "invalid_request", 16);
    assert_eq!(answer.1["geolocation"], app.address.as_str());
    let family = app
        .store
        .families()
        .get_family(&family_of(&app, rt1).await, app.clock.now())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(family.revoked_at, None, "nothing changed");
    assert_eq!(family.generation, 1);
    ok(refresh(&app, &client, field(&second, "refresh_token")).await);
}

async fn narrowing_a_client_applies_at_the_next_refresh(app: TestApp) {
    let (client, first) = user_family(&app, RefreshRotation::Rotate, "read write").await;
    assert_eq!(first["scope"], "read write");
    let id = token_domain::ClientId::parse(&client.id).unwrap();
    let mut stored = app.store.clients().get_client(&id).await.unwrap().unwrap();
    stored.allowed_scopes = Scopes::parse("read").unwrap();
    app.store.clients().put_client(&stored).await.unwrap();

    let narrowed = ok(refresh(&app, &client, field(&first, "refresh_token")).await);
    assert_eq!(narrowed["scope"], "read");
    let answer = app
        .token(&[
            ("grant_type", "refresh_token"),
            ("client_id", &client.id),
            ("client_secret", &client.secret),
            ("refresh_token", field(&narrowed, "refresh_token")),
            ("scope", "write"),
        ])
        .await;
    assert_error(&answer, 400, "invalid_scope", 54);
}
