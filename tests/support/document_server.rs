//! Where client ID metadata documents live in the tests: an HTTP(S) server on loopback that
//! answers each path with what the test set (status, headers, body, a delay), counting the
//! requests per path; and a resolver that answers the test's host names with the test's
//! addresses, so that the fetcher's address rules meet names without real DNS.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderName, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use token_core::outbound::Resolver;

/// One path's answer.
#[derive(Debug, Clone)]
pub struct Served {
    pub status: StatusCode,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
    /// Waited before the answer's head is sent.
    pub delay: Duration,
}

impl Served {
    /// `200` with `document` as JSON, cacheable for `max_age` seconds when given.
    pub fn json(document: &serde_json::Value, max_age: Option<u64>) -> Self {
        let mut headers = vec![("content-type", "application/json".to_owned())];
        if let Some(seconds) = max_age {
            headers.push(("cache-control", format!("public, max-age={seconds}")));
        }
        Self {
            status: StatusCode::OK,
            headers,
            body: serde_json::to_vec(document).unwrap(),
            delay: Duration::ZERO,
        }
    }

    /// `status` with `headers` and `body`, at once.
    pub fn raw(
        status: StatusCode,
        headers: &[(&'static str, &str)],
        body: impl Into<Vec<u8>>,
    ) -> Self {
        Self {
            status,
            headers: headers.iter().map(|(n, v)| (*n, (*v).to_owned())).collect(),
            body: body.into(),
            delay: Duration::ZERO,
        }
    }

    pub fn after(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }
}

#[derive(Debug, Default)]
struct Documents {
    served: HashMap<String, Served>,
    hits: HashMap<String, usize>,
}

/// The documents' server: `127.0.0.1:<port>`.
#[derive(Debug, Clone)]
pub struct DocumentServer {
    pub port: u16,
    documents: Arc<Mutex<Documents>>,
}

impl DocumentServer {
    pub async fn start() -> Self {
        Self::serving(None).await
    }

    /// The same over https with `tls` (a certificate of a [`TestCa`](super::test_ca::TestCa)).
    pub async fn start_tls(tls: Arc<rustls::ServerConfig>) -> Self {
        Self::serving(Some(tls)).await
    }

    async fn serving(tls: Option<Arc<rustls::ServerConfig>>) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let documents = Arc::new(Mutex::new(Documents::default()));
        let router = axum::Router::new()
            .fallback(answer)
            .with_state(documents.clone());
        match tls {
            None => tokio::spawn(async move { axum::serve(listener, router).await.unwrap() }),
            Some(tls) => tokio::spawn(async move {
                let listener = TlsListener {
                    tcp: listener,
                    acceptor: tokio_rustls::TlsAcceptor::from(tls),
                };
                axum::serve(listener, router).await.unwrap();
            }),
        };
        Self { port, documents }
    }

    /// Answers `path` (with its query, if any) with `served` from now on.
    pub fn serve(&self, path: &str, served: Served) {
        self.documents
            .lock()
            .unwrap()
            .served
            .insert(path.to_owned(), served);
    }

    /// Requests for `path` so far.
    pub fn hits(&self, path: &str) -> usize {
        self.documents
            .lock()
            .unwrap()
            .hits
            .get(path)
            .copied()
            .unwrap_or(0)
    }

    /// Requests for any path so far.
    pub fn all_hits(&self) -> usize {
        self.documents.lock().unwrap().hits.values().sum()
    }
}

/// Connections accepted over TLS; one whose handshake fails (or stalls) is dropped.
struct TlsListener {
    tcp: tokio::net::TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
}

impl axum::serve::Listener for TlsListener {
    type Io = tokio_rustls::server::TlsStream<tokio::net::TcpStream>;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let (tcp, peer) = self.tcp.accept().await.unwrap();
            let handshake = self.acceptor.accept(tcp);
            if let Ok(Ok(tls)) = tokio::time::timeout(Duration::from_secs(5), handshake).await {
                return (tls, peer);
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}

async fn answer(State(documents): State<Arc<Mutex<Documents>>>, uri: Uri) -> Response {
    let path = uri
        .path_and_query()
        .map_or_else(|| uri.path().to_owned(), |p| p.as_str().to_owned());
    let served = {
        let mut documents = documents.lock().unwrap();
        *documents.hits.entry(path.clone()).or_default() += 1;
        documents.served.get(&path).cloned()
    };
    let Some(served) = served else {
        return StatusCode::NOT_FOUND.into_response();
    };
    tokio::time::sleep(served.delay).await;
    let mut response = (served.status, served.body).into_response();
    for (name, value) in served.headers {
        response.headers_mut().insert(
            HeaderName::from_static(name),
            HeaderValue::from_str(&value).unwrap(),
        );
    }
    response
}

/// Answers each listed name with its addresses (every one of them, as DNS may), anything else
/// with "no such name"; counts lookups.
#[derive(Debug, Default)]
pub struct TestResolver {
    names: HashMap<String, Vec<IpAddr>>,
    lookups: Mutex<usize>,
}

impl TestResolver {
    pub fn new(names: &[(&str, &[&str])]) -> Arc<Self> {
        Arc::new(Self {
            names: names
                .iter()
                .map(|(name, addresses)| {
                    let addresses = addresses.iter().map(|a| a.parse().unwrap()).collect();
                    ((*name).to_owned(), addresses)
                })
                .collect(),
            lookups: Mutex::new(0),
        })
    }

    pub fn lookups(&self) -> usize {
        *self.lookups.lock().unwrap()
    }
}

#[async_trait::async_trait]
impl Resolver for TestResolver {
    async fn resolve(&self, host: &str, _port: u16) -> std::io::Result<Vec<IpAddr>> {
        *self.lookups.lock().unwrap() += 1;
        self.names
            .get(host)
            .cloned()
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no such name"))
    }
}
