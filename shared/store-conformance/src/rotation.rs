//! Refresh token rotation: one successor per token, nothing written by a refused rotation.

use futures::future::join_all;

use super::fixtures::*;
use super::records::*;
use crate::domain::{Family, RefreshTokenRecord};
use crate::store::prelude::*;
use crate::writes::Rotated;

pub async fn rotation_replaces_current_token(store: &dyn Store) {
    let now = now();
    let bundle = stored_bundle(store, now).await;

    let later = now + 10;
    let (successor, access) = assert_first_rotation(store, &bundle, later).await;

    let family = present_family(
        store,
        &bundle.family.id,
        later,
        "the family is present after rotation",
    )
    .await;
    assert_eq!(
        family.current_token, successor.token_hash,
        "the successor is the current token"
    );
    assert_eq!(family.generation, 1, "rotation increments the generation");
    assert_eq!(
        family.expires_at, successor.expires_at,
        "the family's expiry becomes the successor's"
    );
    assert_eq!(family.revoked_at, None, "rotation does not revoke");
    assert_eq!(
        Family {
            current_token: bundle.family.current_token.clone(),
            generation: 0,
            expires_at: bundle.family.expires_at,
            rotated_at: None,
            rotated_by: None,
            current_jkt: None,
            bound_from: None,
            ..family.clone()
        },
        bundle.family,
        "rotation changes nothing else in the family"
    );

    let old = read_refresh_token(store, &bundle.refresh.token_hash, later)
        .await
        .expect("a rotated refresh token is still readable");
    assert_eq!(
        old.rotated_at.or(family.rotated_at),
        Some(later),
        "the rotation's time is recorded, on the rotated token or on the family"
    );
    assert_eq!(
        RefreshTokenRecord {
            rotated_at: None,
            ..old
        },
        bundle.refresh,
        "rotation changes nothing else in the rotated token"
    );
    assert_eq!(
        read_refresh_token(store, &successor.token_hash, later).await,
        None,
        "the successor has no record: it names its family, which holds it"
    );
    assert_eq!(
        read_access_token(store, &access.jti, later).await,
        Some(access),
        "the access token minted with the rotation reads back"
    );

    // And the successor rotates in turn.
    let (third, _) = assert_rotates(
        store,
        &bundle,
        &successor.token_hash,
        bundle.successor(later + 10, 2),
        "the successor can be rotated in turn",
    )
    .await;
    let family = present_family(store, &bundle.family.id, later + 10, "family present").await;
    assert_eq!(family.current_token, third.token_hash);
    assert_eq!(family.generation, 2);
}

pub async fn rotation_with_non_current_token_writes_nothing(store: &dyn Store) {
    let now = now();
    let bundle = stored_bundle(store, now).await;
    let (first, _) = assert_first_rotation(store, &bundle, now).await;

    // The original token again (a replay), then a token that was never issued.
    for (presented, what) in [
        (
            bundle.refresh.token_hash.clone(),
            "an already rotated token",
        ),
        (random_hash(), "an unknown token"),
    ] {
        assert_rotation_refused(
            store,
            &bundle,
            &presented,
            bundle.successor(now + 5, 2),
            what,
        )
        .await;
    }

    let family = present_family(store, &bundle.family.id, now + 5, "family present").await;
    assert_eq!(
        (family.current_token, family.generation),
        (first.token_hash.clone(), 1),
        "refused rotations leave the family as it was"
    );
    let original = read_refresh_token(store, &bundle.refresh.token_hash, now + 5)
        .await
        .expect("rotated token still readable");
    assert_eq!(
        original.rotated_at.or(family.rotated_at),
        Some(now),
        "a refused rotation does not touch the rotation's time"
    );

    // The family's current token presented under another family's id.
    let other = stored_bundle(store, now).await;
    assert_rotation_refused(
        store,
        &other,
        &first.token_hash,
        other.successor(now + 5, 1),
        "a token under another family's id (a token is only current in its own family)",
    )
    .await;
}

pub async fn rotation_of_revoked_or_expired_family_is_refused(store: &dyn Store) {
    let now = now();

    let revoked = stored_bundle(store, now).await;
    assert!(store
        .families()
        .revoke_family(&revoked.family.id, now)
        .await
        .expect("revoke_family"));
    assert_rotation_refused(
        store,
        &revoked,
        &revoked.refresh.token_hash,
        revoked.successor(now + 1, 1),
        "the current token of a revoked family",
    )
    .await;

    let expiring = Bundle::new(now, now + 100);
    expiring.create(store).await;
    assert_rotation_refused(
        store,
        &expiring,
        &expiring.refresh.token_hash,
        expiring.successor(now + 100, 1),
        "the current token of an expired family",
    )
    .await;
}

/// From one refresh token at most one successor is ever issued (docs/decisions.md, "Token
/// formats"), also when many requests present it at the same moment.
pub async fn rotation_has_exactly_one_winner_of_20(store: &dyn Store) {
    const RACERS: u32 = 20;
    let now = now();
    let bundle = stored_bundle(store, now).await;

    // All racers wait at the barrier, so that every request is sent before any answer is read
    // and the rotations really overlap in the store.
    let barrier = tokio::sync::Barrier::new(RACERS as usize);
    let racers = (0..RACERS).map(|_| async {
        let successor = bundle.successor(now + 1, 1);
        barrier.wait().await;
        let outcome = rotate(store, &bundle, &bundle.refresh.token_hash, &successor).await;
        let (successor, access) = successor;
        (outcome, successor, access)
    });
    let results = join_all(racers).await;

    let winners: Vec<_> = results
        .iter()
        .filter(|(outcome, _, _)| *outcome == Rotated::Rotated)
        .collect();
    assert_eq!(
        winners.len(),
        1,
        "exactly one of {RACERS} concurrent rotations of one token wins ({} won)",
        winners.len()
    );
    assert_eq!(
        results
            .iter()
            .filter(|(outcome, _, _)| *outcome == Rotated::NotCurrent)
            .count(),
        RACERS as usize - 1,
        "every other concurrent rotation reads NotCurrent"
    );
    let (_, winner, winner_access) = winners[0];

    let family = present_family(store, &bundle.family.id, now + 1, "family present").await;
    assert_eq!(
        family.current_token, winner.token_hash,
        "the family's current token is the winner's successor"
    );
    assert_eq!(family.generation, 1, "the generation moved by exactly one");

    for (outcome, successor, access) in &results {
        let stored = read_refresh_token(store, &successor.token_hash, now + 1).await;
        let stored_access = read_access_token(store, &access.jti, now + 1).await;
        assert_eq!(stored, None, "no successor has a record of its own");
        if *outcome == Rotated::Rotated {
            assert_eq!(
                stored_access.as_ref(),
                Some(winner_access),
                "the winner's access token exists"
            );
        } else {
            assert_eq!(
                stored_access, None,
                "a losing rotation's access token does not exist"
            );
        }
    }
}
