//! Rate limits: atomic hits per fixed window, and blocks.

use super::fixtures::*;
use super::records::*;
use crate::domain::AccessTokenRecord;
use crate::store::prelude::*;
use crate::store::{Committed, FamilyWrite, Gate, Gated, Hit, RateKey, RateLimit, WriteBatch};
use crate::writes::commit;

const LIMIT: RateLimit = RateLimit {
    max: 3,
    window_seconds: 60,
};

fn fresh_key(counter: &'static str) -> RateKey {
    RateKey::new(counter, &unique_login())
}

async fn hit(store: &dyn Store, key: &RateKey, at: i64) -> Hit {
    store
        .rate_limits()
        .count_hit(key, LIMIT, at)
        .await
        .expect("count_hit")
}

pub async fn rate_limit_refuses_over_the_limit_until_the_window_ends(store: &dyn Store) {
    let start = LIMIT.window_start(now()) + LIMIT.window_seconds;
    let key = fresh_key("conformance");
    for count in 1..=LIMIT.max {
        assert_eq!(
            hit(store, &key, start + i64::from(count)).await,
            Hit::Counted { count }
        );
    }
    assert_eq!(
        hit(store, &key, start + 10).await,
        Hit::Refused { retry_after: 50 },
        "refused, told to wait until the window ends"
    );
    assert_eq!(
        hit(store, &key, start + 59).await,
        Hit::Refused { retry_after: 1 }
    );
    let same_subject_other_counter = RateKey {
        counter: "conformance-other",
        ..key.clone()
    };
    assert_eq!(
        hit(store, &same_subject_other_counter, start + 10).await,
        Hit::Counted { count: 1 },
        "each counter counts apart"
    );
    assert_eq!(
        hit(store, &fresh_key("conformance"), start + 10).await,
        Hit::Counted { count: 1 },
        "each subject counts apart"
    );
    assert_eq!(
        hit(store, &key, start + 60).await,
        Hit::Counted { count: 1 },
        "the next window starts from zero"
    );
}

pub async fn refunded_rate_limit_hits_free_their_place(store: &dyn Store) {
    let start = LIMIT.window_start(now()) + LIMIT.window_seconds;
    let key = fresh_key("conformance");
    for count in 1..=LIMIT.max {
        assert_eq!(hit(store, &key, start).await, Hit::Counted { count });
    }
    store
        .rate_limits()
        .refund_hit(&key, LIMIT, start + 5)
        .await
        .expect("refund_hit");
    assert_eq!(
        hit(store, &key, start + 10).await,
        Hit::Counted { count: LIMIT.max },
        "the refunded place is taken again"
    );
    // A refund for a window that has ended, or of a counter never hit, changes nothing.
    store
        .rate_limits()
        .refund_hit(&key, LIMIT, start - LIMIT.window_seconds)
        .await
        .expect("refund_hit");
    store
        .rate_limits()
        .refund_hit(&fresh_key("conformance"), LIMIT, start)
        .await
        .expect("refund_hit");
    assert!(matches!(
        hit(store, &key, start + 20).await,
        Hit::Refused { .. }
    ));
}

/// The point of a conditional increment: parallel hits cannot pass the limit.
pub async fn parallel_rate_limit_hits_never_exceed_the_limit(store: &dyn Store) {
    let now = now();
    let key = fresh_key("conformance");
    let hits = futures::future::join_all((0..20).map(|_| hit(store, &key, now))).await;
    let mut counts: Vec<u32> = hits
        .iter()
        .filter_map(|hit| match hit {
            Hit::Counted { count } => Some(*count),
            Hit::Refused { .. } => None,
        })
        .collect();
    counts.sort_unstable();
    assert_eq!(
        counts,
        (1..=LIMIT.max).collect::<Vec<_>>(),
        "exactly the limit's hits pass, each with its own count"
    );
}

pub async fn rate_limit_blocks_last_until_their_end_and_never_shorten(store: &dyn Store) {
    let now = now();
    let key = fresh_key("conformance");
    let blocked = |at| store.rate_limits().blocked_until(&key, at);
    assert_eq!(blocked(now).await.expect("blocked_until"), None);
    store
        .rate_limits()
        .block_until(&key, now + 100)
        .await
        .expect("block_until");
    assert_eq!(blocked(now).await.expect("blocked_until"), Some(now + 100));
    store
        .rate_limits()
        .block_until(&key, now + 50)
        .await
        .expect("block_until");
    assert_eq!(
        blocked(now).await.expect("blocked_until"),
        Some(now + 100),
        "a shorter block leaves the longer one"
    );
    assert_eq!(
        blocked(now + 100).await.expect("blocked_until"),
        None,
        "read as absent once it has ended"
    );
    assert_eq!(
        store
            .rate_limits()
            .blocked_until(&fresh_key("conformance"), now)
            .await
            .expect("blocked_until"),
        None
    );
}

/// A batch of `record` gated by a hit on `key`, answered as the hit.
async fn put_counted(store: &dyn Store, record: &AccessTokenRecord, key: &RateKey, at: i64) -> Hit {
    let mut batch = WriteBatch::of([FamilyWrite::PutAccessToken(record.clone()).into()]);
    batch.count_first(key.clone(), LIMIT, at);
    match commit(store, batch).await {
        Committed::Applied {
            counted: Some(count),
            skipped,
        } if skipped.is_empty() => Hit::Counted { count },
        Committed::Limited { retry_after } => Hit::Refused { retry_after },
        other => panic!("a gated put answers its hit: {other:?}"),
    }
}

/// The token endpoint's `client_credentials` write: the token is stored exactly when its
/// request was counted, and a refused request stores nothing.
pub async fn a_counted_access_token_is_stored_only_when_counted(store: &dyn Store) {
    let now = now();
    let key = fresh_key("conformance-token");
    for count in 1..=LIMIT.max {
        let record = application_access_token(now);
        assert_eq!(
            put_counted(store, &record, &key, now).await,
            Hit::Counted { count }
        );
        assert_eq!(
            read_access_token(store, &record.jti, now).await,
            Some(record),
            "a counted request's token is stored"
        );
    }
    let refused = application_access_token(now);
    assert!(
        matches!(
            put_counted(store, &refused, &key, now).await,
            Hit::Refused { .. }
        ),
        "the request over the limit is refused"
    );
    assert_eq!(
        read_access_token(store, &refused.jti, now).await,
        None,
        "a refused request stores no token"
    );
    assert!(
        matches!(hit(store, &key, now).await, Hit::Refused { .. }),
        "the same counter as count_hit's"
    );
}

/// A rotation gated by `key`'s count, answered as the count with whether it landed.
async fn rotate_counted(
    store: &dyn Store,
    bundle: &Bundle,
    key: &RateKey,
    at: i64,
) -> (Gated<bool>, AccessTokenRecord) {
    let (successor, access) = bundle.successor(at, 1);
    let rotation = rotation(
        bundle.family.id,
        &bundle.refresh.token_hash,
        &successor,
        &access,
        at,
    );
    let gate = Gate {
        key: key.clone(),
        limit: LIMIT,
        now: at,
    };
    let gated = store
        .writes()
        .rotate_counted(rotation, Vec::new(), gate)
        .await
        .expect("rotate_counted");
    (gated, access)
}

/// The token endpoint's refresh write: counted in the rotation's own write. Over the limit
/// nothing is written or counted; under it the hit stays counted whether the rotation lands or
/// its condition refuses it (the request was made).
pub async fn a_counted_rotation_is_written_only_when_counted(store: &dyn Store) {
    let now = now();
    let key = fresh_key("conformance-rotation");
    for _ in 1..LIMIT.max {
        hit(store, &key, now).await;
    }
    let rotated = stored_bundle(store, now).await;
    let (gated, access) = rotate_counted(store, &rotated, &key, now).await;
    assert!(
        matches!(
            gated,
            Gated::Counted {
                count: 3,
                outcome: true
            }
        ),
        "the last place rotates: {gated:?}"
    );
    assert_eq!(
        read_access_token(store, &access.jti, now).await,
        Some(access)
    );

    let bundle = stored_bundle(store, now).await;
    let (gated, access) = rotate_counted(store, &bundle, &key, now).await;
    assert!(
        matches!(gated, Gated::Limited { retry_after } if (1..=60).contains(&retry_after)),
        "over the limit: {gated:?}"
    );
    let family = present_family(store, &bundle.family.id, now, "family").await;
    assert_eq!(family.generation, 0, "a limited rotation rotates nothing");
    assert_eq!(read_access_token(store, &access.jti, now).await, None);

    // The next window: a rotation its condition refuses (the token was rotated) still counts.
    let later = now + LIMIT.window_seconds;
    let (gated, _) = rotate_counted(store, &rotated, &key, later).await;
    assert!(
        matches!(
            gated,
            Gated::Counted {
                count: 1,
                outcome: false
            }
        ),
        "a refused rotation is counted: {gated:?}"
    );
    assert_eq!(
        hit(store, &key, later).await,
        Hit::Counted { count: 2 },
        "the same counter as count_hit's"
    );
}
