//! `GET /metrics` read back: each sample's name, labels and value.

use crate::support::app::TestApp;
use reqwest::StatusCode;

pub struct Scrape {
    pub text: String,
    samples: Vec<Sample>,
}

/// A sample's name, labels and value.
type Sample = (String, Vec<(String, String)>, f64);

impl Scrape {
    pub async fn of(app: &TestApp) -> Self {
        let response = app.http.get(app.url("/metrics")).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        Self::parse(response.text().await.unwrap())
    }

    /// What a test's own recorder holds (`own_recorder`): no other test's counts.
    pub fn of_recorder(recorder: &metrics_exporter_prometheus::PrometheusHandle) -> Self {
        Self::parse(recorder.render())
    }

    fn parse(text: String) -> Self {
        let samples = text
            .lines()
            .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
            .map(|line| {
                let (series, value) = line.rsplit_once(' ').expect("name and value");
                let value: f64 = value.parse().expect("a number");
                let (name, labels) = match series.split_once('{') {
                    Some((name, rest)) => (name, labels_of(rest.trim_end_matches('}'))),
                    None => (series, Vec::new()),
                };
                (name.to_owned(), labels, value)
            })
            .collect();
        Self { text, samples }
    }

    /// The sum of the samples named `name` that carry every label of `labels`.
    pub fn sum(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.samples
            .iter()
            .filter(|(n, l, _)| {
                n == name
                    && labels
                        .iter()
                        .all(|(k, v)| l.iter().any(|(lk, lv)| lk == k && lv == v))
            })
            .map(|(_, _, value)| value)
            .sum()
    }

    /// Exactly `by` more: for a test's own recorder, where nothing else counts.
    #[track_caller]
    pub fn grew_by(&self, before: &Self, name: &str, labels: &[(&str, &str)], by: f64) {
        let (was, is) = (before.sum(name, labels), self.sum(name, labels));
        assert!(
            (is - was - by).abs() < f64::EPSILON,
            "{name}{labels:?}: {was} then {is}, expected exactly {by} more:\n{}",
            self.text
        );
    }

    /// No secret of the flows run in any metric line (named by position, not printed).
    #[track_caller]
    pub fn assert_holds_none_of(&self, secrets: &[&str]) {
        for (i, secret) in secrets.iter().enumerate() {
            assert!(!secret.is_empty(), "secret #{i} is empty");
            assert!(
                !self.text.contains(secret),
                "secret #{i} (of {}) in the metrics",
                secrets.len()
            );
        }
    }
}

/// `a="x",b="y"`: label values hold no quote or comma here (bounded, known sets).
fn labels_of(text: &str) -> Vec<(String, String)> {
    text.split("\",")
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once("=\"").expect("key=\"value\"");
            (key.to_owned(), value.trim_end_matches('"').to_owned())
        })
        .collect()
}
