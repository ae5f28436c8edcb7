//! What the proxy counts: each request's operation and the tables it names, so that a test
//! sharing the proxy with others can tell its own calls apart, and what it cost in DynamoDB's
//! billing units.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

use super::capacity::{is_write, Written};

/// Beyond this many puts, a summary gives their smallest and largest size only.
const PUTS_LISTED: usize = 12;

/// One request that reached the proxy: its operation and the tables it names.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub operation: String,
    pub tables: Vec<String>,
    /// The partition keys (`pk`) of the items it names, transaction items included.
    pub partitions: Vec<String>,
    /// The items it writes (none for a read).
    pub written: Vec<Written>,
    /// The capacity units it consumed, as DynamoDB Local reported them once it answered (write
    /// units for a write operation, read units otherwise); 0 until then, or when refused.
    pub units: f64,
    /// Arrival order, to find the call again when its answer comes.
    pub(super) sequence: u64,
}

/// The calls seen since the proxy started or was last reset, in arrival order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Calls(pub Vec<Call>);

impl Calls {
    pub fn total(&self) -> usize {
        self.0.len()
    }

    /// How many calls of `operation` (`"GetItem"`).
    pub fn count(&self, operation: &str) -> usize {
        self.0.iter().filter(|c| c.operation == operation).count()
    }

    /// Write units consumed, all calls together.
    pub fn write_units(&self) -> f64 {
        self.0
            .iter()
            .filter(|c| is_write(&c.operation))
            .fold(0.0, |units, c| units + c.units)
    }

    /// Read units consumed (transactional reads at their double rate).
    pub fn read_units(&self) -> f64 {
        self.0
            .iter()
            .filter(|c| !is_write(&c.operation))
            .fold(0.0, |units, c| units + c.units)
    }

    /// Every item written, in call order.
    pub fn written(&self) -> impl Iterator<Item = &Written> {
        self.0.iter().flat_map(|c| c.written.iter())
    }

    /// `W write units, R read units, N items written (P puts of a, b B; U updates; D deletes)`:
    /// the cost part of a round-trip line (infra/cost-model.py parses it).
    pub fn cost_summary(&self) -> String {
        let mut line = format!(
            "{} write units, {} read units, {} items written",
            self.write_units(),
            self.read_units(),
            self.written().count()
        );
        let mut puts: Vec<usize> = self
            .written()
            .filter(|w| w.action == "Put")
            .filter_map(|w| w.bytes)
            .collect();
        let sizes = if puts.len() <= PUTS_LISTED {
            puts.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        } else {
            puts.sort_unstable();
            format!("{} to {}", puts[0], puts[puts.len() - 1])
        };
        let of = |action: &str| self.written().filter(|w| w.action == action).count();
        let _ = write!(
            line,
            " ({} puts of [{sizes}] B; {} updates; {} deletes)",
            of("Put"),
            of("Update"),
            of("Delete")
        );
        line
    }

    /// Calls per operation, in name order (stable for assertions and reports).
    pub fn by_operation(&self) -> BTreeMap<String, usize> {
        let mut counts = BTreeMap::new();
        for call in &self.0 {
            *counts.entry(call.operation.clone()).or_default() += 1;
        }
        counts
    }

    /// How many calls of `operation` named each partition starting with `prefix`.
    pub fn per_partition(&self, operation: &str, prefix: &str) -> BTreeMap<String, usize> {
        let mut counts = BTreeMap::new();
        for call in self.0.iter().filter(|c| c.operation == operation) {
            for pk in call.partitions.iter().filter(|pk| pk.starts_with(prefix)) {
                *counts.entry(pk.clone()).or_default() += 1;
            }
        }
        counts
    }

    /// Only the calls that touch `table`, so tests sharing a proxy can tell theirs apart.
    pub fn on_table(&self, table: &str) -> Calls {
        Calls(
            self.0
                .iter()
                .filter(|c| c.tables.iter().any(|t| t == table))
                .cloned()
                .collect(),
        )
    }
}

/// The tables a request names: `TableName`, the keys of `RequestItems` (batches) and the
/// `TableName` of each transaction item.
pub(super) fn tables_named(body: &[u8]) -> Vec<String> {
    let Ok(json) = serde_json::from_slice::<Value>(body) else {
        return Vec::new();
    };
    let mut tables: Vec<String> = json["TableName"]
        .as_str()
        .map(str::to_owned)
        .into_iter()
        .collect();
    if let Some(batch) = json["RequestItems"].as_object() {
        tables.extend(batch.keys().cloned());
    }
    for item in json["TransactItems"].as_array().into_iter().flatten() {
        let actions = item.as_object().into_iter().flat_map(|a| a.values());
        tables.extend(actions.filter_map(|a| a["TableName"].as_str().map(str::to_owned)));
    }
    tables.sort();
    tables.dedup();
    tables
}

/// The partition keys a request names: its `Key` or `Item`, and each transaction item's.
pub(super) fn partitions_named(body: &[u8]) -> Vec<String> {
    let Ok(json) = serde_json::from_slice::<Value>(body) else {
        return Vec::new();
    };
    let pk = |request: &Value| {
        [&request["Key"]["pk"]["S"], &request["Item"]["pk"]["S"]]
            .into_iter()
            .find_map(|value| value.as_str().map(str::to_owned))
    };
    let mut partitions: Vec<String> = pk(&json).into_iter().collect();
    for item in json["TransactItems"].as_array().into_iter().flatten() {
        let actions = item.as_object().into_iter().flat_map(|a| a.values());
        partitions.extend(actions.filter_map(pk));
    }
    partitions
}
