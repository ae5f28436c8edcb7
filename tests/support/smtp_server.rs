//! A real SMTP server on loopback for the mail tests: `mailin-embedded` (plain SMTP, no TLS) on a
//! port the system picks, keeping every message it accepts in memory. Its threads live until the
//! test process exits.

use std::io;
use std::net::{SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use mailin_embedded::{response, Handler, Response, Server};

/// One accepted message: its envelope and its raw RFC 5322 text.
#[derive(Debug, Clone)]
pub struct ReceivedMail {
    pub envelope_from: String,
    pub envelope_to: Vec<String>,
    pub raw: String,
}

impl ReceivedMail {
    /// The value of the first top-level header `name` (unfolded).
    pub fn header(&self, name: &str) -> Option<String> {
        let head = self.raw.split("\r\n\r\n").next().unwrap_or_default();
        let unfolded = head.replace("\r\n ", " ").replace("\r\n\t", " ");
        unfolded.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name)
                .then(|| value.trim().to_owned())
        })
    }

    /// The decoded body of the first MIME part whose `Content-Type` starts with `content_type`
    /// (`text/plain`, `text/html`), undoing quoted-printable or base64.
    pub fn part(&self, content_type: &str) -> Option<String> {
        let boundary = self
            .header("Content-Type")?
            .split(';')
            .find_map(|param| param.trim().strip_prefix("boundary="))
            .map(|b| b.trim_matches('"').to_owned())?;
        self.raw
            .split(&format!("--{boundary}"))
            .filter_map(|part| part.trim_start_matches("\r\n").split_once("\r\n\r\n"))
            .find(|(headers, _)| {
                headers.lines().any(|line| {
                    line.to_ascii_lowercase()
                        .starts_with(&format!("content-type: {content_type}"))
                })
            })
            .map(|(headers, body)| decode_body(headers, body))
    }
}

fn decode_body(headers: &str, body: &str) -> String {
    let encoding = headers
        .lines()
        .find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case("Content-Transfer-Encoding")
                .then(|| value.trim().to_ascii_lowercase())
        })
        .unwrap_or_default();
    match encoding.as_str() {
        "base64" => {
            let compact: String = body.split_whitespace().collect();
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(compact)
                .expect("base64 part");
            String::from_utf8(bytes).expect("UTF-8 part")
        }
        "quoted-printable" => decode_quoted_printable(body),
        _ => body.to_owned(),
    }
}

fn decode_quoted_printable(body: &str) -> String {
    let joined = body.replace("=\r\n", "");
    let mut bytes = Vec::with_capacity(joined.len());
    let mut rest = joined.as_bytes();
    while let Some((&first, tail)) = rest.split_first() {
        let escaped = (first == b'=')
            .then(|| tail.get(..2))
            .flatten()
            .and_then(|hex| u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok());
        match escaped {
            Some(byte) => {
                bytes.push(byte);
                rest = &tail[2..];
            }
            None => {
                bytes.push(first);
                rest = tail;
            }
        }
    }
    String::from_utf8(bytes).expect("UTF-8 part")
}

/// A running server and what it has received.
#[derive(Debug, Clone)]
pub struct SmtpServer {
    pub address: SocketAddr,
    received: Arc<Mutex<Vec<ReceivedMail>>>,
}

impl SmtpServer {
    /// `smtp://127.0.0.1:PORT`, for `SMTP_URL`.
    pub fn url(&self) -> String {
        format!("smtp://{}", self.address)
    }

    pub fn received(&self) -> Vec<ReceivedMail> {
        self.received.lock().unwrap().clone()
    }

    /// Waits until at least `count` messages have arrived, and returns them all; panics after
    /// 10 s, so that a test never goes on with an older mail (and an older password).
    pub async fn wait_for(&self, count: usize) -> Vec<ReceivedMail> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let received = self.received();
            if received.len() >= count {
                return received;
            }
            assert!(
                Instant::now() < deadline,
                "the SMTP server on {} received {} messages within 10 s, not {count}",
                self.address,
                received.len()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// Starts a server that accepts every message.
pub fn start_smtp_server() -> SmtpServer {
    start(Verdict::Accept)
}

/// Starts a server that refuses every recipient permanently (550), as a relay refuses an
/// address it will not deliver to.
pub fn start_refusing_smtp_server() -> SmtpServer {
    start(Verdict::Refuse)
}

#[derive(Debug, Clone, Copy)]
enum Verdict {
    Accept,
    Refuse,
}

fn start(verdict: Verdict) -> SmtpServer {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let address = listener.local_addr().expect("bound address");
    let received = Arc::new(Mutex::new(Vec::new()));
    let handler = Recorder {
        verdict,
        received: Arc::clone(&received),
        current: None,
    };
    let mut server = Server::new(handler);
    server
        .with_name("smtp.test")
        .with_num_threads(2)
        .with_tcp_listener(listener);
    std::thread::spawn(move || {
        if let Err(error) = server.serve() {
            eprintln!("test SMTP server on {address} stopped: {error}");
        }
    });
    SmtpServer { address, received }
}

/// One clone per connection (mailin-embedded's model); the message in progress is per
/// connection, the received list is shared.
#[derive(Clone)]
struct Recorder {
    verdict: Verdict,
    received: Arc<Mutex<Vec<ReceivedMail>>>,
    current: Option<ReceivedMail>,
}

impl Handler for Recorder {
    fn data_start(&mut self, _domain: &str, from: &str, _is8bit: bool, to: &[String]) -> Response {
        self.current = Some(ReceivedMail {
            envelope_from: from.to_owned(),
            envelope_to: to.to_vec(),
            raw: String::new(),
        });
        response::OK
    }

    fn data(&mut self, buf: &[u8]) -> io::Result<()> {
        if let Some(mail) = self.current.as_mut() {
            mail.raw.push_str(&String::from_utf8_lossy(buf));
        }
        Ok(())
    }

    fn rcpt(&mut self, _to: &str) -> Response {
        match self.verdict {
            Verdict::Refuse => response::NO_MAILBOX,
            Verdict::Accept => response::OK,
        }
    }

    fn data_end(&mut self) -> Response {
        self.received.lock().unwrap().extend(self.current.take());
        response::OK
    }
}
