//! One log line and the request metrics per request, a correlation id, and the cache headers
//! every response carries.

use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use http::{header, HeaderName, HeaderValue};
use tracing::Instrument;

use crate::domain::audit::{CorrelationId, RequestFacts, UserAgent};
use crate::measure;

pub static CORRELATION_ID: HeaderName = HeaderName::from_static("x-correlation-id");
/// Concur's own correlation header (docs/decisions.md, "Revocation, introspection and
/// connections"): echoed when the request sent one.
pub static CONCUR_CORRELATION_ID: HeaderName = HeaderName::from_static("concur-correlationid");

/// The outcome code of a response, for the request log's `code` field: a numeric catalogue code
/// or status, or the exchange's named code. Each route's responses carry it as an extension,
/// and [`request_context`] records it; responses without one (5xx, the JWK Set, token
/// endpoint successes) leave the field empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Code(u16),
    Name(&'static str),
}

impl Outcome {
    /// Attaches the outcome to a response.
    pub fn attach(self, mut response: Response) -> Response {
        response.extensions_mut().insert(self);
        response
    }

    /// The `code` label of a refusal's metric.
    fn label(self) -> String {
        match self {
            Self::Code(code) => code.to_string(),
            Self::Name(name) => name.to_owned(),
        }
    }

    fn record(self, span: &tracing::Span) {
        match self {
            Self::Code(code) => span.record("code", code),
            Self::Name(name) => span.record("code", name),
        };
    }
}

/// Wraps every route. The request span has empty `grant_type` and `client_id` fields that
/// handlers fill in, and a `code` field filled from the response's [`Outcome`]; the one log
/// line is written and the request's metrics recorded (`measure::request`, labelled with the
/// route's template, never the path a caller sent) when the response is ready. Headers,
/// bodies and query strings are never logged: they carry credentials.
pub async fn request_context(request: Request, next: Next) -> Response {
    let started = Instant::now();
    // Echoed under the same rule as X-Correlation-Id, never generated.
    let concur_correlation_id = request
        .headers()
        .get(&CONCUR_CORRELATION_ID)
        .filter(|v| v.to_str().is_ok_and(is_acceptable_correlation_id))
        .cloned();
    let correlation_id = request
        .headers()
        .get(&CORRELATION_ID)
        .and_then(|v| v.to_str().ok())
        .filter(|v| is_acceptable_correlation_id(v))
        .map(str::to_owned)
        .unwrap_or_else(new_correlation_id);
    let span = tracing::info_span!(
        "request",
        method = %request.method(),
        path = %request.uri().path(),
        correlation_id = %correlation_id,
        otel.kind = "server",
        grant_type = tracing::field::Empty,
        client_id = tracing::field::Empty,
        code = tracing::field::Empty,
    );
    let endpoint = request
        .extensions()
        .get::<MatchedPath>()
        .map_or(measure::UNMATCHED, MatchedPath::as_str)
        .to_owned();
    // What audit events recorded while serving this request say of it.
    let facts = RequestFacts {
        source_address: super::source_address::source_address(request.extensions()),
        user_agent: request
            .headers()
            .get(header::USER_AGENT)
            .and_then(|v| UserAgent::from_header(v.as_bytes())),
        correlation_id: CorrelationId::parse(&correlation_id),
    };
    let handled = facts.scope(next.run(request).instrument(span.clone()));
    let (mut response, grant) = measure::with_request_facts(handled).await;
    let outcome = response.extensions().get::<Outcome>().copied();
    if let Some(outcome) = outcome {
        outcome.record(&span);
    }
    measure::request(
        &endpoint,
        grant,
        response.status(),
        outcome.map(Outcome::label).as_deref(),
        started.elapsed(),
    );
    span.in_scope(|| {
        tracing::info!(
            status = response.status().as_u16(),
            latency_ms = started.elapsed().as_secs_f64() * 1000.0,
            "request completed"
        );
    });

    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&correlation_id) {
        headers.insert(CORRELATION_ID.clone(), value);
    }
    if let Some(value) = concur_correlation_id {
        headers.insert(CONCUR_CORRELATION_ID.clone(), value);
    }
    // Token responses must not be cached (RFC 6749 §5.1); a handler serving something public
    // (the JWK Set) sets its own Cache-Control.
    if !headers.contains_key(header::CACHE_CONTROL) {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        headers.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    }
    response
}

/// A random UUID from the thread's CSPRNG (`rand`'s ChaCha, seeded from the operating system):
/// an identifier, not a secret, so it costs no system call per request as `Uuid::new_v4` would.
fn new_correlation_id() -> String {
    uuid::Builder::from_random_bytes(rand::random())
        .into_uuid()
        .to_string()
}

fn is_acceptable_correlation_id(value: &str) -> bool {
    !value.is_empty() && value.len() <= 128 && value.bytes().all(|b| b.is_ascii_graphic())
}
