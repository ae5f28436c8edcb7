//! Token requests at a fixed rate, or as fast as they are answered, with latency percentiles.
//!
//! ```sh
//! fixed-rate --url http://127.0.0.1:PORT/v0/token --authorization "Basic …" \
//!     --form grant_type=client_credentials --connections 32 --seconds 10 [--rate 3000] [--dpop]
//! ```
//!
//! Without `--rate` each connection sends its next request as soon as the last is answered: the
//! most the server answers (`mode=max`). With `--rate` request `i` is due at `start + i / rate`,
//! and its latency runs from that time, not from when a connection was free to send it: a
//! stalled server delays the requests due behind the stall, and they count as slow (wrk2's
//! correction of coordinated omission; plain wrk counts only the one stalled request).
//!
//! The form: `--form BODY` for every request, `--forms FILE` one body per line, each sent once
//! (authorization codes), or `--refresh-tokens FILE`: each connection starts with one line's
//! token and sends the successor each answer gives (every request a first use that rotates
//! its family). `--dpop` adds a fresh proof per request, all signed before the clock starts.
//! Prints one `FIXED_RATE key=value …` line. Loopback benchmarking only: plain HTTP/1.1.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};

/// Proofs signed up front in `max` mode, where the number of requests is not known before.
const MAX_MODE_PROOFS: usize = 60_000;

struct Options {
    url: String,
    host: String,
    path: String,
    authorization: String,
    form: Option<String>,
    forms: Option<String>,
    refresh_tokens: Option<String>,
    dpop: bool,
    connections: usize,
    seconds: f64,
    rate: Option<f64>,
}

/// What every connection's thread shares.
struct Plan {
    options: Options,
    /// The index of the next request: its due time, its form in `forms`, its proof in `proofs`.
    next: AtomicUsize,
    /// No request with this index or above is sent.
    limit: usize,
    forms: Vec<String>,
    proofs: Vec<String>,
    refresh_tokens: Mutex<Vec<String>>,
    start: Instant,
}

#[derive(Default)]
struct Outcome {
    latencies_us: Vec<u32>,
    non_2xx: usize,
    io_errors: usize,
    first_failure: Option<String>,
}

fn main() {
    let options = parse(std::env::args().skip(1).collect()).unwrap_or_else(|e| {
        eprintln!("fixed-rate: {e}");
        std::process::exit(2);
    });
    let read_lines = |path: &str| -> Vec<String> {
        std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("read {path}: {e}"))
            .lines()
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let forms = options.forms.as_deref().map(read_lines).unwrap_or_default();
    let refresh_tokens = options
        .refresh_tokens
        .as_deref()
        .map(read_lines)
        .unwrap_or_default();
    let due = options.rate.map(|rate| (rate * options.seconds) as usize);
    let proofs = if options.dpop {
        let count = due.unwrap_or(MAX_MODE_PROOFS);
        proofs(&options.url, count)
    } else {
        Vec::new()
    };
    let mut limit = due.unwrap_or(usize::MAX);
    if options.forms.is_some() {
        limit = limit.min(forms.len());
    }
    if options.dpop {
        limit = limit.min(proofs.len());
    }
    let connections = options.connections;
    let plan = Arc::new(Plan {
        options,
        next: AtomicUsize::new(0),
        limit,
        forms,
        proofs,
        refresh_tokens: Mutex::new(refresh_tokens),
        start: Instant::now() + Duration::from_millis(200),
    });
    let threads: Vec<_> = (0..connections)
        .map(|_| {
            let plan = Arc::clone(&plan);
            std::thread::spawn(move || connection(&plan))
        })
        .collect();
    let mut total = Outcome::default();
    for thread in threads {
        let outcome = thread.join().expect("a connection's thread");
        total.latencies_us.extend(outcome.latencies_us);
        total.non_2xx += outcome.non_2xx;
        total.io_errors += outcome.io_errors;
        total.first_failure = total.first_failure.or(outcome.first_failure);
    }
    report(&plan, total);
}

/// One connection: takes request indexes until the plan's end, sends each when due.
fn connection(plan: &Plan) -> Outcome {
    let options = &plan.options;
    let mut outcome = Outcome::default();
    let mut conn: Option<TcpStream> = None;
    let mut refresh_token = if options.refresh_tokens.is_some() {
        let token = plan.refresh_tokens.lock().expect("tokens").pop();
        if token.is_none() {
            return outcome;
        }
        token
    } else {
        None
    };
    let end = plan.start + Duration::from_secs_f64(options.seconds);
    loop {
        let i = plan.next.fetch_add(1, Ordering::Relaxed);
        if i >= plan.limit {
            break;
        }
        let due = match options.rate {
            Some(rate) => plan.start + Duration::from_secs_f64(i as f64 / rate),
            None => Instant::now().max(plan.start),
        };
        if options.rate.is_none() && due >= end {
            break;
        }
        let body = match (&refresh_token, &options.form) {
            (Some(token), _) => format!("grant_type=refresh_token&refresh_token={token}"),
            (None, Some(form)) => form.clone(),
            (None, None) => plan.forms[i].clone(),
        };
        let request = request(options, &body, plan.proofs.get(i).map(String::as_str));
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        match send(&mut conn, options, &request) {
            Ok((status, answer)) => {
                let micros = due.elapsed().as_micros().min(u128::from(u32::MAX)) as u32;
                outcome.latencies_us.push(micros);
                if !(200..300).contains(&status) {
                    outcome.non_2xx += 1;
                    outcome.first_failure.get_or_insert_with(|| {
                        format!("{status}: {}", String::from_utf8_lossy(&answer))
                    });
                }
                if refresh_token.is_some() {
                    refresh_token = successor(&answer);
                    if refresh_token.is_none() {
                        break;
                    }
                }
            }
            Err(error) => {
                outcome.io_errors += 1;
                outcome
                    .first_failure
                    .get_or_insert_with(|| error.to_string());
                conn = None;
            }
        }
    }
    outcome
}

fn request(options: &Options, body: &str, proof: Option<&str>) -> Vec<u8> {
    let dpop = proof.map(|p| format!("DPoP: {p}\r\n")).unwrap_or_default();
    format!(
        "POST {} HTTP/1.1\r\nHost: {}\r\nAuthorization: {}\r\nContent-Type: \
         application/x-www-form-urlencoded\r\nContent-Length: {}\r\n{dpop}\r\n{body}",
        options.path,
        options.host,
        options.authorization,
        body.len()
    )
    .into_bytes()
}

/// One request and its answer on the kept-alive connection, (re)connecting when there is none.
fn send(
    conn: &mut Option<TcpStream>,
    options: &Options,
    request: &[u8],
) -> io::Result<(u16, Vec<u8>)> {
    if conn.is_none() {
        let stream = TcpStream::connect(&options.host)?;
        stream.set_nodelay(true)?;
        *conn = Some(stream);
    }
    let stream = conn.as_mut().expect("connected above");
    stream.write_all(request)?;
    let mut buffer = Vec::with_capacity(4096);
    let mut chunk = [0u8; 8192];
    let header_end = loop {
        if let Some(at) = find(&buffer, b"\r\n\r\n") {
            break at + 4;
        }
        let read = stream.read(&mut chunk)?;
        if read == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "connection closed",
            ));
        }
        buffer.extend_from_slice(&chunk[..read]);
    };
    let head = String::from_utf8_lossy(&buffer[..header_end]).to_ascii_lowercase();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "no status line"))?;
    let length: usize = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "no content-length"))?;
    while buffer.len() < header_end + length {
        let read = stream.read(&mut chunk)?;
        if read == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "body cut short",
            ));
        }
        buffer.extend_from_slice(&chunk[..read]);
    }
    if head.contains("\r\nconnection: close") {
        *conn = None;
    }
    Ok((status, buffer[header_end..header_end + length].to_vec()))
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn successor(answer: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(answer).ok()?;
    let (_, rest) = text.split_once("\"refresh_token\":\"")?;
    rest.split('"').next().map(str::to_owned)
}

/// `count` DPoP proofs (RFC 9449) for `POST url`, one key, each with its own `jti`.
fn proofs(url: &str, count: usize) -> Vec<String> {
    let rng = SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).expect("key");
    let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
        .expect("key");
    let point = key.public_key().as_ref();
    let header = URL_SAFE_NO_PAD.encode(format!(
        r#"{{"typ":"dpop+jwt","alg":"ES256","jwk":{{"kty":"EC","crv":"P-256","x":"{}","y":"{}"}}}}"#,
        URL_SAFE_NO_PAD.encode(&point[1..33]),
        URL_SAFE_NO_PAD.encode(&point[33..65])
    ));
    let iat = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    (0..count)
        .map(|_| {
            let mut jti = [0u8; 16];
            rng.fill(&mut jti).expect("random");
            let claims = URL_SAFE_NO_PAD.encode(format!(
                r#"{{"jti":"{}","htm":"POST","htu":"{url}","iat":{iat}}}"#,
                URL_SAFE_NO_PAD.encode(jti)
            ));
            let input = format!("{header}.{claims}");
            let signature = key.sign(&rng, input.as_bytes()).expect("sign");
            format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature.as_ref()))
        })
        .collect()
}

fn report(plan: &Plan, mut total: Outcome) {
    let options = &plan.options;
    total.latencies_us.sort_unstable();
    let n = total.latencies_us.len();
    let ms = |q: f64| {
        if n == 0 {
            return 0.0;
        }
        let rank = ((q * n as f64).ceil() as usize).clamp(1, n);
        f64::from(total.latencies_us[rank - 1]) / 1000.0
    };
    // Called once every connection is done: from the first request to the last answer.
    let seconds = plan.start.elapsed().as_secs_f64();
    let mode = options
        .rate
        .map_or("max".to_owned(), |r| format!("rate rate={r:.0}"));
    println!(
        "FIXED_RATE mode={mode} connections={} requests={n} req_per_s={:.0} non_2xx={} \
         io_errors={} p50_ms={:.2} p90_ms={:.2} p99_ms={:.2} p999_ms={:.2} max_ms={:.2}",
        options.connections,
        n as f64 / seconds,
        total.non_2xx,
        total.io_errors,
        ms(0.50),
        ms(0.90),
        ms(0.99),
        ms(0.999),
        ms(1.0),
    );
    if let Some(failure) = total.first_failure {
        eprintln!("fixed-rate: first failure: {failure}");
    }
}

fn parse(args: Vec<String>) -> Result<Options, String> {
    let value = |name: &str| -> Option<String> {
        args.iter()
            .position(|a| a == name)
            .and_then(|at| args.get(at + 1).cloned())
    };
    let url = value("--url").ok_or("--url is required")?;
    let rest = url
        .strip_prefix("http://")
        .ok_or("--url must be http://HOST:PORT/PATH")?;
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let number = |text: Option<String>, default: f64| -> Result<f64, String> {
        text.map_or(Ok(default), |t| {
            t.parse().map_err(|_| format!("not a number: {t}"))
        })
    };
    let options = Options {
        host: host.to_owned(),
        path: if path.is_empty() { "/" } else { path }.to_owned(),
        authorization: value("--authorization").ok_or("--authorization is required")?,
        form: value("--form"),
        forms: value("--forms"),
        refresh_tokens: value("--refresh-tokens"),
        dpop: args.iter().any(|a| a == "--dpop"),
        connections: number(value("--connections"), 32.0)? as usize,
        seconds: number(value("--seconds"), 10.0)?,
        rate: value("--rate").map(|r| number(Some(r), 0.0)).transpose()?,
        url,
    };
    let sources = [&options.form, &options.forms, &options.refresh_tokens];
    if sources.iter().filter(|s| s.is_some()).count() != 1 {
        return Err("one of --form, --forms and --refresh-tokens is required".into());
    }
    Ok(options)
}
