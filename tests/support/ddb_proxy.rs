//! A counting, fault-injecting HTTP/1.1 proxy in front of DynamoDB Local.
//!
//! Point a store at it (`DynamoStore::connect(table, Some(proxy.url()))`) and the test can
//! count the DynamoDB calls each operation makes ([`DdbProxy::calls`]) and the capacity units
//! they consume ([`capacity`]), and make DynamoDB slow,
//! lose answers, refuse connections or throttle ([`DdbProxy::inject`]) while the store keeps
//! running, then heal it again ([`DdbProxy::clear_fault`]).
//!
//! The store's side is served by [`wire`] (HTTP/1.1 by hand, so a fault owns the socket);
//! upstream calls go through `reqwest`.

mod calls;
mod capacity;
mod wire;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use token_store::dynamodb::DynamoStore;
use tokio::io::BufReader;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use calls::{partitions_named, tables_named};
pub use calls::{Attempt, Call, Calls};
pub use capacity::Written;
use wire::{is_hop_by_hop, read_request, write_response, Request, Response};

/// The SDK's header saying which attempt at an operation a request is.
const SDK_REQUEST_HEADER: &str = "amz-sdk-request";

/// What goes wrong with a request the fault applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Forwards the request at once (it takes effect) but holds the answer this long, e.g.
    /// past the SDK's attempt timeout: the "timed out, but committed" case.
    DelayResponse(Duration),
    /// Forwards the request (it takes effect), then closes the connection without answering.
    DropResponse,
    /// Closes new connections as soon as they are accepted, and open ones before their next
    /// request reaches DynamoDB: nothing is forwarded.
    RefuseConnections,
    /// Answers 400 `ProvisionedThroughputExceededException` without forwarding.
    Throttle,
    /// Answers 500 `InternalServerError` without forwarding.
    InternalServerError,
    /// Answers 400 `TransactionConflictException` without forwarding, as DynamoDB answers a
    /// single-item write to an item a transaction is writing.
    TransactionConflict,
}

impl Fault {
    /// Applies only to requests of this DynamoDB operation (`"TransactWriteItems"`).
    pub fn only_for(self, operation: &str) -> Injection {
        Injection::from(self).only_for(operation)
    }

    /// Applies only to requests of these operations (e.g. [`WRITE_OPERATIONS`]).
    pub fn only_for_any(self, operations: &[&str]) -> Injection {
        Injection::from(self).only_for_any(operations)
    }

    /// Applies to this many requests (or refused connections), then the proxy heals itself.
    pub fn times(self, count: u32) -> Injection {
        Injection::from(self).times(count)
    }
}

/// Every DynamoDB operation that writes: a fault narrowed to these leaves reads working.
pub const WRITE_OPERATIONS: &[&str] = &[
    "PutItem",
    "UpdateItem",
    "DeleteItem",
    "BatchWriteItem",
    "TransactWriteItems",
];

/// A fault and the requests it applies to: all of them, until cleared, unless narrowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Injection {
    fault: Fault,
    /// `None`: every operation.
    operations: Option<Vec<String>>,
    /// `Some(prefix)`: only requests naming a partition key that starts with it.
    partition_prefix: Option<String>,
    /// Matching requests let through untouched before the fault starts.
    spared: u32,
    remaining: Option<u32>,
}

impl Injection {
    pub fn only_for(self, operation: &str) -> Self {
        self.only_for_any(&[operation])
    }

    pub fn only_for_any(mut self, operations: &[&str]) -> Self {
        self.operations = Some(operations.iter().map(|op| (*op).to_owned()).collect());
        self
    }

    pub fn times(mut self, count: u32) -> Self {
        self.remaining = Some(count);
        self
    }

    /// Applies only to requests that name a partition key starting with `prefix` (e.g.
    /// `"FAMILY#"`: a family's update, not the rate counter's `UpdateItem` before it).
    pub fn touching(mut self, prefix: &str) -> Self {
        self.partition_prefix = Some(prefix.to_owned());
        self
    }

    /// Lets the first `count` matching requests through, e.g. to fault the second UpdateItem
    /// of a flow and not its first.
    pub fn sparing_first(mut self, count: u32) -> Self {
        self.spared = count;
        self
    }

    /// Whether a request of `operation` naming `partitions` (`None`: a connection not yet read)
    /// is hit.
    fn applies_to(&self, operation: Option<&str>, partitions: &[String]) -> bool {
        let operation_matches = match (&self.operations, operation) {
            (None, _) => true,
            (Some(wanted), Some(actual)) => wanted.iter().any(|w| w == actual),
            (Some(_), None) => false,
        };
        let partition_matches = match (&self.partition_prefix, operation) {
            (None, _) => true,
            (Some(prefix), Some(_)) => partitions.iter().any(|pk| pk.starts_with(prefix)),
            (Some(_), None) => false,
        };
        operation_matches && partition_matches && self.remaining != Some(0)
    }
}

impl From<Fault> for Injection {
    fn from(fault: Fault) -> Self {
        Self {
            fault,
            operations: None,
            partition_prefix: None,
            spared: 0,
            remaining: None,
        }
    }
}

#[derive(Default)]
struct State {
    calls: Mutex<Vec<Call>>,
    injection: Mutex<Option<Injection>>,
    sequence: AtomicU64,
}

impl State {
    /// Records what the answer to call `sequence` says it consumed, unless the call was taken
    /// (forgotten by the test) meanwhile.
    fn set_units(&self, sequence: u64, units: f64) {
        let mut calls = lock(&self.calls);
        if let Some(call) = calls.iter_mut().rev().find(|c| c.sequence == sequence) {
            call.units = units;
        }
    }

    /// The fault this request or connection suffers, consuming one of its `times`.
    fn take_fault(&self, operation: Option<&str>, partitions: &[String]) -> Option<Fault> {
        let mut injection = lock(&self.injection);
        let active = injection
            .as_mut()
            .filter(|i| i.applies_to(operation, partitions))?;
        // A connection is refused before its operation is known; request faults wait for it.
        if operation.is_none() && active.fault != Fault::RefuseConnections {
            return None;
        }
        if active.spared > 0 {
            active.spared -= 1;
            return None;
        }
        if let Some(remaining) = active.remaining.as_mut() {
            *remaining -= 1;
        }
        Some(active.fault)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking test thread must not poison the proxy for the next assertion.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The proxy: listening on a loopback port until dropped.
pub struct DdbProxy {
    url: String,
    state: Arc<State>,
    accept_loop: JoinHandle<()>,
}

impl DdbProxy {
    /// A proxy in front of the DynamoDB Local of the test run (`DYNAMODB_ENDPOINT`); `None`
    /// when the DynamoDB suite is skipped (see [`crate::support::dynamodb::endpoint`]).
    pub async fn start() -> Option<Self> {
        Some(Self::start_in_front_of(&crate::support::dynamodb::endpoint()?).await)
    }

    /// A proxy and a store on a fresh table behind it (created through the proxy); `None` when
    /// the DynamoDB suite is skipped.
    pub async fn start_with_fresh_table() -> Option<(Self, DynamoStore)> {
        let proxy = Self::start().await?;
        let table = crate::support::dynamodb::unique_table_name();
        let store = DynamoStore::connect(&table, Some(proxy.url())).await;
        store
            .create_table_if_missing()
            .await
            .expect("create a test table through the proxy");
        Some((proxy, store))
    }

    pub async fn start_in_front_of(upstream: &str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a loopback port for the DynamoDB proxy");
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(State::default());
        let forwarder = Forwarder {
            upstream: upstream.trim_end_matches('/').to_owned(),
            // Straight to the emulator, whatever proxy the environment names. Faults close the
            // store's side of a connection, never this pool's.
            http: reqwest::Client::builder()
                .no_proxy()
                .build()
                .expect("an HTTP client"),
            state: state.clone(),
        };
        let accept_loop = tokio::spawn(accept_connections(listener, forwarder));
        Self {
            url,
            state,
            accept_loop,
        }
    }

    /// `http://127.0.0.1:<port>`: the endpoint to give the store.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Replaces the current fault (if any) with this one.
    pub fn inject(&self, injection: impl Into<Injection>) {
        *lock(&self.state.injection) = Some(injection.into());
    }

    /// Back to a faithful proxy.
    pub fn clear_fault(&self) {
        *lock(&self.state.injection) = None;
    }

    /// A snapshot of the calls so far.
    pub fn calls(&self) -> Calls {
        Calls(lock(&self.state.calls).clone())
    }

    /// Forgets the calls so far (e.g. after fixtures were written) and returns them.
    pub fn take_calls(&self) -> Calls {
        Calls(std::mem::take(&mut *lock(&self.state.calls)))
    }
}

impl Drop for DdbProxy {
    fn drop(&mut self) {
        self.accept_loop.abort();
    }
}

#[derive(Clone)]
struct Forwarder {
    upstream: String,
    http: reqwest::Client,
    state: Arc<State>,
}

async fn accept_connections(listener: TcpListener, forwarder: Forwarder) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Out of file descriptors, say: wait rather than spin.
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        if forwarder.state.take_fault(None, &[]) == Some(Fault::RefuseConnections) {
            drop(stream);
            continue;
        }
        let forwarder = forwarder.clone();
        tokio::spawn(async move {
            // An I/O error only ends this connection; the SDK sees it as a network failure.
            let _ = forwarder.serve(stream).await;
        });
    }
}

impl Forwarder {
    async fn serve(&self, stream: TcpStream) -> std::io::Result<()> {
        let (reader, mut writer) = stream.into_split();
        let mut reader = BufReader::new(reader);
        while let Some(mut request) = read_request(&mut reader).await? {
            let operation = request.operation();
            // The fault is chosen before the call is counted: a test that waits for a call to
            // show up and then changes the fault must not change what that call suffers.
            let partitions = partitions_named(&request.body);
            let fault = self.state.take_fault(Some(&operation), &partitions);
            let sequence = self.state.sequence.fetch_add(1, Ordering::Relaxed);
            lock(&self.state.calls).push(Call {
                operation: operation.clone(),
                tables: tables_named(&request.body),
                partitions,
                written: capacity::items_written(&operation, &request.body),
                units: 0.0,
                attempt: request.header(SDK_REQUEST_HEADER).and_then(Attempt::parse),
                sequence,
            });
            let sent = request.body.clone();
            if let Some(body) = capacity::asking_for_capacity(&operation, &request.body) {
                request.body = body;
            }
            let response = match fault {
                None => {
                    let transaction = (operation == "TransactWriteItems")
                        .then(|| capacity::TransactionItems::of(&sent));
                    let before = match &transaction {
                        Some(items) => self.stored_sizes(&request.headers, items).await,
                        None => Vec::new(),
                    };
                    let headers = request.headers.clone();
                    let response = self.forward(request).await;
                    let mut units =
                        capacity::units_of(&operation, &sent, response.status, &response.body);
                    if let Some(items) = transaction.filter(|_| response.status == 200) {
                        let after = self.stored_sizes(&headers, &items).await;
                        units = items.units(&before, &after);
                    }
                    self.state.set_units(sequence, units);
                    response
                }
                Some(Fault::RefuseConnections) => return Ok(()),
                Some(Fault::DropResponse) => {
                    self.forward(request).await;
                    return Ok(());
                }
                Some(Fault::DelayResponse(delay)) => {
                    let response = self.forward(request).await;
                    tokio::time::sleep(delay).await;
                    response
                }
                Some(Fault::Throttle) => Response::dynamodb_error(
                    400,
                    "ProvisionedThroughputExceededException",
                    "Injected by the test proxy: throughput exceeded",
                ),
                Some(Fault::InternalServerError) => Response::dynamodb_error(
                    500,
                    "InternalServerError",
                    "Injected by the test proxy: internal server error",
                ),
                Some(Fault::TransactionConflict) => Response::dynamodb_error(
                    400,
                    "TransactionConflictException",
                    "Injected by the test proxy: transaction conflict",
                ),
            };
            write_response(&mut writer, &response).await?;
        }
        Ok(())
    }

    /// The stored size of each item a transaction writes (0: none), read with the store's own
    /// headers (its credentials and region) and not counted.
    async fn stored_sizes(
        &self,
        headers: &[(String, String)],
        items: &capacity::TransactionItems,
    ) -> Vec<usize> {
        let mut sizes = Vec::new();
        for body in items.reads() {
            let mut read = Request {
                method: "POST".into(),
                path: "/".into(),
                headers: headers.to_vec(),
                body,
            };
            for (name, value) in &mut read.headers {
                if name.eq_ignore_ascii_case("x-amz-target") {
                    "DynamoDB_20120810.GetItem".clone_into(value);
                }
            }
            let answer = self.forward(read).await;
            sizes.push(capacity::size_in_answer(&answer.body));
        }
        sizes
    }

    /// The upstream's answer, or a 502 when DynamoDB Local cannot be reached.
    async fn forward(&self, request: Request) -> Response {
        let method =
            reqwest::Method::from_bytes(request.method.as_bytes()).unwrap_or(reqwest::Method::POST);
        let mut upstream = self
            .http
            .request(method, format!("{}{}", self.upstream, request.path));
        for (name, value) in &request.headers {
            if !is_hop_by_hop(name) && !name.eq_ignore_ascii_case("host") {
                upstream = upstream.header(name, value);
            }
        }
        let answer = match upstream.body(request.body).send().await {
            Ok(answer) => answer,
            Err(e) => return Response::dynamodb_error(502, "BadGateway", &e.to_string()),
        };
        let status = answer.status().as_u16();
        let headers = answer
            .headers()
            .iter()
            .filter(|(name, _)| !is_hop_by_hop(name.as_str()))
            .filter_map(|(name, value)| Some((name.to_string(), value.to_str().ok()?.to_owned())))
            .collect();
        match answer.bytes().await {
            Ok(body) => Response {
                status,
                headers,
                body: body.to_vec(),
            },
            Err(e) => Response::dynamodb_error(502, "BadGateway", &e.to_string()),
        }
    }
}
