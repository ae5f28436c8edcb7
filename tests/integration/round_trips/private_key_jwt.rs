//! Budgets of `private_key_jwt` client authentication, warm: what an assertion costs beyond a
//! secret, and what a refused one costs.

use super::counted::*;
use crate::private_key_jwt::keys::ClientKey;
use crate::private_key_jwt::{app_token, claims, client_with_keys};
use reqwest::StatusCode;

/// The assertion's `jti` (1), the token's `jti` (1), the client's counter (1): items under 1 KB.
const PRIVATE_KEY_JWT_UNITS: f64 = 2.0 + RATE_LIMIT_UNITS;
/// A refusal's sampled audit event: one item under 1 KB in a transaction (2).
const REFUSAL_AUDIT_UNITS: f64 = 2.0;
/// A replay: the conditional `PutItem` that fails, charged as DynamoDB charges a failed
/// condition (1, sized from the request: DynamoDB Local reports nothing for it).
const REPLAY_UNITS: f64 = 1.0;

/// Goal ≤ 2 + the rate limit: the client comes from the read cache; one conditional `PutItem`
/// marks the assertion's `jti` used, one writes the access token's `jti`.
pub async fn client_credentials_with_private_key_jwt(c: Counted) {
    let key = ClientKey::es256("k");
    let client = client_with_keys(&c.app, &[&key]).await;
    let (status, body) = app_token(&c.app, &key.sign(&claims(&c.app, &client))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let assertion = key.sign(&claims(&c.app, &client));
    let ((status, body), calls) = c
        .calls_of("private_key_jwt", app_token(&c.app, &assertion))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_within(
        &calls,
        2 + RATE_LIMIT,
        "client_credentials with private_key_jwt",
    );
    assert_eq!(
        calls.count("PutItem"),
        2,
        "the assertion's jti and the token's"
    );
    assert_eq!(
        calls.count("UpdateItem"),
        RATE_LIMIT,
        "the client's counter"
    );
    assert_write_units(&calls, PRIVATE_KEY_JWT_UNITS, "private_key_jwt");

    // A refused assertion (another key) reads nothing more (the client is cached) and writes
    // only its sampled audit event: the first refusal of the minute, one transaction of the
    // event's items; the next ones nothing.
    let forged = ClientKey::es256("k").sign(&claims(&c.app, &client));
    let ((status, _), calls) = c
        .calls_of("refused private_key_jwt", app_token(&c.app, &forged))
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(calls.total(), 1, "{:?}", calls.by_operation());
    assert_eq!(
        calls.count("TransactWriteItems"),
        1,
        "client.authentication_failed"
    );
    assert_write_units(&calls, REFUSAL_AUDIT_UNITS, "refused private_key_jwt");
    let forged = ClientKey::es256("k").sign(&claims(&c.app, &client));
    let ((status, _), calls) = c
        .calls_of("refused private_key_jwt again", app_token(&c.app, &forged))
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(calls.total(), 0, "{:?}", calls.by_operation());
    assert_write_units(&calls, 0.0, "refused private_key_jwt again");
    // The replay of the counted assertion: one conditional PutItem that fails, nothing else.
    let ((status, _), calls) = c
        .calls_of("replayed private_key_jwt", app_token(&c.app, &assertion))
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(calls.total(), 1, "{:?}", calls.by_operation());
    assert_eq!(calls.count("PutItem"), 1);
    assert_write_units(&calls, REPLAY_UNITS, "replayed private_key_jwt");
}
