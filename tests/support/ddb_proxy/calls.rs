//! What the proxy counts: each request's operation and the tables it names, so that a test
//! sharing the proxy with others can tell its own calls apart, and what it cost in DynamoDB's
//! billing units.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

use super::capacity::{is_write, Written};

/// Beyond this many puts, a summary gives their smallest and largest size only.
const PUTS_LISTED: usize = 12;

/// The audit trail's partitions (`AUDIT#FAMILY#…`, `AUDIT#CLIENT#…`, …).
const AUDIT_PREFIX: &str = "AUDIT#";

/// `a, b, c`, or `smallest to largest` past [`PUTS_LISTED`].
fn listed_sizes<'a>(puts: impl Iterator<Item = &'a Written>) -> String {
    let mut sizes: Vec<usize> = puts.filter_map(|w| w.bytes).collect();
    if sizes.len() <= PUTS_LISTED {
        return sizes
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ");
    }
    sizes.sort_unstable();
    format!("{} to {}", sizes[0], sizes[sizes.len() - 1])
}

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
    /// Which of the SDK's attempts at one operation this is (`amz-sdk-request`); `None` when
    /// the header is missing or unreadable.
    pub attempt: Option<Attempt>,
    /// Arrival order, to find the call again when its answer comes.
    pub(super) sequence: u64,
}

impl Call {
    /// Whether the SDK sent this request again after an earlier attempt at the same operation
    /// (a late answer, a throttle): a request without the header counts as a first attempt.
    pub fn is_resend(&self) -> bool {
        self.attempt.is_some_and(|a| a.number > 1)
    }
}

/// The SDK's `amz-sdk-request` header: `attempt=2; max=3` (plus `ttl=...` on a resend).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attempt {
    /// From 1.
    pub number: u32,
    /// The SDK's retry budget, when it names one.
    pub max: Option<u32>,
}

impl Attempt {
    /// `None` without a readable `attempt` pair.
    pub(super) fn parse(header: &str) -> Option<Self> {
        let pair = |wanted: &str| {
            header.split(';').find_map(|pair| {
                let (name, value) = pair.split_once('=')?;
                (name.trim() == wanted).then(|| value.trim().parse::<u32>().ok())?
            })
        };
        Some(Self {
            number: pair("attempt")?,
            max: pair("max"),
        })
    }
}

impl std::fmt::Display for Attempt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.max {
            Some(max) => write!(f, "attempt {} of {max}", self.number),
            None => write!(f, "attempt {}", self.number),
        }
    }
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

    /// `W write units, R read units, N items written (P puts of [a, b] B; audit [b] B; U updates;
    /// D deletes)`: the cost part of a round-trip line, the audit trail's puts (`AUDIT#`) listed
    /// again apart, since they are kept 400 days (infra/cost-model.py parses it).
    pub fn cost_summary(&self) -> String {
        let mut line = format!(
            "{} write units, {} read units, {} items written",
            self.write_units(),
            self.read_units(),
            self.written().count()
        );
        let puts = self.written().filter(|w| w.action == "Put");
        let audit = self.puts_under(AUDIT_PREFIX);
        let of = |action: &str| self.written().filter(|w| w.action == action).count();
        let _ = write!(
            line,
            " ({} puts of [{}] B; audit [{}] B; {} updates; {} deletes)",
            of("Put"),
            listed_sizes(puts),
            listed_sizes(audit),
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

    /// The items put (alone, in a transaction or a batch) to partitions starting with `prefix`.
    pub fn puts_under<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = &'a Written> {
        self.written().filter(move |w| {
            w.action == "Put"
                && w.partition
                    .as_deref()
                    .is_some_and(|pk| pk.starts_with(prefix))
        })
    }

    /// The sizes of the items put to partitions starting with `prefix`.
    pub fn put_sizes(&self, prefix: &str) -> Vec<usize> {
        self.puts_under(prefix).filter_map(|w| w.bytes).collect()
    }

    /// The calls as the SDK's first attempts, and its resends apart: what a flow costs as
    /// designed, and what a late answer or a throttle added to it.
    pub fn split_resends(self) -> (Calls, Calls) {
        let (resends, first) = self.0.into_iter().partition(Call::is_resend);
        (Calls(first), Calls(resends))
    }

    /// `TransactWriteItems attempt 2 of 3, ...`: each call's operation and attempt.
    pub fn attempts(&self) -> String {
        let each = self.0.iter().map(|c| match c.attempt {
            Some(attempt) => format!("{} {attempt}", c.operation),
            None => c.operation.clone(),
        });
        each.collect::<Vec<_>>().join(", ")
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

#[cfg(test)]
mod tests {
    use super::*;

    fn call(attempt: Option<Attempt>) -> Call {
        Call {
            operation: "TransactWriteItems".into(),
            tables: Vec::new(),
            partitions: Vec::new(),
            written: Vec::new(),
            units: 2.0,
            attempt,
            sequence: 0,
        }
    }

    #[test]
    fn the_sdks_attempt_header_is_read_with_or_without_its_other_pairs() {
        let first = Attempt::parse("attempt=1; max=3").unwrap();
        assert_eq!(
            first,
            Attempt {
                number: 1,
                max: Some(3)
            }
        );
        let resend = Attempt::parse("ttl=20261127T112000Z; attempt=2; max=3").unwrap();
        assert_eq!((resend.number, resend.max), (2, Some(3)));
        assert_eq!(resend.to_string(), "attempt 2 of 3");
        assert_eq!(Attempt::parse("attempt=4").unwrap().max, None);
        assert_eq!(Attempt::parse("max=3"), None);
        assert_eq!(Attempt::parse("attempt=two; max=3"), None);
        assert_eq!(Attempt::parse(""), None);
    }

    #[test]
    fn resends_are_told_apart_from_first_attempts() {
        let calls = Calls(vec![
            call(Attempt::parse("attempt=1; max=3")),
            call(Attempt::parse("ttl=20261127T112000Z; attempt=2; max=3")),
            call(None),
        ]);
        let (first, resends) = calls.split_resends();
        assert_eq!(
            first.total(),
            2,
            "the first attempt and the call without the header"
        );
        assert!((first.write_units() - 4.0).abs() < f64::EPSILON);
        assert_eq!(resends.total(), 1);
        assert_eq!(resends.attempts(), "TransactWriteItems attempt 2 of 3");
    }
}
