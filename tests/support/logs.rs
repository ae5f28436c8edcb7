//! What the test servers log, captured as JSON lines so tests can check what the service writes
//! (correlation ids, outcome codes) and what it must never write (credentials).
//!
//! One global subscriber, installed by the first app: tracing caches per-callsite interest
//! process-wide, so a thread-local subscriber misses events once other tests have run. Tests
//! find their own lines by values unique to them (a fresh client id, fresh secrets).
//!
//! The service's own events are captured down to DEBUG, so that a secret written at a level
//! production leaves off still fails the no-secrets checks; other crates at INFO.

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};

use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;

/// Everything the test servers logged so far in this test binary, as JSON lines.
pub fn captured_logs() -> String {
    String::from_utf8_lossy(&log_buffer().lock().unwrap()).into_owned()
}

/// The captured lines that contain `needle` (a value unique to the calling test).
pub fn captured_lines_with(needle: &str) -> Vec<String> {
    captured_logs()
        .lines()
        .filter(|line| line.contains(needle))
        .map(str::to_owned)
        .collect()
}

/// Panics if any captured line holds one of `secrets`, naming which one (by position: the
/// secret itself must not be printed either).
#[track_caller]
pub fn assert_no_secret_logged(secrets: &[&str]) {
    let logs = captured_logs();
    for (i, secret) in secrets.iter().enumerate() {
        assert!(
            !secret.is_empty(),
            "secret #{i} is empty: nothing to look for"
        );
        assert!(
            !holds(&logs, secret),
            "secret #{i} (of {}) leaked into the logs",
            secrets.len()
        );
    }
}

/// Whether `logs` hold `secret`. A short all-digit secret (a one-time password) counts only
/// where it stands alone: the same six digits occur by chance inside timestamps' fractions,
/// latencies and longer numbers, which must not fail the check, while a leak is written as a
/// value of its own (a quoted string, a word of a message).
pub fn holds(logs: &str, secret: &str) -> bool {
    let short_number = secret.len() <= 8 && secret.bytes().all(|b| b.is_ascii_digit());
    if !short_number {
        return logs.contains(secret);
    }
    let glued = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'.');
    let bytes = logs.as_bytes();
    logs.match_indices(secret).any(|(at, _)| {
        let before = at.checked_sub(1).and_then(|i| bytes.get(i));
        !glued(before) && !glued(bytes.get(at + secret.len()))
    })
}

fn log_buffer() -> &'static Arc<Mutex<Vec<u8>>> {
    static BUFFER: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    BUFFER.get_or_init(Default::default)
}

pub(crate) fn install_log_capture() {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        let format = tracing_subscriber::fmt::layer()
            .json()
            .with_current_span(true)
            .with_writer(|| LogSink(log_buffer().clone()));
        let levels = Targets::new()
            .with_default(LevelFilter::INFO)
            .with_target("token_domain", LevelFilter::DEBUG)
            .with_target("token_store", LevelFilter::DEBUG)
            .with_target("token_core", LevelFilter::DEBUG)
            .with_target("token_http", LevelFilter::DEBUG);
        let subscriber = tracing_subscriber::registry().with(format).with(levels);
        let _ = tracing::subscriber::set_global_default(subscriber);
    });
}

struct LogSink(Arc<Mutex<Vec<u8>>>);

impl Write for LogSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
