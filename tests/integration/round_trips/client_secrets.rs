//! Budgets of the secrets API (`/app-mgmt/v4/apps/{client_id}/secrets`), warm: the app calls
//! with its own application token, its client in the read cache. Every call checks the token
//! (its `jti`) and reads the client past the cache, since a change must start from the set the
//! store holds (docs/decisions.md, Client secrets).

use reqwest::StatusCode;

use super::counted::*;
use crate::client_secrets::api::{add, list, revoke};

/// The client's secrets (an `UpdateItem` of its item, under 1 KB: 1) and the change's audit
/// event (one item under 1 KB in a transaction: 2); the same for an add and a revoke.
const SECRETS_CHANGE_UNITS: f64 = 3.0;

/// An app with an application token of its own, the secrets API called once so that the
/// client is cached.
async fn app_with_token(c: &Counted) -> (String, String) {
    let client = c.app.create_client("read").await;
    let token = c.app.secrets_token(&client).await;
    let (status, body) = list(&c.app, &client.id, Some(&token)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    (client.id, token)
}

/// The listing's audit event (part 13: every call is audited; one item under 1 KB in a
/// transaction: 2).
const SECRETS_LISTED_UNITS: f64 = 2.0;

/// Goal ≤ 3: the token's `jti`, the client as stored, and the listing's audit event.
pub async fn secrets_list(c: Counted) {
    let (id, token) = app_with_token(&c).await;
    let ((status, body), calls) = c
        .calls_of("secrets list", list(&c.app, &id, Some(&token)))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_within(&calls, 3, "secrets list");
    assert_eq!(calls.count("GetItem"), 2, "the token, the client");
    assert_write_units(&calls, SECRETS_LISTED_UNITS, "secrets list");
}

/// Goal ≤ 4: the two reads, the conditional write of the client's secrets, and the change's
/// audit event (written after the change, best effort).
pub async fn secrets_add(c: Counted) {
    let (id, token) = app_with_token(&c).await;
    let ((status, body), calls) = c
        .calls_of("secrets add", add(&c.app, &id, Some(&token), None))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_within(&calls, 4, "secrets add");
    assert_eq!(calls.count("UpdateItem"), 1, "the secrets, conditionally");
    assert_write_units(&calls, SECRETS_CHANGE_UNITS, "secrets add");
}

/// Goal ≤ 4, as `add`, right after an add on the same instance (a rotation): the add left the
/// cached client current, so the app's check reads nothing more.
pub async fn secrets_revoke(c: Counted) {
    let (id, token) = app_with_token(&c).await;
    let (status, added) = add(&c.app, &id, Some(&token), None).await;
    assert_eq!(status, StatusCode::CREATED, "{added}");
    let secret_id = added["secret_id"].as_str().unwrap();
    let ((status, body), calls) = c
        .calls_of(
            "secrets revoke",
            revoke(&c.app, &id, secret_id, Some(&token)),
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    assert_within(&calls, 4, "secrets revoke");
    assert_eq!(calls.count("GetItem"), 2, "the token, the client as stored");
    assert_write_units(&calls, SECRETS_CHANGE_UNITS, "secrets revoke");
}
