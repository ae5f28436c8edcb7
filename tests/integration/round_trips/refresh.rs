//! The refresh grant's budgets: the common path, and a token stored before its record carried
//! its family's origin.

use super::counted::*;
use crate::support::app::TestClient;
use serde_json::Value;
use token_domain::secrets::TokenHash;
use token_store::dynamodb::sdk::types::AttributeValue;
use uuid::Uuid;

/// The client's counter (1), the family's conditional update (1), then single-item puts of
/// the successor's record, its access token's `jti` and the `family.refreshed` event under its
/// three subjects (5), each under 1 KB (docs/decisions.md, "What a refresh writes").
const REFRESH_UNITS: f64 = RATE_LIMIT_UNITS + 6.0;
/// One read, one update, five puts.
const REFRESH_CALLS: usize = 7;

/// A user with a first family on `client`; `refresh_with` sends a refresh token with that
/// client's credentials and expects 200.
async fn user_family(c: &Counted, client: &TestClient) -> Value {
    let login = format!("user-{}@example.com", Uuid::new_v4().simple());
    c.app.create_user(&login, PASSWORD).await;
    c.app.user_tokens(client, &login, PASSWORD).await
}

async fn refresh_with(c: &Counted, client: &TestClient, token: &Value) -> Value {
    let token = token["refresh_token"].as_str().unwrap();
    let grant = [("grant_type", "refresh_token"), ("refresh_token", token)];
    ok(c.app.token(&client_form(client, &grant)).await)
}

/// The refresh token's read (its record carries the family's origin, so the checks need
/// nothing else), the family's conditional update, which alone decides the rotation, then the
/// puts of what it made, in parallel; plus the client's rate limit. No transaction, which would
/// cost two write units per item.
pub async fn refresh(c: Counted) {
    let client = c.app.create_client("read").await;
    let first = user_family(&c, &client).await;
    let second = refresh_with(&c, &client, &first).await;
    let (_, calls) = c
        .calls_of("refresh", refresh_with(&c, &client, &second))
        .await;
    assert_within(&calls, REFRESH_CALLS + RATE_LIMIT, "refresh");
    assert_write_units(&calls, REFRESH_UNITS, "refresh");
    assert_eq!(calls.count("GetItem"), 1, "the token");
    assert_eq!(calls.count("UpdateItem"), 1 + RATE_LIMIT, "the family");
    assert_eq!(calls.count("PutItem"), 5, "what the rotation made");
    assert_eq!(calls.count("TransactWriteItems"), 0);
}

/// A refresh token stored before records carried their family's origin still refreshes,
/// reading the family once more; its successor carries the origin, so the next refresh is
/// back to the common path.
pub async fn refresh_of_a_token_written_without_its_origin(c: Counted) {
    let client = c.app.create_client("read").await;
    let first = user_family(&c, &client).await;
    let second = refresh_with(&c, &client, &first).await;
    let token = TokenHash::of(second["refresh_token"].as_str().unwrap());
    c.store
        .client()
        .update_item()
        .table_name(c.store.table_name())
        .key(
            "pk",
            AttributeValue::S(format!("REFRESH#{}", token.to_hex())),
        )
        .key("sk", AttributeValue::S("REFRESH".into()))
        .update_expression("REMOVE origin")
        .condition_expression("attribute_exists(origin)")
        .send()
        .await
        .expect("strip the origin from the refresh token's item");

    let (third, calls) = c
        .calls_of(
            "refresh, a token stored without its origin",
            refresh_with(&c, &client, &second),
        )
        .await;
    assert_within(
        &calls,
        REFRESH_CALLS + 1 + RATE_LIMIT,
        "refresh of a token stored without its origin",
    );
    assert_eq!(calls.count("GetItem"), 2, "the token, then its family");
    assert_write_units(
        &calls,
        REFRESH_UNITS,
        "refresh of a token stored without its origin",
    );
    let (_, calls) = c
        .calls_of("refresh, its successor", refresh_with(&c, &client, &third))
        .await;
    assert_within(
        &calls,
        REFRESH_CALLS + RATE_LIMIT,
        "refresh of the successor",
    );
    assert_write_units(&calls, REFRESH_UNITS, "refresh of the successor");
}
