//! Structured logs: JSON in Lambda (CloudWatch parses it), human-readable locally.
//! The filter comes from `RUST_LOG` (default `info`).

use tracing_subscriber::EnvFilter;

pub fn init() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    let result = if std::env::var_os("AWS_LAMBDA_FUNCTION_NAME").is_some() {
        // Lambda adds its own timestamps and request ids.
        builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .without_time()
            .try_init()
    } else {
        builder.try_init()
    };
    // Already initialised (tests spawning several servers): keep the first.
    let _ = result;
}
