//! The Lambda functions' recorder: CloudWatch embedded metric format (EMF) lines on stdout,
//! which CloudWatch Logs turns into metrics, so no request pays for a call to CloudWatch.
//!
//! Values are aggregated in memory and written by [`flush`] once per invocation (Lambda runs
//! one invocation at a time per sandbox, and may freeze it right after answering): one JSON
//! line per label set, each with the dimension sets `[function, labels…]` and `[function]`, so
//! that the template's alarms can read a function's totals.
//! <https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html>

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

use metrics::{Counter, Gauge, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit};
use metrics_util::registry::{AtomicStorage, Registry};
use serde_json::{json, Map, Value};

pub use token_core::measure::NAMESPACE;
/// EMF takes at most 100 values of one metric per line.
const MAX_VALUES_PER_LINE: usize = 100;

/// Records into memory; [`EmfRecorder::drain_lines`] turns what was recorded into EMF lines.
#[derive(Clone)]
pub struct EmfRecorder {
    inner: Arc<Inner>,
}

struct Inner {
    registry: Registry<Key, AtomicStorage>,
    function: String,
}

/// A metric's labels, sorted by name.
type Labels = Vec<(String, String)>;
/// Metrics by name, with their values since the last flush.
type Named = Vec<(String, Values)>;

/// One metric's values since the last flush.
enum Values {
    Count(u64),
    Samples(Vec<f64>),
}

impl EmfRecorder {
    /// A recorder whose lines carry the dimension `function` = `function`.
    pub fn new(function: &str) -> Self {
        Self {
            inner: Arc::new(Inner {
                registry: Registry::atomic(),
                function: function.to_owned(),
            }),
        }
    }

    /// The EMF lines of everything recorded since the last call, which starts afresh. A
    /// metric with nothing new has no line.
    pub fn drain_lines(&self, timestamp_ms: u64) -> Vec<String> {
        let mut groups: BTreeMap<Labels, Named> = BTreeMap::new();
        let labels_of = |key: &Key| {
            let mut labels: Labels = key
                .labels()
                .map(|l| (l.key().to_owned(), l.value().to_owned()))
                .collect();
            labels.sort();
            labels
        };
        self.inner.registry.visit_counters(|key, counter| {
            let count = counter.swap(0, Ordering::AcqRel);
            if count > 0 {
                let entry = (key.name().to_owned(), Values::Count(count));
                groups.entry(labels_of(key)).or_default().push(entry);
            }
        });
        self.inner.registry.visit_histograms(|key, histogram| {
            let mut samples = Vec::new();
            histogram.clear_with(|values| samples.extend_from_slice(values));
            if !samples.is_empty() {
                let entry = (key.name().to_owned(), Values::Samples(samples));
                groups.entry(labels_of(key)).or_default().push(entry);
            }
        });
        let mut lines = Vec::new();
        for (labels, metrics) in groups {
            // Samples beyond a line's 100 go on lines of their own, with the same dimensions.
            let mut rest: Named = Vec::new();
            let mut first: Named = Vec::new();
            for (name, values) in metrics {
                match values {
                    Values::Samples(samples) if samples.len() > MAX_VALUES_PER_LINE => {
                        let mut chunks = samples.chunks(MAX_VALUES_PER_LINE);
                        let head = chunks.next().unwrap_or_default().to_vec();
                        first.push((name.clone(), Values::Samples(head)));
                        rest.extend(chunks.map(|c| (name.clone(), Values::Samples(c.to_vec()))));
                    }
                    values => first.push((name, values)),
                }
            }
            lines.push(self.line(timestamp_ms, &labels, first));
            for metric in rest {
                lines.push(self.line(timestamp_ms, &labels, vec![metric]));
            }
        }
        lines
    }

    fn line(
        &self,
        timestamp_ms: u64,
        labels: &[(String, String)],
        metrics: Vec<(String, Values)>,
    ) -> String {
        let mut dimensions = vec!["function".to_owned()];
        dimensions.extend(labels.iter().map(|(k, _)| k.clone()));
        let dimension_sets = if labels.is_empty() {
            json!([dimensions])
        } else {
            json!([dimensions, ["function"]])
        };
        let mut root = Map::new();
        let mut definitions = Vec::new();
        for (name, values) in metrics {
            let (unit, value) = match values {
                Values::Count(count) => ("Count", json!(count)),
                Values::Samples(samples) => (unit_of(&name), json!(samples)),
            };
            definitions.push(json!({ "Name": name, "Unit": unit }));
            root.insert(name, value);
        }
        root.insert("function".to_owned(), json!(self.inner.function));
        for (key, value) in labels {
            root.insert(key.clone(), json!(value));
        }
        root.insert(
            "_aws".to_owned(),
            json!({
                "Timestamp": timestamp_ms,
                "CloudWatchMetrics": [{
                    "Namespace": NAMESPACE,
                    "Dimensions": dimension_sets,
                    "Metrics": definitions,
                }],
            }),
        );
        Value::Object(root).to_string()
    }
}

/// Histograms are named by their unit's suffix (`…_seconds`).
fn unit_of(name: &str) -> &'static str {
    if name.ends_with("_seconds") {
        "Seconds"
    } else {
        "None"
    }
}

impl Recorder for EmfRecorder {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}

    fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
        let registry = &self.inner.registry;
        registry.get_or_create_counter(key, |counter| Counter::from_arc(counter.clone()))
    }

    /// No metric of ours is a gauge; one would be kept but never written.
    fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
        let registry = &self.inner.registry;
        registry.get_or_create_gauge(key, |gauge| Gauge::from_arc(gauge.clone()))
    }

    fn register_histogram(&self, key: &Key, _: &Metadata<'_>) -> Histogram {
        let registry = &self.inner.registry;
        registry.get_or_create_histogram(key, |histogram| Histogram::from_arc(histogram.clone()))
    }
}

static INSTALLED: OnceLock<Option<EmfRecorder>> = OnceLock::new();

/// Installs the EMF recorder as the process's recorder (once) for the function named by
/// `AWS_LAMBDA_FUNCTION_NAME` (the telemetry section's `lambda_function`), and counts this cold
/// start.
pub fn install(function: &str) {
    INSTALLED.get_or_init(|| {
        let recorder = EmfRecorder::new(function);
        metrics::set_global_recorder(recorder.clone()).ok()?;
        token_core::measure::cold_start();
        Some(recorder)
    });
}

/// Writes what was recorded since the last flush to stdout, where the Lambda runtime sends it
/// to CloudWatch Logs. Without [`install`], nothing.
pub fn flush() {
    let Some(Some(recorder)) = INSTALLED.get() else {
        return;
    };
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let lines = recorder.drain_lines(now);
    if lines.is_empty() {
        return;
    }
    let mut out = std::io::stdout().lock();
    for line in lines {
        // A metric that cannot be written is lost, never the request's answer.
        let _ = writeln!(out, "{line}");
    }
    let _ = out.flush();
}

#[cfg(test)]
mod tests;
