//! What each call costs in DynamoDB's billing units. The proxy asks DynamoDB Local for the
//! consumed capacity (`ReturnConsumedCapacity: TOTAL`, added to every item request that does not
//! ask already) and reads it from the answer: DynamoDB Local applies DynamoDB's rules (checked
//! 2026-11-27 against hand-sized items: 1 write unit per started KB, 2 per KB per transaction
//! item, an update charged on the larger of the item before and after, 0.5 read units per 4 KB
//! eventually consistent, 1 strongly consistent, 2 in a transaction), which the request alone
//! could not give for updates (the stored item's size is unknown to the proxy).
//!
//! Two exceptions, where DynamoDB Local is wrong and the proxy sizes the items itself:
//!
//! - a transaction: DynamoDB Local reports 2 units whatever its items (checked 2026-11-27: one
//!   to eight puts of 300 B, three updates, all 2), so the proxy reads each item the
//!   transaction names before and after it (`GetItem`s of its own, not counted as calls) and
//!   charges 2 units per KB started of the larger of the two, as DynamoDB does;
//! - a write whose condition fails, which DynamoDB still charges and DynamoDB Local reports
//!   nothing for: an item put is sized from the request, an update or delete at the 1-unit
//!   minimum.

use serde_json::{json, Map, Value};

/// The operations that read or write items: the ones that can report consumed capacity.
const ITEM_OPERATIONS: &[&str] = &[
    "GetItem",
    "PutItem",
    "UpdateItem",
    "DeleteItem",
    "Query",
    "Scan",
    "BatchGetItem",
    "BatchWriteItem",
    "TransactGetItems",
    "TransactWriteItems",
];

/// Whether `operation`'s units are write units (else read units).
pub(super) fn is_write(operation: &str) -> bool {
    super::WRITE_OPERATIONS.contains(&operation)
}

/// The request body with `ReturnConsumedCapacity: TOTAL` added, for the item operations that
/// did not ask themselves; `None` to forward the body as it is. The answer only gains a
/// `ConsumedCapacity` member, which the SDK parses and the store ignores.
pub(super) fn asking_for_capacity(operation: &str, body: &[u8]) -> Option<Vec<u8>> {
    if !ITEM_OPERATIONS.contains(&operation) {
        return None;
    }
    let mut json: Map<String, Value> = serde_json::from_slice(body).ok()?;
    if json.contains_key("ReturnConsumedCapacity") {
        return None;
    }
    json.insert("ReturnConsumedCapacity".into(), "TOTAL".into());
    serde_json::to_vec(&json).ok()
}

/// The units an answer reports (`ConsumedCapacity`, one object or one per table); for a failed
/// conditional write, the units DynamoDB charges for it, sized from the request.
pub(super) fn units_of(operation: &str, request: &[u8], status: u16, answer: &[u8]) -> f64 {
    let Ok(answer) = serde_json::from_slice::<Value>(answer) else {
        return 0.0;
    };
    if status == 200 {
        let consumed = &answer["ConsumedCapacity"];
        let each = consumed
            .as_array()
            .map_or_else(|| vec![consumed.clone()], std::clone::Clone::clone);
        return each
            .iter()
            .filter_map(|c| c["CapacityUnits"].as_f64())
            .sum();
    }
    let condition_failed = answer["__type"]
        .as_str()
        .is_some_and(|t| t.ends_with("ConditionalCheckFailedException"));
    if !condition_failed {
        return 0.0;
    }
    let item_bytes = serde_json::from_slice::<Value>(request)
        .ok()
        .and_then(|r| r["Item"].as_object().map(item_size));
    match (operation, item_bytes) {
        ("PutItem", Some(bytes)) => kb_started(bytes),
        _ => 1.0,
    }
}

/// One item the request writes: how, its partition key, and for a put the item's size by
/// DynamoDB's rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub action: &'static str,
    /// The item's `pk`, when the request names it as a string.
    pub partition: Option<String>,
    /// `None` for an update or delete: what it costs depends on the stored item.
    pub bytes: Option<usize>,
}

impl Written {
    fn put(item: &Value) -> Self {
        Self {
            action: "Put",
            partition: partition_of(item),
            bytes: item.as_object().map(item_size),
        }
    }

    fn keyed(action: &'static str, key: &Value) -> Self {
        Self {
            action,
            partition: partition_of(key),
            bytes: None,
        }
    }
}

fn partition_of(item_or_key: &Value) -> Option<String> {
    item_or_key["pk"]["S"].as_str().map(str::to_owned)
}

/// The items a write request writes: its own, each transaction item's (condition checks are
/// not writes), each batch request's.
pub(super) fn items_written(operation: &str, body: &[u8]) -> Vec<Written> {
    let Ok(json) = serde_json::from_slice::<Value>(body) else {
        return Vec::new();
    };
    match operation {
        "PutItem" => vec![Written::put(&json["Item"])],
        "UpdateItem" => vec![Written::keyed("Update", &json["Key"])],
        "DeleteItem" => vec![Written::keyed("Delete", &json["Key"])],
        "TransactWriteItems" => json["TransactItems"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|item| {
                if let Some(put) = item.get("Put") {
                    Some(Written::put(&put["Item"]))
                } else if let Some(update) = item.get("Update") {
                    Some(Written::keyed("Update", &update["Key"]))
                } else {
                    item.get("Delete")
                        .map(|delete| Written::keyed("Delete", &delete["Key"]))
                }
            })
            .collect(),
        "BatchWriteItem" => json["RequestItems"]
            .as_object()
            .into_iter()
            .flat_map(|tables| tables.values())
            .filter_map(Value::as_array)
            .flatten()
            .map(|request| match request.get("PutRequest") {
                Some(p) => Written::put(&p["Item"]),
                None => Written::keyed("Delete", &request["DeleteRequest"]["Key"]),
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Write units of an item of `bytes` outside a transaction: one per KB started.
#[allow(clippy::cast_precision_loss)]
fn kb_started(bytes: usize) -> f64 {
    bytes.div_ceil(1024).max(1) as f64
}

/// The items a transaction writes, by table and key, and for a put the item it writes.
pub(super) struct TransactionItems(Vec<(String, Value, Option<usize>)>);

impl TransactionItems {
    pub(super) fn of(body: &[u8]) -> Self {
        let json = serde_json::from_slice::<Value>(body).unwrap_or_default();
        let items = json["TransactItems"].as_array().into_iter().flatten();
        Self(
            items
                .filter_map(|item| {
                    let (action, request) = item.as_object()?.iter().next()?;
                    let table = request["TableName"].as_str()?.to_owned();
                    match action.as_str() {
                        "Put" => {
                            let put = request["Item"].as_object()?;
                            let key = json!({"pk": put.get("pk")?, "sk": put.get("sk")?});
                            Some((table, key, Some(item_size(put))))
                        }
                        "Update" | "Delete" => Some((table, request["Key"].clone(), None)),
                        _ => None,
                    }
                })
                .collect(),
        )
    }

    /// `GetItem` bodies for each item, to size it as stored.
    pub(super) fn reads(&self) -> impl Iterator<Item = Vec<u8>> + '_ {
        self.0.iter().map(|(table, key, _)| {
            json!({"TableName": table, "Key": key, "ConsistentRead": true})
                .to_string()
                .into_bytes()
        })
    }

    /// Two units per KB started of each item, at the larger of its size before and after (and
    /// of the item a put writes).
    #[allow(clippy::cast_precision_loss)]
    pub(super) fn units(&self, before: &[usize], after: &[usize]) -> f64 {
        self.0
            .iter()
            .zip(before.iter().zip(after))
            .map(|((_, _, put), (before, after))| {
                let bytes = put.unwrap_or(0).max(*before).max(*after);
                2.0 * kb_started(bytes)
            })
            .sum()
    }
}

/// The size of the item a `GetItem` answer holds (0: none).
pub(super) fn size_in_answer(answer: &[u8]) -> usize {
    serde_json::from_slice::<Value>(answer)
        .ok()
        .and_then(|a| a["Item"].as_object().map(item_size))
        .unwrap_or(0)
}

/// An item's size as DynamoDB bills it: each attribute's name plus its value
/// (docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html).
pub(crate) fn item_size(item: &Map<String, Value>) -> usize {
    item.iter()
        .map(|(name, value)| name.len() + value_size(value))
        .sum()
}

fn value_size(value: &Value) -> usize {
    let Some((kind, inner)) = value.as_object().and_then(|v| v.iter().next()) else {
        return 0;
    };
    let text = || inner.as_str().unwrap_or_default();
    let strings = || {
        inner
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
    };
    match kind.as_str() {
        "S" => text().len(),
        "N" => number_size(text()),
        "B" => base64_decoded_len(text()),
        "BOOL" | "NULL" => 1,
        "SS" => strings().map(str::len).sum(),
        "NS" => strings().map(number_size).sum(),
        "BS" => strings().map(base64_decoded_len).sum(),
        // Three bytes of overhead per list or map, one per element.
        "L" => {
            3 + inner
                .as_array()
                .into_iter()
                .flatten()
                .map(|v| 1 + value_size(v))
                .sum::<usize>()
        }
        "M" => {
            3 + inner
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| 1 + k.len() + value_size(v))
                .sum::<usize>()
        }
        _ => 0,
    }
}

/// Numbers: about one byte per two significant digits, plus one.
fn number_size(number: &str) -> usize {
    let digits = number
        .trim_start_matches('-')
        .chars()
        .filter(char::is_ascii_digit)
        .collect::<String>();
    let significant = digits.trim_start_matches('0').trim_end_matches('0').len();
    significant.div_ceil(2) + 1
}

fn base64_decoded_len(encoded: &str) -> usize {
    let padding = encoded.bytes().rev().take_while(|b| *b == b'=').count();
    encoded.len() / 4 * 3 - padding.min(2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_item_is_sized_by_names_and_values() {
        let item = json!({
            "pk": {"S": "REFRESH#ab"}, "n": {"N": "1700000000"}, "ok": {"BOOL": true},
            "m": {"M": {"k": {"S": "v"}}}, "b": {"B": "AAAA"},
        });
        // pk 2 + 10; n 1 + 2 (two significant digits); ok 2 + 1; m 1 + 3 + (1 + 1 + 1); b 1 + 3
        assert_eq!(item_size(item.as_object().unwrap()), 12 + 3 + 3 + 7 + 4);
    }

    #[test]
    fn capacity_is_asked_for_once_and_only_of_item_operations() {
        let asked = asking_for_capacity("PutItem", br#"{"TableName":"t"}"#).unwrap();
        let asked: Value = serde_json::from_slice(&asked).unwrap();
        assert_eq!(asked["ReturnConsumedCapacity"], "TOTAL");
        assert!(asking_for_capacity("CreateTable", br#"{"TableName":"t"}"#).is_none());
        let own = br#"{"TableName":"t","ReturnConsumedCapacity":"INDEXES"}"#;
        assert!(asking_for_capacity("GetItem", own).is_none());
    }

    #[test]
    fn units_are_summed_over_tables_and_a_failed_put_is_sized_from_its_item() {
        let answer = br#"{"ConsumedCapacity":[{"CapacityUnits":12.0},{"CapacityUnits":2.0}]}"#;
        assert!((units_of("TransactWriteItems", b"{}", 200, answer) - 14.0).abs() < 1e-9);
        let failed =
            br#"{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException"}"#;
        let big = json!({"Item": {"pk": {"S": "x".repeat(1500)}}}).to_string();
        assert!((units_of("PutItem", big.as_bytes(), 400, failed) - 2.0).abs() < 1e-9);
        assert!((units_of("UpdateItem", b"{}", 400, failed) - 1.0).abs() < 1e-9);
    }
}
