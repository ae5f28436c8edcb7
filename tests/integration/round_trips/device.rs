//! Budgets of the device grant's polls, warm (issue 43): a pending poll costs one read and no
//! write of its own; `slow_down` one read and one write (the grown interval); the approved poll
//! what issuing a user family costs. Each abuse limit is one conditional write besides, and with
//! the client's limit off a pending poll is exactly one call.
//!
//! Warm as every budget here: the client in this instance's read cache. Its entry lives at most
//! `READ_CACHE_SECONDS` (5), the poll interval, so it is the client's other requests on the
//! instance (its other devices) that keep it there: `warm` stands for them. A lone device
//! polling an instance nothing else calls reads its client as well.

use super::counted::*;
use crate::device::{approval, codes, decide, poll};
use crate::support::app::TestClient;
use token_core::config::RateLimits;
use token_domain::clock::Clock;
use uuid::Uuid;

#[track_caller]
fn assert_refused(answer: &crate::support::assertions::Answer, error: &str, code: u64) {
    crate::support::assertions::assert_token_error(answer, 400, error, code);
}

/// Codes for `client`, polled once (the instance's first sight of the code) so that the
/// counted polls are warm: the client is cached.
async fn polled_codes(c: &Counted, client: &TestClient) -> (String, String) {
    let body = codes(&c.app, client, "openid read").await;
    let device_code = body["device_code"].as_str().unwrap().to_owned();
    assert_refused(
        &poll(&c.app, client, &device_code).await,
        "authorization_pending",
        170,
    );
    let user_code = body["user_code"].as_str().unwrap().to_owned();
    (device_code, user_code)
}

/// A pending poll: no write but the client's counter (1).
const DEVICE_POLL_PENDING_UNITS: f64 = RATE_LIMIT_UNITS;
/// `slow_down`: the grown interval besides (an `UpdateItem` of the code's item, under 1 KB: 1).
const DEVICE_POLL_SLOW_DOWN_UNITS: f64 = RATE_LIMIT_UNITS + 1.0;
/// The approved poll: the client's counter (1), the redemption (an `UpdateItem`: 1) and the new
/// family's transaction (14).
const DEVICE_POLL_APPROVED_UNITS: f64 = RATE_LIMIT_UNITS + 1.0 + NEW_FAMILY_UNITS;

/// Another device of the same app asks for codes: the client is read into the cache again.
async fn warm(c: &Counted, client: &TestClient) {
    codes(&c.app, client, "read").await;
}

pub async fn device_poll(c: Counted) {
    let client = c.app.create_client("read").await;
    let (device_code, user_code) = polled_codes(&c, &client).await;

    c.app.clock.advance(5);
    warm(&c, &client).await;
    let (answer, calls) = c
        .calls_of("device poll, pending", poll(&c.app, &client, &device_code))
        .await;
    assert_refused(&answer, "authorization_pending", 170);
    assert_eq!(calls.count("GetItem"), 1, "the device code's record");
    assert_eq!(
        calls.count("UpdateItem"),
        RATE_LIMIT,
        "no write but the client's counter: {:?}",
        calls.by_operation()
    );
    assert_eq!(calls.total(), 1 + RATE_LIMIT, "{:?}", calls.by_operation());
    assert_write_units(&calls, DEVICE_POLL_PENDING_UNITS, "device poll, pending");

    c.app.clock.advance(2);
    let (answer, calls) = c
        .calls_of("device poll, too fast", poll(&c.app, &client, &device_code))
        .await;
    assert_refused(&answer, "slow_down", 171);
    assert_eq!(calls.count("GetItem"), 1);
    assert_eq!(
        calls.count("UpdateItem"),
        1 + RATE_LIMIT,
        "the grown interval, the client's counter"
    );
    assert_eq!(calls.total(), 2 + RATE_LIMIT, "{:?}", calls.by_operation());
    assert_write_units(&calls, DEVICE_POLL_SLOW_DOWN_UNITS, "device poll, too fast");

    // Well paced again: back to one read.
    c.app.clock.advance(10);
    warm(&c, &client).await;
    let (answer, calls) = c
        .calls_of(
            "device poll, pending again",
            poll(&c.app, &client, &device_code),
        )
        .await;
    assert_refused(&answer, "authorization_pending", 170);
    assert_eq!(calls.total(), 1 + RATE_LIMIT, "{:?}", calls.by_operation());

    let login = format!("user-{}@example.com", Uuid::new_v4().simple());
    let user = c.app.create_user(&login, PASSWORD).await;
    assert!(decide(&c.app, &user_code, &approval(user.id, c.app.clock.now())).await);
    c.app.clock.advance(10);
    warm(&c, &client).await;
    let (answer, calls) = c
        .calls_of("device poll, approved", poll(&c.app, &client, &device_code))
        .await;
    ok(answer);
    assert_eq!(
        calls.count("GetItem"),
        2,
        "the device code's record, the user: {:?}",
        calls.by_operation()
    );
    assert_eq!(
        calls.count("TransactWriteItems"),
        1,
        "the family: {:?}",
        calls.by_operation()
    );
    assert_eq!(
        calls.count("UpdateItem"),
        1 + RATE_LIMIT,
        "the redemption, the client's counter: {:?}",
        calls.by_operation()
    );
    assert_eq!(calls.total(), 4 + RATE_LIMIT, "{:?}", calls.by_operation());
    assert_write_units(&calls, DEVICE_POLL_APPROVED_UNITS, "device poll, approved");
}

/// With the client's rate limit off, a pending poll is exactly one call: one read.
pub async fn device_poll_without_the_client_limit(c: Counted) {
    let c = c
        .with_options(crate::limits::with_limits(RateLimits {
            client_per_minute: 0,
            ..RateLimits::default()
        }))
        .await;
    let client = c.app.create_client("read").await;
    let (device_code, _) = polled_codes(&c, &client).await;
    for _ in 0..3 {
        c.app.clock.advance(5);
        warm(&c, &client).await;
        let (answer, calls) = c
            .calls_of(
                "device poll, pending, no limit",
                poll(&c.app, &client, &device_code),
            )
            .await;
        assert_refused(&answer, "authorization_pending", 170);
        assert_eq!(calls.count("GetItem"), 1, "{:?}", calls.by_operation());
        assert_eq!(calls.total(), 1, "{:?}", calls.by_operation());
        assert_write_units(&calls, 0.0, "device poll, pending, no limit");
    }
}
