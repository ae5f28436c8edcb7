//! No hot item (docs/decisions.md, "Abuse limits"): one client's token requests, 5,000 of them
//! from many parallel callers, spread their counter's writes over 16 items, none taking more
//! than 500; past the limit, a counter that refused is not written again by this process until
//! its window ends. Counted at the wire by the proxy in front of DynamoDB Local.

use super::counted::Counted;
use crate::limits::with_limits;
use crate::support::app::TestClient;
use futures::stream::{self, StreamExt};
use reqwest::StatusCode;
use token_core::config::RateLimits;

const GRANTS: usize = 5000;
const CALLERS: usize = 32;
/// The two floods take turns: together, on two cores, DynamoDB Local answers some calls later
/// than the store's timeouts and the test would measure the machine, not the counters.
static ONE_FLOOD_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
/// What one item may take at that load (DynamoDB allows about 1,000 writes a second).
const HOT_ITEM_WRITES: usize = 500;
const CLIENT_COUNTERS: &str = "RATE#client#";
/// "Retrying the same request is safe" (the 503's own words): a caller's retries of one grant.
const RETRIES_AFTER_503: usize = 2;

/// What a flood saw: each grant's last status, the counter writes (`UpdateItem`) per counter
/// item, and how many requests were sent again after a 503 (each counted again).
struct Flood {
    statuses: Vec<StatusCode>,
    writes: std::collections::BTreeMap<String, usize>,
    resent: usize,
}

/// `GRANTS` client_credentials grants, `CALLERS` at a time.
async fn flood(counted: &Counted, client: &TestClient) -> Flood {
    let form = [
        ("grant_type", "client_credentials"),
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
    ];
    let app = &counted.app;
    let resent = &std::sync::atomic::AtomicUsize::new(0);
    let _turn = ONE_FLOOD_AT_A_TIME.lock().await;
    let (statuses, calls) = counted
        .calls_of("one client's grants", async {
            stream::iter(0..GRANTS)
                .map(|_| async {
                    // As a client would: a 503 (DynamoDB Local answering a write later than
                    // the store's timeouts, on a loaded machine) is retried, and must then pass.
                    let mut status = app.token(&form).await.0;
                    for _ in 0..RETRIES_AFTER_503 {
                        if status != StatusCode::SERVICE_UNAVAILABLE {
                            break;
                        }
                        resent.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        status = app.token(&form).await.0;
                    }
                    status
                })
                .buffer_unordered(CALLERS)
                .collect::<Vec<_>>()
                .await
        })
        .await;
    // A resent write lands on its item too: the items' load counts every attempt.
    let calls = calls.including_resends();
    Flood {
        statuses,
        writes: calls.per_partition("UpdateItem", CLIENT_COUNTERS),
        resent: resent.load(std::sync::atomic::Ordering::Relaxed),
    }
}

async fn counted_with_client_limit(per_minute: u32) -> Option<(Counted, TestClient)> {
    let counted = Counted::start().await?;
    let limits = RateLimits {
        client_per_minute: per_minute,
        ..RateLimits::default()
    };
    let counted = counted.with_options(with_limits(limits)).await;
    let client = counted.app.create_client("read").await;
    Some((counted, client))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn a_busy_clients_counter_is_spread_over_sixteen_items() {
    let Some((counted, client)) = counted_with_client_limit(300_000).await else {
        return;
    };
    let Flood {
        statuses,
        writes,
        resent,
    } = flood(&counted, &client).await;
    let refused: Vec<&StatusCode> = statuses.iter().filter(|s| **s != StatusCode::OK).collect();
    assert!(
        refused.is_empty(),
        "within the limit every grant passes: {} refused, {refused:?}",
        refused.len()
    );
    assert_eq!(writes.len(), 16, "16 counters: {writes:?}");
    // One count a grant. The proxy sees each attempt, and on a loaded machine the SDK retries a
    // few counter writes that DynamoDB Local answered too late (16 of 5,000 in one CI run): at
    // most 1 % more, never fewer; a grant the caller sent again after a 503 counts again.
    let counts = writes.values().sum::<usize>();
    assert!(
        (GRANTS..=GRANTS + resent + GRANTS / 100).contains(&counts),
        "one count a grant, retried attempts aside: {counts} ({resent} sent again)"
    );
    assert!(
        writes.values().all(|&n| n <= HOT_ITEM_WRITES),
        "no counter takes more than {HOT_ITEM_WRITES}: {writes:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn a_flood_past_the_limit_stops_writing_the_full_counters() {
    // 16 counters of 100.
    let Some((counted, client)) = counted_with_client_limit(1600).await else {
        return;
    };
    let Flood {
        statuses,
        writes,
        resent,
    } = flood(&counted, &client).await;
    let passed = statuses.iter().filter(|s| **s == StatusCode::OK).count();
    let refused = statuses
        .iter()
        .filter(|s| **s == StatusCode::TOO_MANY_REQUESTS)
        .count();
    let others: Vec<_> = statuses
        .iter()
        .filter(|s| **s != StatusCode::OK && **s != StatusCode::TOO_MANY_REQUESTS)
        .collect();
    assert_eq!(
        passed + refused,
        GRANTS,
        "each grant passed or was refused: {others:?}"
    );
    assert_eq!(passed, 1600, "the limit, exactly: each counter filled");
    // Counted writes, plus the refused ones: at most two a request in flight when its counters
    // filled, then none (remembered until the window ends).
    let total: usize = writes.values().sum();
    assert!(
        total <= 1600 + 2 * CALLERS + 16 + resent,
        "{total} counter writes for {refused} refusals ({resent} sent again): {writes:?}"
    );
    assert!(
        writes.values().all(|&n| n <= HOT_ITEM_WRITES),
        "no counter takes more than {HOT_ITEM_WRITES}: {writes:?}"
    );
}
