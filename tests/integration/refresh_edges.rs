//! Refresh tokens at their edges, on both stores: a sliding token left unused past its lifetime,
//! rotated and sliding tokens presented by a client they were not issued to, what the store
//! holds of every refresh token it answered (only hashes: the first, a successor, a retry's),
//! and tokens that name a family they were not issued in.

use crate::support::app::{field, TestApp};
use crate::support::assertions::assert_token_error as assert_error;
use reqwest::StatusCode;
use token_domain::random::TOKEN_BYTES;
use token_domain::secrets::Secret;
use token_domain::{RefreshRotation, RefreshTokenName};

use crate::refresh_rotation::{ok, refresh, user_family};

crate::on_both_stores!(
    a_sliding_token_unused_past_its_lifetime_is_refused,
    another_client_within_the_grace_window_learns_nothing,
    another_client_cannot_slide_a_sliding_token,
    refresh_tokens_are_stored_only_as_hashes,
    a_forged_token_naming_a_family_is_unknown_and_revokes_nothing,
    revoking_an_older_token_revokes_its_family,
);

async fn a_sliding_token_unused_past_its_lifetime_is_refused(app: TestApp) {
    let ttl = app.services.policy.refresh_token_ttl_seconds;
    let (client, first) = user_family(&app, RefreshRotation::Sliding, "read").await;
    let rt = field(&first, "refresh_token");
    app.clock.advance(3600);
    ok(refresh(&app, &client, rt).await);
    // Its lifetime counts from that last use; one second past it, the token is dead.
    app.clock.advance(ttl + 1);
    assert_error(&refresh(&app, &client, rt).await, 400, "invalid_grant", 108);
}

async fn another_client_within_the_grace_window_learns_nothing(app: TestApp) {
    let (owner, first) = user_family(&app, RefreshRotation::Rotate, "read").await;
    let other = app.create_client("read").await;
    let rt1 = field(&first, "refresh_token");
    let second = ok(refresh(&app, &owner, rt1).await);
    let successor = field(&second, "refresh_token");

    // Inside the window in which the owner's retry gets the successor again.
    app.clock.advance(1);
    let foreign = refresh(&app, &other, rt1).await;
    assert_error(&foreign, 400, "invalid_grant", 105);
    let text = foreign.1.to_string();
    assert!(
        !text.contains(successor) && foreign.1.get("access_token").is_none(),
        "the other client learns no token: {text}"
    );

    let retried = ok(refresh(&app, &owner, rt1).await);
    assert_eq!(
        retried["refresh_token"], successor,
        "the owner's retry still gets its successor"
    );
}

async fn another_client_cannot_slide_a_sliding_token(app: TestApp) {
    let (owner, first) = user_family(&app, RefreshRotation::Sliding, "read").await;
    let other = app.create_client("read").await;
    let rt = field(&first, "refresh_token");
    let issued = app.stored_refresh_token(rt).await;

    app.clock.advance(3600);
    let foreign = refresh(&app, &other, rt).await;
    assert_error(&foreign, 400, "invalid_grant", 105);
    assert!(foreign.1.get("access_token").is_none(), "{}", foreign.1);
    let record = app.stored_refresh_token(rt).await;
    assert_eq!(
        record.expires_at, issued.expires_at,
        "another client's use does not slide the expiry"
    );
    let answer = ok(refresh(&app, &owner, rt).await);
    assert_eq!(answer["refresh_token"], rt, "the owner's token still works");
}

async fn refresh_tokens_are_stored_only_as_hashes(app: TestApp) {
    let (client, first) = user_family(&app, RefreshRotation::Rotate, "read").await;
    let rt1 = field(&first, "refresh_token");
    let second = ok(refresh(&app, &client, rt1).await);
    let rt2 = field(&second, "refresh_token");
    let retried = ok(refresh(&app, &client, rt1).await);
    assert_eq!(
        retried["refresh_token"], rt2,
        "the retry answers the successor again"
    );
    let (sliding_client, sliding) = user_family(&app, RefreshRotation::Sliding, "read").await;
    let kept = field(&sliding, "refresh_token");
    ok(refresh(&app, &sliding_client, kept).await);

    for (token, what) in [
        (rt1, "the first refresh token"),
        (rt2, "its successor, answered twice"),
        (kept, "a sliding token"),
    ] {
        assert!(!app.data.contains(token).await, "{what} is stored in clear");
    }
    // The scan does see stored text: a client's name is kept in clear.
    assert!(app.data.contains("rotation test").await);
}

/// A refresh token names its family and generation beside its secret (docs/decisions.md, "What
/// a refresh writes"). The name alone is worth nothing: with another secret, at any generation,
/// the token is unknown (108), neither a retry nor reuse, and the family lives on.
async fn a_forged_token_naming_a_family_is_unknown_and_revokes_nothing(app: TestApp) {
    let (client, first) = user_family(&app, RefreshRotation::Rotate, "read").await;
    let rt1 = field(&first, "refresh_token");
    let second = ok(refresh(&app, &client, rt1).await);
    let rt2 = field(&second, "refresh_token");
    let name = |token: &str| RefreshTokenName::of(&Secret::new(token)).expect("a named token");
    assert_eq!(rt2.len(), 71, "{rt2}");
    assert_eq!((name(rt1).generation, name(rt2).generation), (0, 1));
    assert_eq!(name(rt1).family_id, name(rt2).family_id);

    for generation in [0, 1, 2, u32::MAX] {
        let forged =
            RefreshTokenName::new(name(rt2).family_id, generation).token(&[7; TOKEN_BYTES]);
        let answer = refresh(&app, &client, forged.expose()).await;
        assert_error(&answer, 400, "invalid_grant", 108);
        assert!(answer.1.get("access_token").is_none(), "{}", answer.1);
    }
    let family = app.stored_family(&name(rt2).family_id).await;
    assert_eq!((family.generation, family.revoked_at), (1, None));
    let third = ok(refresh(&app, &client, rt2).await);
    assert_ne!(
        third["refresh_token"], rt2,
        "the current token still rotates"
    );
}

/// The revocation endpoint finds an older token of a family through the family it names, and
/// revokes that family (RFC 7009 §2.1).
async fn revoking_an_older_token_revokes_its_family(app: TestApp) {
    let (client, first) = user_family(&app, RefreshRotation::Rotate, "read").await;
    let rt1 = field(&first, "refresh_token");
    let second = ok(refresh(&app, &client, rt1).await);
    let third = ok(refresh(&app, &client, field(&second, "refresh_token")).await);
    let response = app
        .post_form(
            "/oauth2/v0/revoke",
            &[
                ("client_id", client.id.as_str()),
                ("client_secret", client.secret.as_str()),
                ("token", rt1),
            ],
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let family_id = RefreshTokenName::of(&Secret::new(rt1)).unwrap().family_id;
    assert!(app.stored_family(&family_id).await.revoked_at.is_some());
    assert_error(
        &refresh(&app, &client, field(&third, "refresh_token")).await,
        400,
        "invalid_grant",
        108,
    );
}
