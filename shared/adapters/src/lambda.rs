//! A Lambda function's router: its metrics written as CloudWatch embedded metric format lines
//! after each invocation (`crate::metrics::emf`), and its spans exported if traces are on.

use axum::Router;
use token_core::config::TelemetrySection;

/// A Lambda function's router: its metrics written as CloudWatch embedded metric format lines
/// after each invocation (`metrics::emf`), and its spans exported if traces are on (`traces`).
pub fn lambda(router: Router, telemetry: &TelemetrySection) -> Router {
    crate::metrics::emf::install(telemetry.lambda_function.as_deref().unwrap_or_default());
    router.layer(axum::middleware::map_response(flush_metrics))
}

async fn flush_metrics(response: axum::response::Response) -> axum::response::Response {
    crate::metrics::emf::flush();
    if crate::traces::enabled() {
        // The export is a blocking HTTP call to the collector (the Lambda extension's).
        let _ = tokio::task::spawn_blocking(crate::traces::flush).await;
    }
    response
}
