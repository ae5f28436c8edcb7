//! Throughput and latency of the token endpoint over real HTTP, per grant and per store.
//!
//! `infra/bench.sh --per-grant` (or `cargo bench -p integration-tests --bench token_endpoint`).
//! `BENCH_CASES` (comma-separated case names) runs only those: `infra/bench.sh` runs
//! `client_credentials` and `client_credentials+dpop` side by side this way. The DPoP case sends
//! a fresh proof per request (ES256), all signed before the clock starts, so that the figure is
//! the server's work (the proofs stay within their 60-second `iat` window). `BENCH_REQUESTS`
//! (400) sets the requests per case.
//! Runs on SQLite, and on DynamoDB Local too when `DYNAMODB_ENDPOINT` is set. The DynamoDB calls
//! per grant are counted by the round-trip budget tests (`tests/integration/round_trips.rs`),
//! which `infra/bench.sh` also runs. Request loops are bounded and only target the loopback
//! servers this process starts.

// The shared test support (tests/support/), compiled in: this package has no library
// (tests/Cargo.toml). Each target uses a part of it.
#[allow(dead_code, unused_imports)]
#[path = "../support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use crate::support::app::{Backend, TestApp};
use crate::support::dpop::DpopKey;
use futures::stream::{self, StreamExt};

const DEFAULT_REQUESTS: usize = 400;
const CONCURRENCY: usize = 16;
const PASSWORD: &str = "benchmark password";

#[tokio::main]
async fn main() {
    let mut backends = vec![Backend::Sqlite];
    if std::env::var_os("DYNAMODB_ENDPOINT").is_some() {
        backends.push(Backend::DynamoDb);
    } else {
        println!("(DYNAMODB_ENDPOINT unset: SQLite only)");
    }
    let requests = std::env::var("BENCH_REQUESTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(DEFAULT_REQUESTS);
    println!("{requests} requests per case, {CONCURRENCY} in flight\n");
    println!(
        "{:<10} {:<20} {:>9} {:>9} {:>9} {:>9}",
        "store", "case", "req/s", "p50 ms", "p99 ms", "max ms"
    );
    let cases = std::env::var("BENCH_CASES").ok();
    let wanted = |case: &str| {
        cases
            .as_deref()
            .is_none_or(|cases| cases.split(',').any(|c| c.trim() == case))
    };
    for backend in backends {
        let app = TestApp::spawn(backend).await.expect("store available");
        let client = app.create_client("read write").await;
        app.create_user("bench", PASSWORD).await;
        let label = format!("{backend:?}");
        // Each case its own client: the per-client token limit (6,000 a minute) counts each
        // case's requests apart.
        let client_credentials = |client: &crate::support::app::TestClient| {
            let form = vec![
                ("grant_type", "client_credentials".to_owned()),
                ("client_id", client.id.clone()),
                ("client_secret", client.secret.clone()),
            ];
            move |_| form.clone()
        };

        if wanted("client_credentials") {
            let form = client_credentials(&client);
            let report = run(&app, requests, form, |_| None).await;
            print_row(&label, "client_credentials", &report);
        }

        // The same grant with a DPoP proof per request: one more conditional write (its jti).
        if wanted("client_credentials+dpop") {
            let form = client_credentials(&app.create_client("read write").await);
            let key = DpopKey::generate();
            let proofs: Vec<String> = (0..requests).map(|_| key.token_proof(&app)).collect();
            let report = run(&app, requests, form, |i| Some(proofs[i].clone())).await;
            print_row(&label, "client_credentials+dpop", &report);
        }

        if !wanted("password") {
            continue;
        }

        // Password grants are dominated by Argon2id, by design.
        let report = run(
            &app,
            requests,
            |_| {
                vec![
                    ("grant_type", "password".to_owned()),
                    ("client_id", client.id.clone()),
                    ("client_secret", client.secret.clone()),
                    ("username", "bench".to_owned()),
                    ("password", PASSWORD.to_owned()),
                ]
            },
            |_| None,
        )
        .await;
        print_row(&label, "password", &report);

        // Each refresh needs its own live token: mint them first, outside the measurement.
        let mut refresh_tokens = Vec::with_capacity(requests);
        for _ in 0..requests {
            let tokens = app.user_tokens(&client, "bench", PASSWORD).await;
            refresh_tokens.push(tokens["refresh_token"].as_str().unwrap().to_owned());
        }
        let report = run(
            &app,
            requests,
            |i| {
                vec![
                    ("grant_type", "refresh_token".to_owned()),
                    ("client_id", client.id.clone()),
                    ("client_secret", client.secret.clone()),
                    ("refresh_token", refresh_tokens[i].clone()),
                ]
            },
            |_| None,
        )
        .await;
        print_row(&label, "refresh_token", &report);
    }
}

struct Report {
    elapsed: Duration,
    latencies: Vec<Duration>,
}

/// `requests` token requests with `form(i)`, and `proof(i)` as the `DPoP` header when there is
/// one (the proof's `htu` names `/oauth2/v0/token`, so DPoP requests go there).
async fn run(
    app: &TestApp,
    requests: usize,
    form: impl Fn(usize) -> Vec<(&'static str, String)>,
    proof: impl Fn(usize) -> Option<String>,
) -> Report {
    let started = Instant::now();
    let mut latencies: Vec<Duration> = stream::iter(0..requests)
        .map(|i| {
            let form = form(i);
            let proof = proof(i);
            async move {
                let sent = Instant::now();
                let mut request = app.http.post(app.url("/oauth2/v0/token")).form(&form);
                if let Some(proof) = proof {
                    request = request.header("DPoP", proof);
                }
                let response = request.send().await.expect("loopback request");
                assert_eq!(
                    response.status(),
                    200,
                    "{}",
                    response.text().await.unwrap_or_default()
                );
                sent.elapsed()
            }
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    latencies.sort();
    Report {
        elapsed: started.elapsed(),
        latencies,
    }
}

fn print_row(store: &str, case: &str, report: &Report) {
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let pct = |p: f64| {
        report.latencies
            [((report.latencies.len() as f64 * p) as usize).min(report.latencies.len() - 1)]
    };
    println!(
        "{store:<10} {case:<20} {:>9.0} {:>9.1} {:>9.1} {:>9.1}",
        report.latencies.len() as f64 / report.elapsed.as_secs_f64(),
        ms(pct(0.50)),
        ms(pct(0.99)),
        ms(*report.latencies.last().unwrap()),
    );
}
