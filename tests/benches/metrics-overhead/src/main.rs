//! `cargo run --release -- prometheus|noop [N]`: N requests' worth of metric calls; prints the
//! time per request. Under `valgrind --tool=callgrind`, the instruction counts of the two modes
//! differ by the recorder's cost alone.

use std::time::{Duration, Instant};

use metrics_exporter_prometheus::PrometheusBuilder;

/// As `token_core::measure::request` does for one answered request.
fn request(endpoint: &str, grant: &'static str, latency: Duration) {
    let labels = [
        ("endpoint", endpoint.to_owned()),
        ("grant", grant.to_owned()),
    ];
    metrics::counter!("requests_total", &labels).increment(1);
    metrics::histogram!("request_duration_seconds", &labels).record(latency.as_secs_f64());
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "prometheus".to_owned());
    let n: u32 = args.next().map_or(1_000_000, |n| n.parse().unwrap());
    let handle = (mode == "prometheus").then(|| {
        let handle = PrometheusBuilder::new()
            .add_global_label("function", "local")
            .set_buckets(&[
                0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
            ])
            .unwrap()
            .install_recorder()
            .unwrap();
        handle
    });
    let started = Instant::now();
    for i in 0..n {
        request(
            "/v0/token",
            "client_credentials",
            Duration::from_micros(u64::from(i % 5000)),
        );
        if i % 100_000 == 0 {
            if let Some(handle) = &handle {
                handle.run_upkeep();
            }
        }
    }
    let elapsed = started.elapsed();
    if let Some(handle) = &handle {
        assert!(handle.render().contains("requests_total"));
    }
    println!(
        "{mode}: {n} requests, {:.0} ns each",
        elapsed.as_nanos() as f64 / f64::from(n)
    );
}
