//! Refresh token rotation: one successor per token, nothing written by a refused rotation.

use futures::future::join_all;

use super::records::*;
use crate::domain::{Family, RefreshTokenRecord};
use crate::store::prelude::*;
use crate::store::Rotated;

pub async fn rotation_replaces_current_token(store: &dyn Store) {
    let now = now();
    let bundle = Bundle::live(now);
    bundle.create(store).await;

    let later = now + 10;
    let (successor, access) = bundle.successor(later, 1);
    let outcome = store
        .rotate_refresh_token(rotation(
            bundle.family.id,
            &bundle.refresh.token_hash,
            &successor,
            &access,
            later,
        ))
        .await
        .expect("rotate_refresh_token");
    assert_eq!(
        outcome,
        Rotated::Rotated,
        "rotating the current token works"
    );

    let family = store
        .get_family(&bundle.family.id, later)
        .await
        .expect("get_family")
        .expect("the family is present after rotation");
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
            ..family
        },
        bundle.family,
        "rotation changes nothing else in the family"
    );

    let old = store
        .get_refresh_token(&bundle.refresh.token_hash, later)
        .await
        .expect("get_refresh_token")
        .expect("a rotated refresh token is still readable");
    assert_eq!(
        old.rotated_at,
        Some(later),
        "the rotated token records when it was rotated"
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
        store
            .get_refresh_token(&successor.token_hash, later)
            .await
            .expect("get_refresh_token"),
        Some(successor.clone()),
        "the successor reads back as written"
    );
    assert_eq!(
        store
            .get_access_token(&access.jti, later)
            .await
            .expect("get_access_token"),
        Some(access),
        "the access token minted with the rotation reads back"
    );

    // And the successor rotates in turn.
    let (third, third_access) = bundle.successor(later + 10, 2);
    assert_eq!(
        store
            .rotate_refresh_token(rotation(
                bundle.family.id,
                &successor.token_hash,
                &third,
                &third_access,
                later + 10,
            ))
            .await
            .expect("rotate_refresh_token"),
        Rotated::Rotated,
        "the successor can be rotated in turn"
    );
    let family = store
        .get_family(&bundle.family.id, later + 10)
        .await
        .expect("get_family")
        .expect("family present");
    assert_eq!(family.current_token, third.token_hash);
    assert_eq!(family.generation, 2);
}

pub async fn rotation_with_non_current_token_writes_nothing(store: &dyn Store) {
    let now = now();
    let bundle = Bundle::live(now);
    bundle.create(store).await;
    let (first, first_access) = bundle.successor(now, 1);
    assert_eq!(
        store
            .rotate_refresh_token(rotation(
                bundle.family.id,
                &bundle.refresh.token_hash,
                &first,
                &first_access,
                now,
            ))
            .await
            .expect("rotate_refresh_token"),
        Rotated::Rotated
    );

    // The original token again (a replay), then a token that was never issued.
    for (presented, what) in [
        (
            bundle.refresh.token_hash.clone(),
            "an already rotated token",
        ),
        (random_hash(), "an unknown token"),
    ] {
        let (second, second_access) = bundle.successor(now + 5, 2);
        assert_eq!(
            store
                .rotate_refresh_token(rotation(
                    bundle.family.id,
                    &presented,
                    &second,
                    &second_access,
                    now + 5,
                ))
                .await
                .expect("rotate_refresh_token"),
            Rotated::NotCurrent,
            "rotating {what} is refused"
        );
        assert_eq!(
            store
                .get_refresh_token(&second.token_hash, now + 5)
                .await
                .expect("get_refresh_token"),
            None,
            "a refused rotation of {what} writes no successor"
        );
        assert_eq!(
            store
                .get_access_token(&second_access.jti, now + 5)
                .await
                .expect("get_access_token"),
            None,
            "a refused rotation of {what} writes no access token"
        );
    }

    let family = store
        .get_family(&bundle.family.id, now + 5)
        .await
        .expect("get_family")
        .expect("family present");
    assert_eq!(
        (family.current_token, family.generation),
        (first.token_hash.clone(), 1),
        "refused rotations leave the family as it was"
    );
    let original = store
        .get_refresh_token(&bundle.refresh.token_hash, now + 5)
        .await
        .expect("get_refresh_token")
        .expect("rotated token still readable");
    assert_eq!(
        original.rotated_at,
        Some(now),
        "a refused rotation does not touch the presented token's rotated_at"
    );

    // The family's current token presented under another family's id.
    let other = Bundle::live(now);
    other.create(store).await;
    let (stray, stray_access) = other.successor(now + 5, 1);
    assert_eq!(
        store
            .rotate_refresh_token(rotation(
                other.family.id,
                &first.token_hash,
                &stray,
                &stray_access,
                now + 5,
            ))
            .await
            .expect("rotate_refresh_token"),
        Rotated::NotCurrent,
        "a token is only current in its own family"
    );
    assert_eq!(
        store
            .get_refresh_token(&stray.token_hash, now + 5)
            .await
            .expect("get_refresh_token"),
        None,
        "a refused rotation writes no successor"
    );
}

pub async fn rotation_of_revoked_or_expired_family_is_refused(store: &dyn Store) {
    let now = now();

    let revoked = Bundle::live(now);
    revoked.create(store).await;
    assert!(store
        .revoke_family(&revoked.family.id, now)
        .await
        .expect("revoke_family"));
    let (successor, access) = revoked.successor(now + 1, 1);
    assert_eq!(
        store
            .rotate_refresh_token(rotation(
                revoked.family.id,
                &revoked.refresh.token_hash,
                &successor,
                &access,
                now + 1,
            ))
            .await
            .expect("rotate_refresh_token"),
        Rotated::NotCurrent,
        "the current token of a revoked family does not rotate"
    );
    assert_eq!(
        store
            .get_refresh_token(&successor.token_hash, now + 1)
            .await
            .expect("get_refresh_token"),
        None,
        "a refused rotation of a revoked family writes no successor"
    );

    let expiring = Bundle::new(now, now + 100);
    expiring.create(store).await;
    let (successor, access) = expiring.successor(now + 100, 1);
    assert_eq!(
        store
            .rotate_refresh_token(rotation(
                expiring.family.id,
                &expiring.refresh.token_hash,
                &successor,
                &access,
                now + 100,
            ))
            .await
            .expect("rotate_refresh_token"),
        Rotated::NotCurrent,
        "the current token of an expired family does not rotate"
    );
    assert_eq!(
        store
            .get_refresh_token(&successor.token_hash, now + 100)
            .await
            .expect("get_refresh_token"),
        None,
        "a refused rotation of an expired family writes no successor"
    );
    assert_eq!(
        store
            .get_access_token(&access.jti, now + 100)
            .await
            .expect("get_access_token"),
        None,
        "a refused rotation of an expired family writes no access token"
    );
}

/// From one refresh token at most one successor is ever issued (contract part 2), also when
/// many requests present it at the same moment.
pub async fn rotation_has_exactly_one_winner_of_20(store: &dyn Store) {
    const RACERS: u32 = 20;
    let now = now();
    let bundle = Bundle::live(now);
    bundle.create(store).await;

    // All racers wait at the barrier, so that every request is sent before any answer is read
    // and the rotations really overlap in the store.
    let barrier = tokio::sync::Barrier::new(RACERS as usize);
    let racers = (0..RACERS).map(|_| async {
        let (successor, access) = bundle.successor(now + 1, 1);
        barrier.wait().await;
        let outcome = store
            .rotate_refresh_token(rotation(
                bundle.family.id,
                &bundle.refresh.token_hash,
                &successor,
                &access,
                now + 1,
            ))
            .await
            .expect("rotate_refresh_token");
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

    let family = store
        .get_family(&bundle.family.id, now + 1)
        .await
        .expect("get_family")
        .expect("family present");
    assert_eq!(
        family.current_token, winner.token_hash,
        "the family's current token is the winner's successor"
    );
    assert_eq!(family.generation, 1, "the generation moved by exactly one");

    for (outcome, successor, access) in &results {
        let stored = store
            .get_refresh_token(&successor.token_hash, now + 1)
            .await
            .expect("get_refresh_token");
        let stored_access = store
            .get_access_token(&access.jti, now + 1)
            .await
            .expect("get_access_token");
        if *outcome == Rotated::Rotated {
            assert_eq!(
                stored.as_ref(),
                Some(winner),
                "the winner's successor exists"
            );
            assert_eq!(
                stored_access.as_ref(),
                Some(winner_access),
                "the winner's access token exists"
            );
        } else {
            assert_eq!(stored, None, "a losing rotation's successor does not exist");
            assert_eq!(
                stored_access, None,
                "a losing rotation's access token does not exist"
            );
        }
    }
}
