//! The local server's recorder: every metric in Prometheus text, rendered for `GET /metrics`.

use std::sync::OnceLock;
use std::time::Duration;

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

use token_core::measure::{self, Scrape, LATENCY};

/// Latency buckets in seconds: a token request takes milliseconds, a password grant (Argon2)
/// tens of them, a slow store seconds.
const LATENCY_BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
];

/// How often recorded latencies are folded into the histograms between scrapes, so that a
/// server nobody scrapes does not keep every sample.
const UPKEEP_INTERVAL: Duration = Duration::from_secs(5);

static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();

/// The recorder's configuration: the `function` label and the latency buckets. Tests build
/// recorders of their own from it, so that what they count is theirs alone.
pub fn builder() -> PrometheusBuilder {
    PrometheusBuilder::new()
        .add_global_label("function", "local")
        .set_buckets_for_metric(Matcher::Full(LATENCY.to_owned()), &LATENCY_BUCKETS)
        .expect("the latency buckets are not empty")
}

/// Installs the Prometheus recorder as the process's recorder, once; later calls (tests
/// serving several apps) share it. `None` when another recorder was installed first.
pub fn install() -> Option<&'static PrometheusHandle> {
    HANDLE
        .get_or_init(|| {
            let handle = builder().install_recorder().ok()?;
            let upkeep = handle.clone();
            std::thread::spawn(move || loop {
                std::thread::sleep(UPKEEP_INTERVAL);
                upkeep.run_upkeep();
            });
            measure::cold_start();
            Some(handle)
        })
        .as_ref()
}

/// Every metric in the Prometheus text format; `None` when the recorder is not installed.
pub fn render() -> Option<String> {
    HANDLE.get()?.as_ref().map(PrometheusHandle::render)
}

/// The local server's scrape: the recorder installed (once), rendered on each `GET /metrics`.
#[derive(Debug, Clone, Copy, Default)]
pub struct PrometheusScrape;

impl PrometheusScrape {
    /// Installs the recorder (see [`install`]) and answers the scrape that renders it.
    pub fn installed() -> Self {
        install();
        Self
    }
}

impl Scrape for PrometheusScrape {
    fn render(&self) -> Option<String> {
        render()
    }
}
