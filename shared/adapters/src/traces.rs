//! OpenTelemetry traces: the request span (with its correlation id) and a span per store call,
//! exported over OTLP (HTTP/protobuf) when `OTEL_EXPORTER_OTLP_ENDPOINT` is set, and not built
//! at all otherwise. Spans only: log events never leave through the exporter, so the traces
//! carry what the spans' fields say (method, route, correlation id, grant, client id, code,
//! store operation) and nothing a log line might.

use std::sync::OnceLock;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use tracing::level_filters::LevelFilter;
use tracing::Subscriber;
use tracing_subscriber::filter::{filter_fn, FilterExt, Targets};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

use token_core::config::TelemetrySection;

static PROVIDER: OnceLock<SdkTracerProvider> = OnceLock::new();

/// The exporting layer, when `OTEL_EXPORTER_OTLP_ENDPOINT` is set; `None` otherwise. The
/// exporter reads that variable (and the other standard `OTEL_*` ones) itself.
pub fn layer<S>(telemetry: &TelemetrySection) -> Option<Box<dyn Layer<S> + Send + Sync + 'static>>
where
    S: Subscriber + for<'a> LookupSpan<'a> + Send + Sync,
{
    telemetry.otlp_endpoint.as_ref()?;
    let service = telemetry
        .lambda_function
        .clone()
        .unwrap_or_else(|| "token-service".to_owned());
    // The exporter's blocking HTTP client must not be built (or dropped) on an async worker:
    // built on a thread of its own, it then lives on the batch processor's thread.
    let provider = std::thread::spawn(move || build_provider(service))
        .join()
        .ok()??;
    let tracer = provider.tracer("token-service");
    let _ = PROVIDER.set(provider);
    // The service's own spans (the request span), the store's per-call spans (`debug`, so
    // that the logs never show them), and the AWS SDK's operation spans (`DynamoDB.GetItem`…).
    let targets = Targets::new()
        .with_target("token_core", LevelFilter::INFO)
        .with_target("token_http", LevelFilter::INFO)
        .with_target("token_store", LevelFilter::DEBUG)
        .with_target("aws_sdk_dynamodb", LevelFilter::DEBUG)
        .with_target("aws_sdk_kms", LevelFilter::DEBUG);
    let spans_only = filter_fn(|metadata| metadata.is_span());
    Some(
        tracing_opentelemetry::layer()
            .with_tracer(tracer)
            .with_filter(targets.and(spans_only))
            .boxed(),
    )
}

fn build_provider(service: String) -> Option<SdkTracerProvider> {
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .build()
        .map_err(|e| eprintln!("traces are not exported: {e}"))
        .ok()?;
    Some(
        SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(Resource::builder().with_service_name(service).build())
            .build(),
    )
}

/// Exports the spans ended so far (a Lambda invocation's, before the sandbox may freeze).
/// Without an exporter, nothing. Blocks on the export: call it off the async workers.
pub fn flush() {
    if let Some(provider) = PROVIDER.get() {
        if let Err(error) = provider.force_flush() {
            tracing::warn!(%error, "traces could not be exported");
        }
    }
}

/// Whether traces are exported (an exporter was built).
pub fn enabled() -> bool {
    PROVIDER.get().is_some()
}
