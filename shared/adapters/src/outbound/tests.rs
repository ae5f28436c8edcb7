//! The address rules, each refusal, and what is sent, against raw loopback sockets.

use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use std::net::IpAddr;
use std::time::Duration;

use token_core::outbound::{Resolver, MAX_BODY_BYTES, TIMEOUT};

use super::*;

/// Resolves every name to `answers`, counting lookups.
#[derive(Debug)]
struct FakeResolver {
    answers: Mutex<Vec<Vec<IpAddr>>>,
    lookups: AtomicUsize,
}

impl FakeResolver {
    /// The first lookup answers `first`, later ones `later`.
    fn new(first: &[&str], later: &[&str]) -> Arc<Self> {
        let parse = |list: &[&str]| list.iter().map(|a| a.parse().unwrap()).collect();
        Arc::new(Self {
            answers: Mutex::new(vec![parse(later), parse(first)]),
            lookups: AtomicUsize::new(0),
        })
    }
}

#[async_trait::async_trait]
impl Resolver for FakeResolver {
    async fn resolve(&self, _: &str, _: u16) -> std::io::Result<Vec<IpAddr>> {
        self.lookups.fetch_add(1, Ordering::SeqCst);
        let mut answers = self.answers.lock().unwrap();
        Ok(if answers.len() > 1 {
            answers.pop().unwrap()
        } else {
            answers[0].clone()
        })
    }
}

/// A loopback server answering each connection with `response` (raw HTTP), recording each
/// request's head and body.
async fn server(response: &'static [u8]) -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let log = log.clone();
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buffer = [0_u8; 4096];
                loop {
                    let n = socket.read(&mut buffer).await.unwrap_or(0);
                    request.extend_from_slice(&buffer[..n]);
                    let text = String::from_utf8_lossy(&request).to_string();
                    let complete = text.split_once("\r\n\r\n").is_some_and(|(head, body)| {
                        let length = head
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length: ")
                                    .map(|v| v.trim().parse::<usize>().unwrap())
                            })
                            .unwrap_or(0);
                        body.len() >= length
                    });
                    if n == 0 || complete {
                        log.lock().unwrap().push(text);
                        break;
                    }
                }
                if response.is_empty() {
                    // Never answers.
                    tokio::time::sleep(Duration::from_secs(30)).await;
                } else {
                    let _ = socket.write_all(response).await;
                    let _ = socket.shutdown().await;
                }
            });
        }
    });
    (port, seen)
}

const OK: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";

fn allowing(entries: &str) -> Fetcher {
    fetcher(AllowedHosts::parse(entries).unwrap())
}

#[test]
fn allowed_hosts_are_host_port_pairs() {
    let hosts = AllowedHosts::parse("127.0.0.1:8080, LocalHost:3000 [::1]:9000").unwrap();
    assert!(hosts.allows("127.0.0.1", 8080));
    assert!(hosts.allows("localhost", 3000));
    assert!(hosts.allows("[::1]", 9000));
    assert!(!hosts.allows("127.0.0.1", 8081));
    assert!(AllowedHosts::parse("").unwrap().is_empty());
    for bad in ["localhost", "localhost:http", ":80", "a:70000"] {
        assert!(AllowedHosts::parse(bad).is_err(), "{bad}");
    }
}

#[tokio::test]
async fn http_is_refused_unless_the_host_is_allowed() {
    let (port, seen) = server(OK).await;
    let url = format!("http://127.0.0.1:{port}/logout");
    let refused = fetcher(AllowedHosts::none()).post_form(&url, &[]).await;
    assert!(
        matches!(refused, Err(FetchError::SchemeNotAllowed)),
        "{refused:?}"
    );
    for url in ["ftp://example.com/x", "file:///etc/passwd", "gopher://x/"] {
        let refused = fetcher(AllowedHosts::none()).get(url, "*/*").await;
        assert!(
            matches!(refused, Err(FetchError::SchemeNotAllowed)),
            "{url}"
        );
    }
    assert!(seen.lock().unwrap().is_empty(), "nothing was sent");
}

#[tokio::test]
async fn https_to_an_internal_address_is_refused_before_connecting() {
    let (port, seen) = server(OK).await;
    for host in [
        "127.0.0.1",
        "[::1]",
        "10.0.0.1",
        "169.254.169.254",
        "[::ffff:127.0.0.1]",
        "0.0.0.0",
    ] {
        let url = format!("https://{host}:{port}/logout");
        let refused = fetcher(AllowedHosts::none()).post_form(&url, &[]).await;
        assert!(
            matches!(refused, Err(FetchError::AddressNotAllowed { .. })),
            "{url}: {refused:?}"
        );
    }
    // Decimal and other spellings parse to the same address.
    let refused = fetcher(AllowedHosts::none())
        .get(&format!("https://2130706433:{port}/"), "*/*")
        .await;
    assert!(matches!(refused, Err(FetchError::AddressNotAllowed { .. })));
    assert!(seen.lock().unwrap().is_empty(), "nothing was sent");
}

#[tokio::test]
async fn a_name_with_any_internal_address_is_refused() {
    let resolver = FakeResolver::new(&["93.184.215.14", "10.0.0.7"], &[]);
    let fetcher = super::fetcher(AllowedHosts::none()).with_resolver(resolver);
    let refused = fetcher.post_form("https://rp.example/logout", &[]).await;
    match refused {
        Err(FetchError::AddressNotAllowed { address, why }) => {
            assert_eq!(address, "10.0.0.7".parse::<IpAddr>().unwrap());
            assert_eq!(why, "private");
        }
        other => panic!("{other:?}"),
    }
    let resolver = FakeResolver::new(&["::1"], &[]);
    let fetcher = super::fetcher(AllowedHosts::none()).with_resolver(resolver);
    let refused = fetcher.get("https://localhost.rp.example/", "*/*").await;
    assert!(matches!(
        refused,
        Err(FetchError::AddressNotAllowed {
            why: "loopback",
            ..
        })
    ));
}

#[tokio::test]
async fn an_allowed_host_is_called_over_http_at_the_address_checked_once() {
    let (port, seen) = server(OK).await;
    // Resolved once to the server; a second lookup would give an internal address elsewhere.
    let resolver = FakeResolver::new(&["127.0.0.1"], &["10.9.9.9"]);
    let fetcher = allowing(&format!("rp.test:{port}")).with_resolver(resolver.clone());
    let response = fetcher
        .post_form(
            &format!("http://rp.test:{port}/bcl?tenant=1"),
            &[("logout_token", "a.b.c")],
        )
        .await
        .unwrap();
    assert_eq!(response.status, 200);
    assert_eq!(&response.body[..], b"ok");
    assert_eq!(resolver.lookups.load(Ordering::SeqCst), 1, "one lookup");
    let seen = seen.lock().unwrap();
    let request = &seen[0];
    assert!(
        request.starts_with("POST /bcl?tenant=1 HTTP/1.1\r\n"),
        "{request}"
    );
    assert!(
        request
            .to_ascii_lowercase()
            .contains(&format!("host: rp.test:{port}")),
        "{request}"
    );
    assert!(
        request.contains("application/x-www-form-urlencoded"),
        "{request}"
    );
    assert!(request.ends_with("\r\n\r\nlogout_token=a.b.c"), "{request}");
}

#[tokio::test]
async fn redirects_are_answers_never_followed() {
    let (other, other_seen) = server(OK).await;
    let redirect: &'static [u8] = Box::leak(
        format!(
            "HTTP/1.1 302 Found\r\nlocation: http://127.0.0.1:{other}/\r\ncontent-length: 0\r\n\r\n"
        )
        .into_bytes()
        .into_boxed_slice(),
    );
    let (port, _) = server(redirect).await;
    let fetcher = allowing(&format!("127.0.0.1:{port},127.0.0.1:{other}"));
    let response = fetcher
        .post_form(&format!("http://127.0.0.1:{port}/"), &[])
        .await
        .unwrap();
    assert_eq!(response.status, 302);
    assert!(
        other_seen.lock().unwrap().is_empty(),
        "the redirect was not followed"
    );
}

#[tokio::test]
async fn a_silent_server_times_out() {
    let (port, _) = server(b"").await;
    let fetcher = allowing(&format!("127.0.0.1:{port}")).with_timeout(Duration::from_millis(300));
    let started = std::time::Instant::now();
    let outcome = fetcher
        .get(&format!("http://127.0.0.1:{port}/"), "*/*")
        .await;
    assert!(matches!(outcome, Err(FetchError::Timeout)), "{outcome:?}");
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(TIMEOUT, Duration::from_secs(5), "the production limit");
}

#[tokio::test]
async fn the_body_is_capped() {
    let big: &'static [u8] = Box::leak(
        format!(
            "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{}",
            MAX_BODY_BYTES + 1,
            "x".repeat(MAX_BODY_BYTES + 1)
        )
        .into_bytes()
        .into_boxed_slice(),
    );
    let (port, _) = server(big).await;
    let outcome = allowing(&format!("127.0.0.1:{port}"))
        .get(&format!("http://127.0.0.1:{port}/"), "*/*")
        .await;
    assert!(
        matches!(outcome, Err(FetchError::BodyTooLarge { status }) if status == 200),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn an_unreachable_address_is_a_connection_failure() {
    // A port nothing listens on.
    let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let outcome = allowing(&format!("127.0.0.1:{port}"))
        .get(&format!("http://127.0.0.1:{port}/"), "*/*")
        .await;
    assert!(
        matches!(outcome, Err(FetchError::Connect(_))),
        "{outcome:?}"
    );
}
