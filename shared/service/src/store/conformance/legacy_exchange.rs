//! The legacy exchange's link: it moves only from the family the caller saw.

use std::collections::HashSet;

use futures::future::join_all;

use super::records::*;
use crate::domain::{FamilyId, LegacyExchange};
use crate::random::{OsRandom, RandomExt};
use crate::store::prelude::*;
use crate::store::FamilyCreated;

pub async fn legacy_exchange_link_moves_only_from_the_seen_family(store: &dyn Store) {
    let now = now();
    let legacy = legacy_token(None);
    store
        .put_legacy_tokens(std::slice::from_ref(&legacy))
        .await
        .expect("put_legacy_tokens");

    // First exchange: never exchanged before.
    let first = Bundle::live(now);
    assert_eq!(
        store
            .create_family(exchange_of(&first, &legacy.token_hash, None, now))
            .await
            .expect("create_family"),
        FamilyCreated::Created,
        "the first exchange of a legacy token creates its family"
    );
    assert_eq!(
        store
            .get_legacy_exchange(&legacy.token_hash)
            .await
            .expect("get_legacy_exchange"),
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
        store
            .create_family(exchange_of(&stale, &legacy.token_hash, None, now + 1))
            .await
            .expect("create_family"),
        FamilyCreated::LegacyExchangeRaced,
        "an exchange that saw a stale link loses"
    );
    assert_eq!(
        store
            .get_family(&stale.family.id, now + 1)
            .await
            .expect("get_family"),
        None,
        "the losing exchange's family is not written"
    );
    assert_eq!(
        store
            .get_refresh_token(&stale.refresh.token_hash, now + 1)
            .await
            .expect("get_refresh_token"),
        None,
        "the losing exchange's refresh token is not written"
    );
    assert_eq!(
        store
            .get_access_token(&stale.access.jti, now + 1)
            .await
            .expect("get_access_token"),
        None,
        "the losing exchange's access token is not written"
    );
    assert_eq!(
        store
            .get_legacy_exchange(&legacy.token_hash)
            .await
            .expect("get_legacy_exchange")
            .map(|e| e.family_id),
        Some(first.family.id),
        "the losing exchange leaves the link alone"
    );
    assert_eq!(
        store
            .get_family(&first.family.id, now + 1)
            .await
            .expect("get_family")
            .and_then(|f| f.revoked_at),
        None,
        "the losing exchange revokes nothing"
    );

    // A stale previous family that is some other family: also loses.
    let wrong_previous = Bundle::live(now);
    assert_eq!(
        store
            .create_family(exchange_of(
                &wrong_previous,
                &legacy.token_hash,
                Some(FamilyId::new(OsRandom.uuid())),
                now + 1,
            ))
            .await
            .expect("create_family"),
        FamilyCreated::LegacyExchangeRaced,
        "an exchange that saw another family linked loses"
    );
    assert_eq!(
        store
            .get_family(&wrong_previous.family.id, now + 1)
            .await
            .expect("get_family"),
        None,
        "the losing exchange's family is not written"
    );

    // The repeated exchange that saw the current link: moves it and revokes the previous family.
    let second = Bundle::live(now + 2);
    assert_eq!(
        store
            .create_family(exchange_of(
                &second,
                &legacy.token_hash,
                Some(first.family.id),
                now + 2,
            ))
            .await
            .expect("create_family"),
        FamilyCreated::Created,
        "an exchange that saw the current link creates its family"
    );
    assert_eq!(
        store
            .get_legacy_exchange(&legacy.token_hash)
            .await
            .expect("get_legacy_exchange"),
        Some(LegacyExchange {
            token_hash: legacy.token_hash.clone(),
            family_id: second.family.id,
            exchanged_at: now + 2,
        }),
        "the link moves to the new family"
    );
    assert!(
        store
            .get_family(&first.family.id, now + 2)
            .await
            .expect("get_family")
            .expect("previous family still present")
            .revoked_at
            .is_some(),
        "the previously linked family is revoked"
    );
    let old_access = store
        .get_access_token(&first.access.jti, now + 2)
        .await
        .expect("get_access_token")
        .expect("previous family's access token present");
    assert!(
        old_access.revoked,
        "the previous family's access token reads revoked"
    );
    assert_eq!(
        store
            .get_family(&second.family.id, now + 2)
            .await
            .expect("get_family"),
        Some(second.family.clone()),
        "the new family is live"
    );
    assert_eq!(
        store
            .get_legacy_token(&legacy.token_hash, now + 2)
            .await
            .expect("get_legacy_token"),
        Some(legacy),
        "exchanging leaves the imported legacy token as it was"
    );
}

pub async fn concurrent_first_legacy_exchanges_have_one_winner(store: &dyn Store) {
    const RACERS: usize = 10;
    let now = now();
    let legacy = legacy_token(None);
    store
        .put_legacy_tokens(std::slice::from_ref(&legacy))
        .await
        .expect("put_legacy_tokens");

    // All racers wait at the barrier, so that the exchanges really overlap in the store.
    let barrier = tokio::sync::Barrier::new(RACERS);
    let racers = (0..RACERS).map(|_| async {
        let bundle = Bundle::live(now);
        barrier.wait().await;
        let outcome = store
            .create_family(exchange_of(&bundle, &legacy.token_hash, None, now))
            .await
            .expect("create_family");
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
        store
            .get_legacy_exchange(&legacy.token_hash)
            .await
            .expect("get_legacy_exchange")
            .map(|e| e.family_id),
        Some(winners[0]),
        "the link points at the winner's family"
    );
    let mut live = HashSet::new();
    for (_, id) in &results {
        if store
            .get_family(id, now)
            .await
            .expect("get_family")
            .is_some()
        {
            live.insert(*id);
        }
    }
    assert_eq!(
        live,
        HashSet::from([winners[0]]),
        "only the winner's family was written"
    );
}
