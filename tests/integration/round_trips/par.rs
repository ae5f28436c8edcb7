//! Budgets of pushed authorization requests (RFC 9126), warm: the push, and the authorize
//! request that uses one.

use super::counted::*;
use crate::authorize::flow::{code_client, Session};
use crate::par::{by_reference, parameters, pushed};
use reqwest::StatusCode;

/// The pushed request's item (under 1 KB: 1) and the client's counter (1).
const PAR_PUSH_UNITS: f64 = 1.0 + RATE_LIMIT_UNITS;
/// The conditional take: a `DeleteItem` of the pushed request (under 1 KB: 1).
const PAR_AUTHORIZE_UNITS: f64 = 1.0;

/// Goal ≤ 1 + the rate limit: the client comes from the read cache; one `PutItem` keeps the
/// pushed request (counted as a token request of the client, as the device codes are).
pub async fn par_push(c: Counted) {
    let client = code_client(&c.app).await;
    pushed(&c.app, &client, &parameters(&[])).await;
    let (_, calls) = c
        .calls_of("PAR push", pushed(&c.app, &client, &parameters(&[])))
        .await;
    assert_within(&calls, 1 + RATE_LIMIT, "PAR push");
    assert_eq!(calls.count("PutItem"), 1, "the pushed request");
    assert_write_units(&calls, PAR_PUSH_UNITS, "PAR push");
}

/// Goal ≤ 1: the one conditional `DeleteItem` that takes the pushed request (and answers it);
/// the client comes from the read cache, and the sign-in page writes nothing.
pub async fn par_authorize(c: Counted) {
    let client = code_client(&c.app).await;
    let warm = pushed(&c.app, &client, &parameters(&[])).await;
    Session::new(&c.app)
        .open(&by_reference(&client, &warm))
        .await;
    let request_uri = pushed(&c.app, &client, &parameters(&[])).await;
    let query = by_reference(&client, &request_uri);
    let mut session = Session::new(&c.app);
    let (page, calls) = c
        .calls_of("authorize with a request_uri", session.open(&query))
        .await;
    assert_eq!(page.status(), StatusCode::OK, "the sign-in page");
    assert_within(&calls, 1, "authorize with a request_uri");
    assert_eq!(calls.count("DeleteItem"), 1, "the conditional take");
    assert_write_units(&calls, PAR_AUTHORIZE_UNITS, "authorize with a request_uri");
}
