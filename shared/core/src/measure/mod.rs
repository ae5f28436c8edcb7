//! What the service counts and times, through the `metrics` facade: code that knows a fact
//! records it here, and the binary picks where it goes (Prometheus text on the local server,
//! CloudWatch embedded metric format lines in Lambda: `token_adapters::metrics`). Nothing here
//! knows an exporter; the local server's `GET /metrics` reads through the [`Scrape`] port.
//!
//! Labels are bounded sets only (a route's template, a grant type, a catalogue code, a limit),
//! never a client, a principal or anything a caller typed: a metric line carries no identifier
//! and no secret.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use http::StatusCode;

/// The CloudWatch namespace of every metric (the template's alarms and dashboard read it).
pub const NAMESPACE: &str = "TokenService";

/// Where `GET /metrics` reads its text (Prometheus' exposition format): the local server's
/// exporter. `None` from `render`: no recorder of that kind is installed (a 404).
pub trait Scrape: Send + Sync + std::fmt::Debug {
    fn render(&self) -> Option<String>;
}

/// `METRICS=off`: every metric goes to a recorder that keeps nothing, installed before either
/// exporter can be, so neither is (the local server's `/metrics` then answers 404). Call it
/// before the first router is built.
pub fn switch_off() {
    // An error means a recorder is already installed: too late to switch off, and said so.
    if metrics::set_global_recorder(metrics::NoopRecorder).is_err() {
        tracing::warn!("METRICS=off came after a metrics recorder was installed: metrics stay on");
    }
}

/// Requests answered, by `endpoint` and `grant`.
pub const REQUESTS: &str = "requests_total";
/// Refusals (4xx with a catalogue code), by `endpoint`, `grant` and `code`.
pub const REFUSALS: &str = "refusals_total";
/// Answers with a 5xx status, by `endpoint` and `grant`.
pub const SERVER_ERRORS: &str = "server_errors_total";
/// Answers with 503 (a dependency unavailable), by `endpoint` and `grant`.
pub const UNAVAILABLE: &str = "unavailable_total";
/// Time from request to response, in seconds, by `endpoint` and `grant`.
pub const LATENCY: &str = "request_duration_seconds";
/// Refresh requests answered as a retry within the grace period: the same successor again.
pub const REFRESH_RETRIES: &str = "refresh_retries_within_grace_total";
/// A rotated refresh token presented again outside the grace period: the family was revoked.
pub const REUSE_DETECTED: &str = "refresh_reuse_detected_total";
/// Failed password attempts that reached the lockout threshold: a login was locked.
pub const LOCKOUTS: &str = "lockouts_total";
/// Requests refused with 429 by an abuse limit, by `limit`.
pub const RATE_LIMITED: &str = "rate_limited_total";
/// Client secrets added, by `by`: `app` (the secrets API, with the app's own token) or
/// `administrator` (`tokenctl`). A secret an app adds for itself is what a leaked application
/// token would do first, so it is counted apart (docs/decisions.md, Client secrets).
pub const SECRETS_ADDED: &str = "client_secrets_added_total";
/// Processes started (in Lambda: execution environments initialised).
pub const COLD_STARTS: &str = "cold_starts_total";

/// The `grant` label of requests that are not token requests.
pub const NO_GRANT: &str = "none";
/// The `endpoint` label of requests no route matched.
pub const UNMATCHED: &str = "unmatched";

tokio::task_local! {
    /// What the request's handler learned that the request layer labels its metrics with.
    static REQUEST: Arc<RequestFacts>;
}

/// Filled while the handler runs, read by the request layer when it answers.
#[derive(Default)]
pub struct RequestFacts {
    grant: OnceLock<&'static str>,
}

/// Runs `future` (a request's handler) with a place for [`note_grant`]; answers its output and
/// the grant noted, if any.
pub async fn with_request_facts<F: std::future::Future>(future: F) -> (F::Output, &'static str) {
    let facts = Arc::new(RequestFacts::default());
    let output = REQUEST.scope(facts.clone(), future).await;
    (output, facts.grant.get().copied().unwrap_or(NO_GRANT))
}

/// The token request's grant type, for the request's metrics. Outside a request: nothing.
pub fn note_grant(grant: &'static str) {
    let _ = REQUEST.try_with(|facts| facts.grant.set(grant));
}

/// One answered request: counted, timed, and counted again as a refusal (with its catalogue
/// code), a server error or an unavailable dependency.
pub fn request(
    endpoint: &str,
    grant: &'static str,
    status: StatusCode,
    code: Option<&str>,
    latency: Duration,
) {
    let labels = [
        ("endpoint", endpoint.to_owned()),
        ("grant", grant.to_owned()),
    ];
    metrics::counter!(REQUESTS, &labels).increment(1);
    metrics::histogram!(LATENCY, &labels).record(latency.as_secs_f64());
    if status.is_server_error() {
        metrics::counter!(SERVER_ERRORS, &labels).increment(1);
        if status == StatusCode::SERVICE_UNAVAILABLE {
            metrics::counter!(UNAVAILABLE, &labels).increment(1);
        }
    } else if let (true, Some(code)) = (status.is_client_error(), code) {
        let [endpoint, grant] = labels;
        metrics::counter!(REFUSALS, &[endpoint, grant, ("code", code.to_owned())]).increment(1);
    }
}

pub fn refresh_retry_within_grace() {
    metrics::counter!(REFRESH_RETRIES).increment(1);
}

pub fn refresh_reuse_detected() {
    metrics::counter!(REUSE_DETECTED).increment(1);
}

pub fn lockout() {
    metrics::counter!(LOCKOUTS).increment(1);
}

/// `limit` names the limit (its counter's name), never what it counted.
pub fn rate_limited(limit: &'static str) {
    metrics::counter!(RATE_LIMITED, "limit" => limit).increment(1);
}

/// `by` is [`SecretAddedBy::label`].
pub fn secret_added(by: &'static str) {
    metrics::counter!(SECRETS_ADDED, "by" => by).increment(1);
}

pub fn cold_start() {
    metrics::counter!(COLD_STARTS).increment(1);
}
