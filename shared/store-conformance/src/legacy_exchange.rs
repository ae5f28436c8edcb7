//! The legacy exchange's link: it moves only from the family the caller saw.

use std::collections::HashSet;

use futures::future::join_all;

use super::fixtures::*;
use super::records::*;
use crate::domain::{FamilyId, LegacyExchange};
use crate::random::{OsRandom, RandomExt};
use crate::store::prelude::*;
use crate::writes::FamilyCreated;

pub async fn legacy_exchange_link_moves_only_from_the_seen_family(store: &dyn Store) {
    let now = now();
    let legacy = stored_legacy_token(store).await;

    // First exchange: never exchanged before.
    let first = Bundle::live(now);
    assert_eq!(
        exchange(store, &first, &legacy.token_hash, None, now).await,
        FamilyCreated::Created,
        "the first exchange of a legacy token creates its family"
    );
    assert_eq!(
        read_legacy_exchange(store, &legacy.token_hash).await,
        Some(LegacyExchange {
            token_hash: legacy.token_hash.clone(),
            family_id: first.family.id,
            exchanged_at: now,
        }),
        "the exchange link points at the new family"
    );

    // A racing exchange that also saw "never exchanged": it must write nothing.
    let stale = Bundle::live(now);
    assert_eq!(
        exchange(store, &stale, &legacy.token_hash, None, now + 1).await,
        FamilyCreated::LegacyExchangeRaced,
        "an exchange that saw a stale link loses"
    );
    assert_bundle_absent(store, &stale, now + 1, "the losing exchange writes nothing").await;
    assert_eq!(
        read_legacy_exchange(store, &legacy.token_hash)
            .await
            .map(|e| e.family_id),
        Some(first.family.id),
        "the losing exchange leaves the link alone"
    );
    assert_eq!(
        read_family(store, &first.family.id, now + 1)
            .await
            .and_then(|f| f.revoked_at),
        None,
        "the losing exchange revokes nothing"
    );

    // A stale previous family that is some other family: also loses.
    let wrong_previous = Bundle::live(now);
    assert_eq!(
        exchange(
            store,
            &wrong_previous,
            &legacy.token_hash,
            Some(FamilyId::new(OsRandom.uuid())),
            now + 1,
        )
        .await,
        FamilyCreated::LegacyExchangeRaced,
        "an exchange that saw another family linked loses"
    );
    assert_bundle_absent(
        store,
        &wrong_previous,
        now + 1,
        "the exchange that saw another family linked writes nothing",
    )
    .await;

    // The repeated exchange that saw the current link: moves it and revokes the previous family.
    let second = Bundle::live(now + 2);
    assert_eq!(
        exchange(
            store,
            &second,
            &legacy.token_hash,
            Some(first.family.id),
            now + 2,
        )
        .await,
        FamilyCreated::CreatedRevokingPrevious,
        "an exchange that saw the current link creates its family and revokes the previous one"
    );
    assert_eq!(
        read_legacy_exchange(store, &legacy.token_hash).await,
        Some(LegacyExchange {
            token_hash: legacy.token_hash.clone(),
            family_id: second.family.id,
            exchanged_at: now + 2,
        }),
        "the link moves to the new family"
    );
    assert!(
        present_family(
            store,
            &first.family.id,
            now + 2,
            "previous family still present"
        )
        .await
        .revoked_at
        .is_some(),
        "the previously linked family is revoked"
    );
    let old_access = read_access_token(store, &first.access.jti, now + 2).await;
    assert!(
        old_access.is_some_and(|token| token.revoked),
        "the previous family's access token is still present and reads revoked"
    );
    assert_eq!(
        read_family(store, &second.family.id, now + 2).await,
        Some(second.family.clone()),
        "the new family is live"
    );
    assert_eq!(
        read_legacy_token(store, &legacy.token_hash, now + 2).await,
        Some(legacy),
        "exchanging leaves the imported legacy token as it was"
    );
}

pub async fn concurrent_first_legacy_exchanges_have_one_winner(store: &dyn Store) {
    const RACERS: usize = 10;
    let now = now();
    let legacy = stored_legacy_token(store).await;

    // All racers wait at the barrier, so that the exchanges really overlap in the store.
    let barrier = tokio::sync::Barrier::new(RACERS);
    let racers = (0..RACERS).map(|_| async {
        let bundle = Bundle::live(now);
        barrier.wait().await;
        let outcome = exchange(store, &bundle, &legacy.token_hash, None, now).await;
        (outcome, bundle.family.id)
    });
    let results = join_all(racers).await;
    let winners: Vec<FamilyId> = results
        .iter()
        .filter(|(outcome, _)| *outcome == FamilyCreated::Created)
        .map(|(_, id)| *id)
        .collect();
    assert_eq!(
        winners.len(),
        1,
        "exactly one of {RACERS} concurrent first exchanges of one legacy token wins"
    );
    assert_eq!(
        read_legacy_exchange(store, &legacy.token_hash)
            .await
            .map(|e| e.family_id),
        Some(winners[0]),
        "the link points at the winner's family"
    );
    let mut live = HashSet::new();
    for (_, id) in &results {
        if read_family(store, id, now).await.is_some() {
            live.insert(*id);
        }
    }
    assert_eq!(
        live,
        HashSet::from([winners[0]]),
        "only the winner's family was written"
    );
}
