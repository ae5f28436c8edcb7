//! The refresh grant's budgets: the common path (a token that names its family), and a token
//! issued before tokens named their family, found by its digest.

use super::counted::*;
use crate::support::app::TestClient;
use serde_json::Value;
use token_domain::random::{OsRandom, RandomExt};
use token_domain::secrets::{Secret, TokenHash};
use token_domain::RefreshTokenName;
use token_store::dynamodb::sdk::types::AttributeValue;
use uuid::Uuid;

/// The client's counter (1), the family's conditional update (1), then single-item puts of
/// its access token's `jti` and the `family.refreshed` event, under its family only (2), each
/// under 1 KB (docs/decisions.md, "What a refresh writes"). The successor has no record: it
/// names its family.
const REFRESH_UNITS: f64 = RATE_LIMIT_UNITS + 3.0;
/// One read (the family), one update, two puts.
const REFRESH_CALLS: usize = 4;
/// The `family.refreshed` item at most, in bytes as DynamoDB bills them: compact, without the
/// time, id and family its keys carry (docs/decisions.md, Audit events, "Compact refreshes"),
/// 190 B where its JSON `body` made it 512 B; the margin is an IPv6 address and a short user
/// agent.
const REFRESH_EVENT_BYTES: usize = 256;

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

/// The family's read (the token names it, and it holds everything the checks need), the
/// family's conditional update, which alone decides the rotation, then the puts of what it
/// made, in parallel; plus the client's rate limit. No transaction, which would cost two write
/// units per item.
pub async fn refresh(c: Counted) {
    let client = c.app.create_client("read").await;
    let first = user_family(&c, &client).await;
    let second = refresh_with(&c, &client, &first).await;
    let (_, calls) = c
        .calls_of("refresh", refresh_with(&c, &client, &second))
        .await;
    assert_within(&calls, REFRESH_CALLS + RATE_LIMIT, "refresh");
    assert_write_units(&calls, REFRESH_UNITS, "refresh");
    assert_eq!(calls.count("GetItem"), 1, "the family the token names");
    assert_eq!(calls.count("UpdateItem"), 1 + RATE_LIMIT, "the family");
    assert_eq!(calls.count("PutItem"), 2, "what the rotation made");
    let events = calls.per_partition("PutItem", "AUDIT#");
    assert_eq!(
        events.len(),
        1,
        "the event under its family only: {events:?}"
    );
    assert!(events.keys().all(|pk| pk.starts_with("AUDIT#FAMILY#")));
    let sizes = calls.put_sizes("AUDIT#");
    assert!(
        sizes.len() == 1 && sizes[0] <= REFRESH_EVENT_BYTES,
        "the event's put: {sizes:?} B, at most {REFRESH_EVENT_BYTES} B"
    );
    assert_eq!(calls.count("TransactWriteItems"), 0);
}

/// A retry within the grace window: the family's read (the token names it), a read of the
/// rotation's event (its completion is checked with a read, not a conditional put), then the
/// retry's own access token; plus the client's rate limit. Nothing else is written.
pub async fn refresh_retry_within_grace(c: Counted) {
    let client = c.app.create_client("read").await;
    let first = user_family(&c, &client).await;
    let second = refresh_with(&c, &client, &first).await;
    let (retried, calls) = c
        .calls_of(
            "refresh, a retry within grace",
            refresh_with(&c, &client, &first),
        )
        .await;
    assert_eq!(
        retried["refresh_token"], second["refresh_token"],
        "the same successor"
    );
    assert_within(&calls, 3 + RATE_LIMIT, "refresh retry");
    assert_write_units(&calls, RATE_LIMIT_UNITS + 1.0, "refresh retry");
    assert_eq!(
        calls.count("GetItem"),
        2,
        "the family, the rotation's event"
    );
    assert_eq!(calls.count("PutItem"), 1, "the retry's access token");
    assert_eq!(
        calls.count("UpdateItem"),
        RATE_LIMIT,
        "the client's counter only"
    );
}

/// A refresh token issued before tokens named their family, its record stored before records
/// carried their family's origin, still refreshes: found by its digest, then its family read
/// once more. Its successor names its family, so the next refresh is back to the common path.
pub async fn refresh_of_a_token_written_without_its_origin(c: Counted) {
    let client = c.app.create_client("read").await;
    let first = user_family(&c, &client).await;
    // Refreshed once first, as in `refresh`: what the first refresh caches is not counted.
    let rotated = refresh_with(&c, &client, &first).await;
    let unnamed = OsRandom.opaque_token();
    make_current_as_issued_before_names(&c, &first, &rotated, &unnamed).await;
    let second = serde_json::json!({ "refresh_token": unnamed });

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

/// Gives the family of `first` (rotated once, to `rotated`) the unnamed token `unnamed` as its
/// current one, stored as such tokens were: a record of its own under its digest, without the
/// family's origin (a family's first token, named, has no record to copy).
async fn make_current_as_issued_before_names(
    c: &Counted,
    first: &Value,
    rotated: &Value,
    unnamed: &str,
) {
    let token = |tokens: &Value| tokens["refresh_token"].as_str().unwrap().to_owned();
    let family_id = RefreshTokenName::of(&Secret::new(token(first)))
        .expect("a named token")
        .family_id;
    let (current, unnamed) = (
        TokenHash::of(&token(rotated)).to_hex(),
        TokenHash::of(unnamed).to_hex(),
    );
    let table = c.store.table_name();
    let family = c
        .store
        .client()
        .get_item()
        .table_name(table)
        .key("pk", AttributeValue::S(format!("FAMILY#{family_id}")))
        .key("sk", AttributeValue::S("FAMILY".into()))
        .send()
        .await
        .expect("read the family")
        .item
        .expect("the family");
    let number = |name: &str| family[name].as_n().expect("a number").clone();
    c.store
        .client()
        .put_item()
        .table_name(table)
        .item("pk", AttributeValue::S(format!("REFRESH#{unnamed}")))
        .item("sk", AttributeValue::S("REFRESH".into()))
        .item("token_hash", AttributeValue::S(unnamed.clone()))
        .item("family_id", AttributeValue::S(family_id.to_string()))
        .item("client_id", family["client_id"].clone())
        .item("generation", AttributeValue::N("1".into()))
        .item("issued_at", AttributeValue::N(number("created_at")))
        .item("expires_at", AttributeValue::N(number("expires_at")))
        .send()
        .await
        .expect("write the unnamed token's record");
    c.store
        .client()
        .update_item()
        .table_name(table)
        .key("pk", AttributeValue::S(format!("FAMILY#{family_id}")))
        .key("sk", AttributeValue::S("FAMILY".into()))
        .update_expression("SET current_token = :unnamed")
        .condition_expression("current_token = :current")
        .expression_attribute_values(":unnamed", AttributeValue::S(unnamed))
        .expression_attribute_values(":current", AttributeValue::S(current))
        .send()
        .await
        .expect("make the unnamed token current");
}
