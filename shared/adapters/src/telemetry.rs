//! Structured logs: JSON in Lambda (CloudWatch parses it), human-readable locally; and the
//! OpenTelemetry layer (`traces`) when an OTLP endpoint is configured.
//!
//! The filter comes from `RUST_LOG` (default `info`; the local server's console has its own
//! default), within fixed ceilings for the crates that would otherwise print credentials:
//! whatever `RUST_LOG` asks, even a directive naming their targets, those crates never log more
//! than [`CAPPED_TARGETS`] allows.

use tracing::level_filters::LevelFilter;
use tracing::Subscriber;
use tracing_subscriber::filter::{FilterExt, Targets};
use tracing_subscriber::layer::{Filter, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

use token_core::config::TelemetrySection;

/// The level when `RUST_LOG` is unset, empty or invalid.
pub use token_core::config::DEFAULT_LOG_DIRECTIVES as DEFAULT_DIRECTIVES;

/// The most each of these targets (and the targets under it) may log. What they print above
/// the ceiling, read in lambda_runtime 1.5 / lambda_http 1.3 / aws-smithy-runtime 1.16:
/// - `lambda_runtime` at TRACE prints every raw invocation event (`layers::api_response`: the
///   request's headers with `Authorization`, and its body with passwords and tokens) and each
///   streamed response's headers (`requests`); its DEBUG adds only worker-pool noise.
/// - `lambda_http` and `lambda_runtime_api_client` log nothing today; capped so that a new
///   version's request logging cannot print an event either.
/// - `aws_smithy_runtime` at TRACE prints whole DynamoDB requests and responses: stored items,
///   password hashes included.
///
/// The runtime's ERROR events name no payload: a request that does not deserialise is reported
/// as "did not match any variant of untagged enum LambdaRequest".
pub const CAPPED_TARGETS: [(&str, LevelFilter); 4] = [
    ("lambda_runtime", LevelFilter::INFO),
    ("lambda_runtime_api_client", LevelFilter::INFO),
    ("lambda_http", LevelFilter::INFO),
    ("aws_smithy_runtime", LevelFilter::DEBUG),
];

/// Logs to stdout, written by the thread that logs: in Lambda a line must be out before the
/// invocation answers, since the sandbox may be frozen right after.
pub fn init(telemetry: &TelemetrySection) {
    init_with(telemetry, std::io::stdout, DEFAULT_DIRECTIVES);
}

/// The same subscriber on another writer, with `default_directives` where `RUST_LOG` is unset,
/// empty or invalid: the local server's buffered stdout and its console default.
pub fn init_with<W>(telemetry: &TelemetrySection, writer: W, default_directives: &str)
where
    W: for<'w> tracing_subscriber::fmt::MakeWriter<'w> + Send + Sync + 'static,
{
    let directives = telemetry.log_directives.as_deref().unwrap_or_default();
    let output = if telemetry.lambda_function.is_some() {
        // Lambda adds its own timestamps and request ids.
        tracing_subscriber::fmt::layer()
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .without_time()
            .with_writer(writer)
            .boxed()
    } else {
        // Colours only on a terminal, not in a file or pipe the output is sent to.
        let ansi = std::io::IsTerminal::is_terminal(&std::io::stdout());
        tracing_subscriber::fmt::layer()
            .with_ansi(ansi)
            .with_writer(writer)
            .boxed()
    };
    let result = tracing_subscriber::registry()
        .with(crate::traces::layer(telemetry))
        .with(output.with_filter(filter_or(directives, default_directives)))
        .try_init();
    // Already initialised (tests spawning several servers): keep the first.
    let _ = result;
}

/// What `directives` (`RUST_LOG` syntax) enables, never above the [`CAPPED_TARGETS`] ceilings.
/// Both filters must agree, so no directive, however specific, lifts a ceiling.
pub fn filter<S>(directives: &str) -> impl Filter<S> + Send + Sync + 'static
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    filter_or(directives, DEFAULT_DIRECTIVES)
}

/// [`filter`], with `default_directives` instead of [`DEFAULT_DIRECTIVES`] where `directives`
/// is empty or invalid.
pub fn filter_or<S>(
    directives: &str,
    default_directives: &str,
) -> impl Filter<S> + Send + Sync + 'static
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    let requested = Some(directives.trim())
        .filter(|d| !d.is_empty())
        .and_then(|d| EnvFilter::try_new(d).ok())
        .unwrap_or_else(|| EnvFilter::new(default_directives));
    let ceilings = Targets::new()
        .with_default(LevelFilter::TRACE)
        .with_targets(CAPPED_TARGETS);
    requested.and(ceilings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    /// Collects what the subscriber prints.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// Logs, through the filter built from `directives`, what the runtime logs at each level
    /// (with the targets the crates use), and returns the output.
    fn output_with(directives: &str) -> String {
        let captured = Captured::default();
        let writer = captured.clone();
        let layer = tracing_subscriber::fmt::layer()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .with_filter(filter(directives));
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::with_default(subscriber, || {
            tracing::trace!(
                target: "lambda_runtime::layers::api_response",
                body = "Authorization: Basic RAW-EVENT",
                "raw JSON event received from Lambda"
            );
            tracing::trace!(target: "lambda_runtime::requests", metadata_prelude = "RAW-HEADERS");
            tracing::debug!(target: "lambda_runtime::runtime", "RUNTIME-DEBUG");
            tracing::info!(target: "lambda_runtime::runtime", "RUNTIME-INFO");
            tracing::debug!(target: "lambda_http::request", "HTTP-DEBUG");
            tracing::trace!(target: "lambda_runtime_api_client", "CLIENT-TRACE");
            tracing::trace!(target: "aws_smithy_runtime::client::orchestrator", "SDK-BODY");
            tracing::debug!(target: "aws_smithy_runtime::client::orchestrator", "SDK-DEBUG");
            tracing::trace!(target: "token_core::grants", "APP-TRACE");
            tracing::info!(target: "token_core::grants", "APP-INFO");
        });
        let bytes = captured.0.lock().unwrap().clone();
        String::from_utf8(bytes).unwrap()
    }

    const NEVER_PRINTED: [&str; 6] = [
        "RAW-EVENT",
        "RAW-HEADERS",
        "RUNTIME-DEBUG",
        "HTTP-DEBUG",
        "CLIENT-TRACE",
        "SDK-BODY",
    ];

    #[test]
    fn trace_everywhere_keeps_the_runtime_under_its_ceiling() {
        for directives in ["trace", "debug", "lambda_runtime=trace,trace"] {
            let output = output_with(directives);
            for text in NEVER_PRINTED {
                assert!(!output.contains(text), "{directives}: {text} in {output}");
            }
            for text in ["RUNTIME-INFO", "APP-INFO", "SDK-DEBUG"] {
                assert!(output.contains(text), "{directives}: no {text} in {output}");
            }
        }
        assert!(output_with("trace").contains("APP-TRACE"));
    }

    #[test]
    fn a_directive_naming_the_event_logger_cannot_lift_the_ceiling() {
        let output = output_with(
            "lambda_runtime::layers::api_response=trace,lambda_runtime::requests=trace,\
             lambda_http=trace,aws_smithy_runtime::client::orchestrator=trace",
        );
        for text in NEVER_PRINTED {
            assert!(!output.contains(text), "{text} in {output}");
        }
    }

    #[test]
    fn an_empty_or_invalid_filter_means_info() {
        for directives in ["", "  ", "=nonsense=[", "info"] {
            let output = output_with(directives);
            assert!(output.contains("APP-INFO"), "{directives:?}: {output}");
            assert!(!output.contains("APP-TRACE"), "{directives:?}: {output}");
            assert!(!output.contains("SDK-DEBUG"), "{directives:?}: {output}");
        }
    }

    #[test]
    fn a_lower_level_still_quiets_the_runtime() {
        let output = output_with("warn");
        assert!(!output.contains("RUNTIME-INFO"), "{output}");
        assert!(!output.contains("APP-INFO"), "{output}");
    }
}
