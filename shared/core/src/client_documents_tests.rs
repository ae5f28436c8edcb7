//! The documents' fetch, checks and cache against a raw loopback server (allowed as
//! `CLIENT_ID_METADATA_ALLOW_HOSTS` allows it) and a SQLite store, on a manual clock. The
//! endpoints and each refusal of the fetcher are the integration suite `client_documents`.

use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::*;
use crate::clock::ManualClock;
use crate::config::RateLimits;
use crate::limits::RefusalMemory;
use crate::outbound::plain_http::PlainHttp;
use crate::outbound::AllowedHosts;
use crate::store::sqlite::SqliteStore;

const NOW: i64 = 1_700_000_000;

/// Each path's answer (raw HTTP) and how long it waits before it; every request's path.
#[derive(Default)]
struct Answers {
    by_path: HashMap<String, (Duration, Vec<u8>)>,
    requested: Vec<String>,
}

struct Fixture {
    documents: ClientDocuments,
    ctx: Context,
    clock: Arc<ManualClock>,
    port: u16,
    answers: Arc<Mutex<Answers>>,
    _dir: tempfile::TempDir,
}

impl Fixture {
    async fn new(timeout: Duration) -> Self {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let answers = Arc::new(Mutex::new(Answers::default()));
        let shared = answers.clone();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let shared = shared.clone();
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut buffer = [0_u8; 1024];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match socket.read(&mut buffer).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buffer[..n]),
                        }
                    }
                    let text = String::from_utf8_lossy(&head);
                    let path = text.split(' ').nth(1).unwrap_or_default().to_owned();
                    let answer = {
                        let mut answers = shared.lock().unwrap();
                        answers.requested.push(path.clone());
                        answers.by_path.get(&path).cloned()
                    };
                    let (delay, bytes) = answer.unwrap_or((
                        Duration::ZERO,
                        b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n".to_vec(),
                    ));
                    tokio::time::sleep(delay).await;
                    let _ = socket.write_all(&bytes).await;
                    let _ = socket.shutdown().await;
                });
            }
        });
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(SqliteStore::open_in_dir(dir.path()).unwrap());
        let clock = Arc::new(ManualClock::new(NOW));
        let ctx = Context::new(store).with_clock(clock.clone());
        let allowed = AllowedHosts::parse(&format!("127.0.0.1:{port}")).unwrap();
        let fetcher = Fetcher::new(allowed, Arc::new(PlainHttp)).with_timeout(timeout);
        Self {
            documents: ClientDocuments::new(true, fetcher),
            ctx,
            clock,
            port,
            answers,
            _dir: dir,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Answers `path` with `status`, `headers` and `body` after `delay`.
    fn answer(&self, path: &str, status: &str, headers: &str, body: &str, delay: Duration) {
        let bytes = format!(
            "HTTP/1.1 {status}\r\ncontent-length: {}\r\n{headers}\r\n{body}",
            body.len()
        );
        self.answers
            .lock()
            .unwrap()
            .by_path
            .insert(path.to_owned(), (delay, bytes.into_bytes()));
    }

    /// A public client's document at `path`, kept `max_age` seconds.
    fn serve_document(&self, path: &str, max_age: u64, extra: &str) {
        let url = self.url(path);
        let body = format!(
            r#"{{"client_id": "{url}", "redirect_uris": ["https://agent.example/cb"],
                "token_endpoint_auth_method": "none"{extra}}}"#
        );
        let headers = format!("cache-control: max-age={max_age}\r\n");
        self.answer(path, "200 OK", &headers, &body, Duration::ZERO);
    }

    fn requests(&self, path: &str) -> usize {
        let answers = self.answers.lock().unwrap();
        answers.requested.iter().filter(|p| *p == path).count()
    }

    async fn client(&self, path: &str) -> Result<Client, DocumentError> {
        let memory = RefusalMemory::default();
        self.client_limited(path, RateLimits::OFF, &memory).await
    }

    /// [`Self::client`] with `limits` counted by `memory`'s limiter.
    async fn client_limited(
        &self,
        path: &str,
        limits: RateLimits,
        memory: &RefusalMemory,
    ) -> Result<Client, DocumentError> {
        let scopes = Scopes::parse("openid profile").unwrap();
        let limiter = Limiter::new(self.ctx.store.rate_limits(), limits, memory, "test");
        self.documents
            .client(&self.ctx, &scopes, limiter, &self.url(path))
            .await
    }
}

/// Fetches count against the request's source address; a kept, fresh document does not, and
/// past the limit nothing is fetched.
#[tokio::test]
async fn fetches_count_per_source_address_and_kept_documents_do_not() {
    let f = Fixture::new(Duration::from_secs(2)).await;
    let limits = RateLimits {
        document_fetches_per_hour: 2,
        ..RateLimits::OFF
    };
    let memory = RefusalMemory::default();
    for path in ["/a.json", "/b.json", "/c.json"] {
        f.serve_document(path, 600, "");
    }
    let from = |address: &str| RequestFacts {
        source_address: Some(address.parse().unwrap()),
        ..RequestFacts::default()
    };
    let here = from("203.0.113.7");
    here.clone()
        .scope(async {
            f.client_limited("/a.json", limits, &memory).await.unwrap();
            f.client_limited("/a.json", limits, &memory).await.unwrap();
            f.client_limited("/b.json", limits, &memory).await.unwrap();
            let refused = f.client_limited("/c.json", limits, &memory).await;
            let Err(DocumentError::Limited(exceeded)) = refused else {
                panic!("the third fetch is refused: {refused:?}");
            };
            assert_eq!(exceeded.limit, Limit::AddressDocumentFetches);
            assert!(exceeded.retry_after > 0 && exceeded.retry_after <= 3600);
            // Kept and fresh: still served, costing nothing.
            f.client_limited("/a.json", limits, &memory).await.unwrap();
        })
        .await;
    assert_eq!(f.requests("/a.json"), 1);
    assert_eq!(f.requests("/c.json"), 0, "nothing fetched past the limit");
    from("198.51.100.9")
        .scope(f.client_limited("/c.json", limits, &memory))
        .await
        .expect("another address has a count of its own");
    assert_eq!(f.requests("/c.json"), 1);
}

#[tokio::test]
async fn a_fresh_document_is_kept_and_a_stale_one_fetched_again() {
    let f = Fixture::new(Duration::from_secs(2)).await;
    f.serve_document("/client.json", 600, "");
    let client = f.client("/client.json").await.unwrap();
    assert_eq!(client.wire_id(), f.url("/client.json"));
    assert_eq!(client.id, ClientId::of_document_url(&f.url("/client.json")));
    assert!(client.is_public() && client.is_self_registered());
    f.clock.advance(599);
    f.client("/client.json").await.unwrap();
    assert_eq!(f.requests("/client.json"), 1, "kept while fresh");
    f.clock.advance(1);
    f.client("/client.json").await.unwrap();
    assert_eq!(f.requests("/client.json"), 2, "fetched again once stale");
}

#[tokio::test]
async fn a_document_gone_is_refused_though_its_client_is_kept_for_pending_sign_ins() {
    let f = Fixture::new(Duration::from_secs(2)).await;
    f.serve_document("/client.json", 300, "");
    let id = f.client("/client.json").await.unwrap().id;
    f.answer("/client.json", "410 Gone", "", "", Duration::ZERO);
    f.clock.advance(300);
    let refused = f.client("/client.json").await.unwrap_err();
    assert!(
        matches!(refused, DocumentError::Unusable(Unusable::Status(status)) if status == 410),
        "{refused:?}"
    );
    // What holds the id only (a sign-in started while it was fresh) still finds it...
    let kept = f.documents.kept(&f.ctx, &id).await.unwrap();
    assert_eq!(kept.map(|c| c.id), Some(id));
    // ... until the stale grace ends.
    f.clock.advance(crate::domain::DOCUMENT_STALE_SECONDS);
    assert_eq!(f.documents.kept(&f.ctx, &id).await.unwrap(), None);
}

#[tokio::test]
async fn keys_at_a_jwks_uri_are_fetched_with_the_document() {
    let f = Fixture::new(Duration::from_secs(2)).await;
    let jwks = r#"{"keys": [{"kty": "EC", "crv": "P-256", "kid": "k1",
        "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
        "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}]}"#;
    f.answer("/jwks.json", "200 OK", "", jwks, Duration::ZERO);
    let extra = format!(
        r#", "token_endpoint_auth_method": "private_key_jwt", "jwks_uri": "{}""#,
        f.url("/jwks.json")
    );
    // The later member wins in serde_json's map: the method is private_key_jwt.
    f.serve_document("/client.json", 300, &extra);
    let client = f.client("/client.json").await.unwrap();
    assert!(client.jwks.is_some());
    assert!(!client.is_public());
    assert_eq!(f.requests("/jwks.json"), 1);

    f.answer(
        "/jwks.json",
        "302 Found",
        "location: /elsewhere\r\n",
        "",
        Duration::ZERO,
    );
    f.clock.advance(300);
    let refused = f.client("/client.json").await.unwrap_err();
    assert!(
        matches!(refused, DocumentError::Unusable(Unusable::KeysStatus(status)) if status == 302),
        "{refused:?}"
    );
    assert_eq!(f.requests("/elsewhere"), 0, "no redirect is followed");
}

#[tokio::test]
async fn the_time_limit_covers_the_document_and_its_keys_together() {
    let f = Fixture::new(Duration::from_millis(500)).await;
    let jwks = r#"{"keys": []}"#;
    f.answer("/jwks.json", "200 OK", "", jwks, Duration::from_millis(300));
    let body = format!(
        r#"{{"client_id": "{}", "redirect_uris": ["https://agent.example/cb"],
            "token_endpoint_auth_method": "private_key_jwt", "jwks_uri": "{}"}}"#,
        f.url("/client.json"),
        f.url("/jwks.json")
    );
    // Each answer alone is within the limit; both together are not.
    f.answer(
        "/client.json",
        "200 OK",
        "",
        &body,
        Duration::from_millis(300),
    );
    let started = std::time::Instant::now();
    let refused = f.client("/client.json").await.unwrap_err();
    assert!(
        matches!(refused, DocumentError::Unusable(Unusable::Timeout)),
        "{refused:?}"
    );
    assert!(started.elapsed() < Duration::from_millis(900));
}

#[tokio::test]
async fn switched_off_nothing_names_a_document_and_nothing_is_kept() {
    let f = Fixture::new(Duration::from_secs(2)).await;
    let off = ClientDocuments::new(false, Fetcher::unconnected());
    assert!(!off.names_document(&f.url("/client.json")));
    assert!(f.documents.names_document(&f.url("/client.json")));
    assert!(!f
        .documents
        .names_document("0e8f3c4a-1b2c-4d5e-8f90-a1b2c3d4e5f6"));
    f.serve_document("/client.json", 300, "");
    let id = f.client("/client.json").await.unwrap().id;
    assert_eq!(off.kept(&f.ctx, &id).await.unwrap(), None);
}
