//! An OTLP/HTTP trace receiver on loopback: `POST /v1/traces` with an
//! `ExportTraceServiceRequest` in protobuf, decoded and kept for the test to read.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::routing::post;
use axum::Router;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;

type Received = Arc<Mutex<Vec<Span>>>;

pub struct OtlpReceiver {
    /// `http://127.0.0.1:<port>`: the value of `OTEL_EXPORTER_OTLP_ENDPOINT`.
    pub endpoint: String,
    spans: Received,
}

impl OtlpReceiver {
    pub async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let spans = Received::default();
        let router = Router::new()
            .route("/v1/traces", post(receive))
            .with_state(spans.clone());
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        Self { endpoint, spans }
    }

    /// Every span received so far.
    pub fn spans(&self) -> Vec<Span> {
        self.spans.lock().unwrap().clone()
    }

    /// Waits (up to `timeout`) for a span that `wanted` accepts.
    pub async fn wait_for(
        &self,
        timeout: Duration,
        wanted: impl Fn(&Span) -> bool,
    ) -> Option<Span> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(span) = self.spans().into_iter().find(|s| wanted(s)) {
                return Some(span);
            }
            if Instant::now() > deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// A span attribute's value as a string (string attributes only).
pub fn attribute<'a>(span: &'a Span, key: &str) -> Option<&'a str> {
    span.attributes
        .iter()
        .find(|a| a.key == key)
        .and_then(|a| a.value.as_ref()?.value.as_ref())
        .and_then(|v| match v {
            Value::StringValue(s) => Some(s.as_str()),
            _ => None,
        })
}

async fn receive(State(spans): State<Received>, body: Bytes) -> &'static str {
    let request = ExportTraceServiceRequest::decode(body).expect("an OTLP protobuf request");
    let mut received = spans.lock().unwrap();
    for resource in request.resource_spans {
        for scope in resource.scope_spans {
            received.extend(scope.spans);
        }
    }
    ""
}
