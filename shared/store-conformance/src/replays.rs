//! Replays: a `jti` is used once until it expires.

use uuid::Uuid;

use super::batch::{family_events, revoked_event};
use super::records::*;
use crate::domain::FamilyId;
use crate::store::prelude::*;
use crate::store::{Committed, FirstUse, ReplayKey, WriteBatch};
use crate::writes::commit;

fn fresh_key(scope: &str) -> ReplayKey {
    ReplayKey::new("conformance", scope, &unique_login())
}

async fn first_use(store: &dyn Store, key: &ReplayKey, expires_at: i64, now: i64) -> bool {
    store
        .replays()
        .first_use(key, expires_at, now)
        .await
        .expect("first_use")
}

pub async fn jti_is_used_once_until_it_expires(store: &dyn Store) {
    let now = now();
    let key = fresh_key("client-a");
    assert!(first_use(store, &key, now + 60, now).await, "first use");
    assert!(
        !first_use(store, &key, now + 60, now).await,
        "the same jti again is a replay"
    );
    assert!(
        !first_use(store, &key, now + 600, now + 59).await,
        "still a replay the second before it expires, whatever the new expiry"
    );
    assert!(
        first_use(store, &key, now + 120, now + 60).await,
        "usable again once expired (a lingering item is not a replay)"
    );
    assert!(
        !first_use(store, &key, now + 120, now + 61).await,
        "and the new use holds until its own expiry"
    );
    let jti = unique_login();
    assert!(
        first_use(
            store,
            &ReplayKey::new("conformance", "client-a", &jti),
            now + 60,
            now
        )
        .await
    );
    assert!(
        first_use(
            store,
            &ReplayKey::new("conformance", "client-b", &jti),
            now + 60,
            now
        )
        .await,
        "one jti in another scope is another key"
    );
    assert!(
        first_use(
            store,
            &ReplayKey::new("conformance-other", "client-a", &jti),
            now + 60,
            now
        )
        .await,
        "and in another kind too"
    );
}

/// The point of a conditional write: parallel uses of one `jti` have one winner.
pub async fn parallel_first_uses_of_one_jti_have_one_winner(store: &dyn Store) {
    let now = now();
    let key = fresh_key("client-a");
    let uses =
        futures::future::join_all((0..20).map(|_| first_use(store, &key, now + 60, now))).await;
    assert_eq!(
        uses.iter().filter(|first| **first).count(),
        1,
        "exactly one of 20 parallel uses is the first: {uses:?}"
    );
}

/// A first use inside a batch (a redeemed assertion's `jti` with its token): its condition
/// decides the batch, so a used `jti` writes nothing, and a batch that was not written spent
/// nothing.
pub async fn a_first_use_in_a_batch_decides_it(store: &dyn Store) {
    let now = now();
    let key = fresh_key("client-a");
    let batch_spending = |family: FamilyId| {
        let mut batch = WriteBatch::new();
        let spends = batch.require([FirstUse {
            key: key.clone(),
            expires_at: now + 60,
            now,
        }
        .into()]);
        batch.require([revoked_event(now, family).into()]);
        (batch, spends)
    };
    let first = FamilyId::new(Uuid::new_v4());
    let (batch, _) = batch_spending(first);
    assert!(
        matches!(commit(store, batch).await, Committed::Applied { .. }),
        "a fresh jti's batch is written"
    );
    assert_eq!(family_events(store, first, now).await, 1, "with its event");
    assert!(
        !first_use(store, &key, now + 60, now).await,
        "and the jti is spent"
    );
    let second = FamilyId::new(Uuid::new_v4());
    let (batch, spends) = batch_spending(second);
    assert_eq!(
        commit(store, batch).await,
        Committed::Refused(spends),
        "a spent jti refuses its batch"
    );
    assert_eq!(
        family_events(store, second, now).await,
        0,
        "and nothing of it is written"
    );
}
