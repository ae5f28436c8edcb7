//! The token exchange's budget (RFC 8693).

use super::counted::*;
use reqwest::StatusCode;

/// The client's counter (1) and one transaction: the new token's `jti` and its two audit events
/// (3 items under 1 KB at 2 each: 6).
const TOKEN_EXCHANGE_UNITS: f64 = RATE_LIMIT_UNITS + 6.0;

/// Goal ≤ 2 + the rate limit: the client from the cache; one read of the subject token's
/// record, one write of the new token with its `token.exchanged` event.
pub async fn token_exchange(c: Counted) {
    let client = c.app.create_client("read").await;
    let subject = c.app.app_token(&client).await;
    let form = [
        (
            "grant_type",
            "urn:ietf:params:oauth:grant-type:token-exchange",
        ),
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
        ("subject_token", subject.as_str()),
        (
            "subject_token_type",
            "urn:ietf:params:oauth:token-type:access_token",
        ),
    ];
    c.app.token(&form).await;
    let ((status, body), calls) = c.calls_of("token exchange", c.app.token(&form)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_within(&calls, 2 + RATE_LIMIT, "token exchange");
    assert_eq!(calls.count("GetItem"), 1, "the subject token");
    assert_eq!(
        calls.count("TransactWriteItems") + calls.count("PutItem"),
        1,
        "the new token with its event"
    );
    assert_write_units(&calls, TOKEN_EXCHANGE_UNITS, "token exchange");
}
