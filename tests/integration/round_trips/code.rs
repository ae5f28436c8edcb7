//! The authorization code grant's budget: the code, obtained on the pages, redeemed for tokens
//! at the token endpoint.

use super::counted::*;
use crate::authorize::flow::{approved_code, code_client, exchange, LOGIN};
use reqwest::StatusCode;

/// Goal ≤ 3 + the rate limit: the code's record (`GetItem`), its redemption (a conditional
/// `UpdateItem`), the new family's transaction; the client comes from the read cache.
const AUTHORIZATION_CODE_CALLS: usize = 3;
/// The client's counter (1), the redemption (an item under 1 KB: 1) and the new family's
/// transaction (14).
const AUTHORIZATION_CODE_UNITS: f64 = RATE_LIMIT_UNITS + 1.0 + NEW_FAMILY_UNITS;

/// Warm: a first code of the same client redeemed before, so the client is cached.
pub async fn authorization_code(c: Counted) {
    c.app.create_user(LOGIN, PASSWORD).await;
    let client = code_client(&c.app).await;
    let code = approved_code(&c.app, &client).await;
    let (status, body) = exchange(&c.app, &client, &code, &[]).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    let code = approved_code(&c.app, &client).await;
    let ((status, body), calls) = c
        .calls_of("authorization_code", exchange(&c.app, &client, &code, &[]))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_within(
        &calls,
        AUTHORIZATION_CODE_CALLS + RATE_LIMIT,
        "authorization_code",
    );
    assert_eq!(calls.count("TransactWriteItems"), 1, "the family");
    assert_write_units(&calls, AUTHORIZATION_CODE_UNITS, "authorization_code");
}
