//! A small Lambda Runtime API (the `2018-06-01` routes a runtime client calls) for one function
//! process: hands out the events the test queues, collects the answers, and notes when the
//! function first polled (the end of its init).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot, Notify};

/// The Runtime API's view of one invocation's end.
pub enum Outcome {
    Response(Value),
    Error(Value),
}

/// When an answer reached the Runtime API, for latency figures free of the test's own delays.
pub type Answer = (Outcome, Instant);

/// What the routes share with the test.
struct RuntimeState {
    function_name: &'static str,
    /// Events waiting for the function's next poll (one poller: the runtime polls in sequence).
    events: tokio::sync::Mutex<mpsc::UnboundedReceiver<(String, Value)>>,
    /// Where each queued invocation's answer goes, by request id.
    answers: Mutex<HashMap<String, oneshot::Sender<Answer>>>,
    first_poll: OnceLock<Instant>,
    polled: Notify,
    init_error: Mutex<Option<String>>,
}

/// A small Lambda Runtime API on a loopback port, for one function process.
pub struct RuntimeApi {
    /// `host:port`, the value of `AWS_LAMBDA_RUNTIME_API`.
    pub address: std::net::SocketAddr,
    state: Arc<RuntimeState>,
    events: mpsc::UnboundedSender<(String, Value)>,
    server: tokio::task::JoinHandle<()>,
}

impl RuntimeApi {
    pub async fn serve(function_name: &'static str) -> Self {
        let (events, receiver) = mpsc::unbounded_channel();
        let state = Arc::new(RuntimeState {
            function_name,
            events: tokio::sync::Mutex::new(receiver),
            answers: Mutex::default(),
            first_poll: OnceLock::new(),
            polled: Notify::new(),
            init_error: Mutex::default(),
        });
        let base = "/2018-06-01/runtime";
        let router = Router::new()
            .route(&format!("{base}/invocation/next"), get(next_invocation))
            .route(
                &format!("{base}/invocation/{{id}}/response"),
                post(response),
            )
            .route(&format!("{base}/invocation/{{id}}/error"), post(error))
            .route(&format!("{base}/init/error"), post(init_error))
            .with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            axum::serve(listener, router).await.expect("Runtime API");
        });
        Self {
            address,
            state,
            events,
            server,
        }
    }

    /// Resolves when the function first polls `next`, with when it did.
    pub async fn first_poll(&self) -> Instant {
        loop {
            if let Some(at) = self.state.first_poll.get() {
                return *at;
            }
            self.state.polled.notified().await;
        }
    }

    /// What the function posted to `init/error`, if anything.
    pub fn init_error(&self) -> Option<String> {
        self.state.init_error.lock().unwrap().clone()
    }

    /// Queues `event` for the function's next poll; the receiver gets its answer.
    pub fn invoke(&self, event: Value) -> oneshot::Receiver<Answer> {
        let request_id = uuid::Uuid::new_v4().to_string();
        let (sender, receiver) = oneshot::channel();
        self.state
            .answers
            .lock()
            .unwrap()
            .insert(request_id.clone(), sender);
        self.events
            .send((request_id, event))
            .expect("the Runtime API holds its queue while it runs");
        receiver
    }
}

impl Drop for RuntimeApi {
    fn drop(&mut self) {
        self.server.abort();
    }
}

type ApiState = State<Arc<RuntimeState>>;

/// Long poll: hands out the next event with the headers the runtime client reads.
async fn next_invocation(State(state): ApiState) -> Response {
    state.first_poll.get_or_init(Instant::now);
    state.polled.notify_one();
    let Some((request_id, event)) = state.events.lock().await.recv().await else {
        return StatusCode::GONE.into_response();
    };
    let deadline = SystemTime::now() + Duration::from_secs(30);
    let deadline_ms = deadline.duration_since(UNIX_EPOCH).unwrap().as_millis();
    let arn = format!(
        "arn:aws:lambda:us-east-1:123456789012:function:{}",
        state.function_name
    );
    let headers = [
        ("Lambda-Runtime-Aws-Request-Id", request_id),
        ("Lambda-Runtime-Deadline-Ms", deadline_ms.to_string()),
        ("Lambda-Runtime-Invoked-Function-Arn", arn),
        (
            "Lambda-Runtime-Trace-Id",
            "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=0".into(),
        ),
    ];
    (headers, Json(event)).into_response()
}

async fn response(state: ApiState, Path(id): Path<String>, body: Bytes) -> StatusCode {
    answer(state, id, body, Outcome::Response)
}

async fn error(state: ApiState, Path(id): Path<String>, body: Bytes) -> StatusCode {
    answer(state, id, body, Outcome::Error)
}

fn answer(
    State(state): ApiState,
    id: String,
    body: Bytes,
    outcome: fn(Value) -> Outcome,
) -> StatusCode {
    let arrived = Instant::now();
    let Ok(value) = serde_json::from_slice(&body) else {
        return StatusCode::BAD_REQUEST;
    };
    match state.answers.lock().unwrap().remove(&id) {
        Some(sender) => {
            let _ = sender.send((outcome(value), arrived));
            StatusCode::ACCEPTED
        }
        None => StatusCode::BAD_REQUEST,
    }
}

async fn init_error(State(state): ApiState, body: Bytes) -> StatusCode {
    *state.init_error.lock().unwrap() = Some(String::from_utf8_lossy(&body).into_owned());
    StatusCode::ACCEPTED
}
