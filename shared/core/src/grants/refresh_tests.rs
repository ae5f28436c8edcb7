//! `grant_type=refresh_token` through the dispatch over a [`TestState`]: rotation, a retry
//! within the grace period, reuse, the sliding policy, expiry, and the client binding, each
//! checked by its answer and by what the store then holds.

use super::testing::{code, token};
use crate::domain::audit::{AuditKind, AuditSubject, RevocationReason};
use crate::domain::{NewClient, RefreshRotation};
use crate::errors::ErrorCode;
use crate::issuance::IssuedRefresh;
use crate::secrets::Secret;
use crate::test_state::{scopes, TestClient, TestState};

/// A `rotate` client, a user and a family of scope `read write` started now.
async fn started() -> (TestState, TestClient, IssuedRefresh) {
    let state = TestState::new().await;
    let client = state.default_client().await;
    let user = state.user("refresh.user@example.com", "a password").await;
    let first = state.family(&client.client, &user, "read write").await;
    (state, client, first)
}

async fn refresh(state: &TestState, client: &TestClient, presented: &Secret) -> IssuedRefresh {
    token(
        state,
        client,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", presented.expose()),
        ],
    )
    .await
    .expect("refreshed")
    .refresh
    .expect("a refresh answers a refresh token")
}

async fn refresh_code(state: &TestState, client: &TestClient, presented: &Secret) -> ErrorCode {
    code(
        token(
            state,
            client,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", presented.expose()),
            ],
        )
        .await,
    )
}

#[tokio::test]
async fn a_rotation_answers_a_new_token_that_becomes_the_familys_current_one() {
    let (state, client, first) = started().await;
    state.advance(10);

    let second = refresh(&state, &client, &first.token).await;

    assert_ne!(second.token.expose(), first.token.expose());
    assert_eq!(second.family_id, first.family_id);
    assert_eq!(second.issued_at, state.now());
    let ttl = state.services.policy.refresh_token_ttl_seconds;
    assert_eq!(
        second.expires_at,
        state.now() + ttl,
        "rotation renews the expiry"
    );
    let family = state.stored_family(&first.family_id).await.expect("stored");
    assert_eq!(family.current_token, second.token.hash());
    assert_eq!(family.generation, 1);
    assert_eq!(family.rotated_at, Some(state.now()));
    assert_eq!(family.expires_at, state.now() + ttl);
    assert_eq!(family.revoked_at, None);
    // The successor names its family, whose item is its record: none of its own is written.
    assert!(state.stored_refresh_token(&second.token).await.is_none());
    assert!(state
        .audit_kinds(AuditSubject::Family(first.family_id))
        .await
        .contains(&AuditKind::FamilyRefreshed { generation: 1 }));

    // The successor rotates in turn.
    let third = refresh(&state, &client, &second.token).await;
    let family = state.stored_family(&first.family_id).await.expect("stored");
    assert_eq!(family.current_token, third.token.hash());
    assert_eq!(family.generation, 2);
}

#[tokio::test]
async fn the_alias_refresh_rotates_too() {
    let (state, client, first) = started().await;
    let issued = token(
        &state,
        &client,
        &[
            ("grant_type", "refresh"),
            ("refresh_token", first.token.expose()),
        ],
    )
    .await
    .expect("refreshed");
    let second = issued.refresh.expect("a refresh token");
    let family = state.stored_family(&first.family_id).await.expect("stored");
    assert_eq!(family.current_token, second.token.hash());
}

#[tokio::test]
async fn a_retry_within_the_grace_period_gets_the_same_successor() {
    let (state, client, first) = started().await;
    let second = refresh(&state, &client, &first.token).await;
    let grace = state.services.policy.refresh_grace_seconds;
    state.advance(grace - 1);

    let retried = refresh(&state, &client, &first.token).await;

    assert_eq!(retried.token.expose(), second.token.expose());
    let family = state.stored_family(&first.family_id).await.expect("stored");
    assert_eq!(family.generation, 1, "a retry rotates nothing");
    assert_eq!(family.current_token, second.token.hash());
    assert_eq!(family.revoked_at, None);
    // The successor stays usable.
    let third = refresh(&state, &client, &second.token).await;
    assert_ne!(third.token.expose(), second.token.expose());
}

#[tokio::test]
async fn a_rotated_token_after_the_grace_period_is_reuse_and_revokes_the_family() {
    let (state, client, first) = started().await;
    let second = refresh(&state, &client, &first.token).await;
    state.advance(state.services.policy.refresh_grace_seconds);

    assert_eq!(
        refresh_code(&state, &client, &first.token).await,
        ErrorCode::BadRefreshToken
    );

    let family = state.stored_family(&first.family_id).await.expect("stored");
    assert_eq!(family.revoked_at, Some(state.now()));
    let kinds = state
        .audit_kinds(AuditSubject::Family(first.family_id))
        .await;
    assert!(
        kinds.contains(&AuditKind::RefreshReuseDetected),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&AuditKind::FamilyRevoked {
            reason: RevocationReason::ReuseDetected
        }),
        "{kinds:?}"
    );
    // The family's current token dies with it.
    assert_eq!(
        refresh_code(&state, &client, &second.token).await,
        ErrorCode::BadRefreshToken
    );
}

#[tokio::test]
async fn a_rotated_token_whose_successor_was_used_is_reuse_even_within_the_grace_period() {
    let (state, client, first) = started().await;
    let second = refresh(&state, &client, &first.token).await;
    let third = refresh(&state, &client, &second.token).await;

    assert_eq!(
        refresh_code(&state, &client, &first.token).await,
        ErrorCode::BadRefreshToken
    );

    let family = state.stored_family(&first.family_id).await.expect("stored");
    assert!(family.revoked_at.is_some());
    assert_eq!(
        refresh_code(&state, &client, &third.token).await,
        ErrorCode::BadRefreshToken
    );
}

#[tokio::test]
async fn a_grace_period_of_zero_makes_every_second_use_reuse() {
    let state = TestState::with_policy(crate::config::Policy {
        refresh_grace_seconds: 0,
        ..Default::default()
    })
    .await;
    let client = state.default_client().await;
    let user = state.user("no.grace@example.com", "a password").await;
    let first = state.family(&client.client, &user, "read").await;
    refresh(&state, &client, &first.token).await;

    assert_eq!(
        refresh_code(&state, &client, &first.token).await,
        ErrorCode::BadRefreshToken
    );
    let family = state.stored_family(&first.family_id).await.expect("stored");
    assert!(family.revoked_at.is_some());
}

#[tokio::test]
async fn a_sliding_client_keeps_its_token_and_each_use_renews_its_expiry() {
    let state = TestState::new().await;
    let client = state
        .client(NewClient {
            refresh_rotation: RefreshRotation::Sliding,
            ..NewClient::named("sliding client", scopes("read"))
        })
        .await;
    let user = state.user("sliding.user@example.com", "a password").await;
    let first = state.family(&client.client, &user, "read").await;
    let ttl = state.services.policy.refresh_token_ttl_seconds;
    state.advance(ttl - 10);

    let kept = refresh(&state, &client, &first.token).await;

    assert_eq!(kept.token.expose(), first.token.expose());
    assert_eq!(kept.expires_at, state.now() + ttl);
    let family = state.stored_family(&first.family_id).await.expect("stored");
    assert_eq!(family.generation, 0, "nothing rotated");
    assert_eq!(family.current_token, first.token.hash());
    assert_eq!(family.expires_at, state.now() + ttl);
    // Past the first expiry, the renewed token still refreshes, again and again: no reuse.
    state.advance(20);
    let again = refresh(&state, &client, &first.token).await;
    assert_eq!(again.token.expose(), first.token.expose());
    let again = refresh(&state, &client, &first.token).await;
    assert_eq!(again.token.expose(), first.token.expose());
    let family = state.stored_family(&first.family_id).await.expect("stored");
    assert_eq!(family.revoked_at, None);
}

#[tokio::test]
async fn a_family_past_its_expiry_is_refused_and_reads_as_absent() {
    let (state, client, first) = started().await;
    state.advance(state.services.policy.refresh_token_ttl_seconds + 1);

    assert_eq!(
        refresh_code(&state, &client, &first.token).await,
        ErrorCode::BadRefreshToken
    );
    assert!(state.stored_family(&first.family_id).await.is_none());
}

#[tokio::test]
async fn a_successor_expires_its_own_lifetime_after_its_rotation() {
    let (state, client, first) = started().await;
    let ttl = state.services.policy.refresh_token_ttl_seconds;
    state.advance(ttl - 1);
    let second = refresh(&state, &client, &first.token).await;
    // Past the first token's expiry, within the successor's.
    state.advance(2);
    let third = refresh(&state, &client, &second.token).await;
    state.advance(ttl);
    assert_eq!(
        refresh_code(&state, &client, &third.token).await,
        ErrorCode::BadRefreshToken
    );
}

#[tokio::test]
async fn another_clients_token_is_refused_and_leaves_the_family_as_it_was() {
    let (state, client, first) = started().await;
    let other = state.default_client().await;

    assert_eq!(
        refresh_code(&state, &other, &first.token).await,
        ErrorCode::GrantNotIssuedToClient
    );

    let family = state.stored_family(&first.family_id).await.expect("stored");
    assert_eq!(family.generation, 0);
    assert_eq!(family.current_token, first.token.hash());
    assert_eq!(family.revoked_at, None);
    // Its own client still refreshes it.
    refresh(&state, &client, &first.token).await;
}

#[tokio::test]
async fn another_client_replaying_a_rotated_token_revokes_nothing() {
    let (state, client, first) = started().await;
    let second = refresh(&state, &client, &first.token).await;
    state.advance(state.services.policy.refresh_grace_seconds + 1);
    let other = state.default_client().await;

    assert_eq!(
        refresh_code(&state, &other, &first.token).await,
        ErrorCode::GrantNotIssuedToClient
    );

    let family = state.stored_family(&first.family_id).await.expect("stored");
    assert_eq!(family.revoked_at, None);
    refresh(&state, &client, &second.token).await;
}

#[tokio::test]
async fn an_unknown_token_is_refused_and_a_missing_one_is_106() {
    let (state, client, _) = started().await;
    assert_eq!(
        refresh_code(&state, &client, &Secret::new("not-a-token-of-ours")).await,
        ErrorCode::BadRefreshToken
    );
    assert_eq!(
        code(token(&state, &client, &[("grant_type", "refresh_token")]).await),
        ErrorCode::RefreshTokenMissing
    );
}

#[tokio::test]
async fn a_client_without_refresh_is_refused_before_the_lookup() {
    let state = TestState::new().await;
    let client = state
        .client(NewClient {
            refresh_allowed: false,
            ..NewClient::named("no refresh", scopes("read"))
        })
        .await;
    let user = state.user("no.refresh@example.com", "a password").await;
    let first = state.family(&client.client, &user, "read").await;

    assert_eq!(
        refresh_code(&state, &client, &first.token).await,
        ErrorCode::RefreshDisallowed
    );
    let family = state.stored_family(&first.family_id).await.expect("stored");
    assert_eq!(family.generation, 0);
}

#[tokio::test]
async fn a_refresh_may_narrow_the_scopes_but_never_widen_them() {
    let (state, client, first) = started().await;
    let narrowed = token(
        &state,
        &client,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", first.token.expose()),
            ("scope", "read"),
        ],
    )
    .await
    .expect("refreshed");
    assert_eq!(narrowed.access.scopes, scopes("read"));
    let second = narrowed.refresh.expect("a refresh token");
    // The family keeps what it was granted: the next refresh may ask for all of it again.
    let family = state.stored_family(&first.family_id).await.expect("stored");
    assert_eq!(family.scopes, scopes("read write"));

    let widened = token(
        &state,
        &client,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", second.token.expose()),
            ("scope", "read admin"),
        ],
    )
    .await;
    assert_eq!(code(widened), ErrorCode::ScopeExceedsGrant);
    let family = state.stored_family(&first.family_id).await.expect("stored");
    assert_eq!(
        family.current_token,
        second.token.hash(),
        "a refusal rotates nothing"
    );
}
