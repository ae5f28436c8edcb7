//! A relying party's back-channel logout endpoint on loopback: it records every request it gets
//! and answers each with one status (and `Location`, for redirects). With
//! [`TestApp::logout_services`], the app's services deliver to it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use token_adapters::outbound::fetcher;
use token_core::logout_delivery::{Deliverer, InProcessLogoutQueue, RetrySchedule};
use token_core::outbound::AllowedHosts;
use token_core::services::Services;

use super::app::TestApp;

/// One request the receiver got.
#[derive(Debug, Clone)]
pub struct Received {
    pub content_type: Option<String>,
    /// The form body's pairs.
    pub form: Vec<(String, String)>,
}

impl Received {
    pub fn logout_token(&self) -> &str {
        self.form
            .iter()
            .find(|(name, _)| name == "logout_token")
            .map(|(_, value)| value.as_str())
            .expect("a logout_token parameter")
    }
}

pub struct LogoutReceiver {
    /// `127.0.0.1:<port>`.
    pub host_port: String,
    received: Arc<Mutex<Vec<Received>>>,
}

impl LogoutReceiver {
    /// Answers every request with `status` and, if given, `location`.
    pub async fn start(status: StatusCode, location: Option<String>) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let host_port = listener.local_addr().unwrap().to_string();
        let received = Arc::new(Mutex::new(Vec::new()));
        let state = (received.clone(), status, location);
        let router = axum::Router::new()
            .fallback(record)
            .with_state(Arc::new(state));
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        Self {
            host_port,
            received,
        }
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.host_port)
    }

    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
}

type ReceiverState = Arc<(Arc<Mutex<Vec<Received>>>, StatusCode, Option<String>)>;

async fn record(State(state): State<ReceiverState>, headers: HeaderMap, body: String) -> Response {
    let (received, status, location) = state.as_ref();
    received.lock().unwrap().push(Received {
        content_type: headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
        form: serde_urlencoded::from_str(&body).unwrap_or_default(),
    });
    match location {
        Some(location) => (*status, [(header::LOCATION, location.clone())]).into_response(),
        None => status.into_response(),
    }
}

/// A queue that delivers from a background task of the test to the `allowed` loopback
/// `host:port`s, with [`quick_retries`].
pub fn in_process_queue(services: &Services, allowed: &[String]) -> Arc<InProcessLogoutQueue> {
    let allowed = AllowedHosts::parse(&allowed.join(",")).unwrap();
    Arc::new(InProcessLogoutQueue::new(
        Deliverer::new(services.ctx.clone(), fetcher(allowed)),
        quick_retries(),
    ))
}

/// Waits between attempts in tests: three attempts in a tenth of a second.
pub fn quick_retries() -> RetrySchedule {
    RetrySchedule::new(vec![Duration::from_millis(50); 2])
}

impl TestApp {
    /// The app's services, with back-channel logouts delivered by a background task of the test
    /// that may call `allowed` (`CLIENT_ID_METADATA_ALLOW_HOSTS`) and retries on `schedule`;
    /// the queue, to wait for its deliveries.
    pub fn logout_services(
        &self,
        allowed: &[&str],
        schedule: RetrySchedule,
    ) -> (Services, Arc<InProcessLogoutQueue>) {
        let allowed = AllowedHosts::parse(&allowed.join(",")).unwrap();
        let queue = Arc::new(InProcessLogoutQueue::new(
            Deliverer::new(self.ctx().clone(), fetcher(allowed)),
            schedule,
        ));
        let services = (*self.services).clone().with_logout_queue(queue.clone());
        (services, queue)
    }
}
