//! The EMF lines, parsed and checked against the format's rules: every dimension named in a
//! dimension set and every metric defined is a member of the line, with a value of its kind.

use std::time::Duration;

use http::StatusCode;
use serde_json::Value;

use super::*;
use token_core::measure;

const NOW_MS: u64 = 1_700_000_000_123;

fn recorded(record: impl FnOnce()) -> (EmfRecorder, Vec<Value>) {
    let recorder = EmfRecorder::new("stack-TokenFunction-1");
    metrics::with_local_recorder(&recorder, record);
    let lines = recorder
        .drain_lines(NOW_MS)
        .iter()
        .map(|line| serde_json::from_str(line).expect("each line is one JSON object"))
        .collect();
    (recorder, lines)
}

/// Checks one line against the EMF specification and answers its metric names.
fn assert_valid_emf(line: &Value) -> Vec<String> {
    let aws = &line["_aws"];
    assert_eq!(aws["Timestamp"], NOW_MS, "{line}");
    let directives = aws["CloudWatchMetrics"]
        .as_array()
        .expect("CloudWatchMetrics");
    assert_eq!(directives.len(), 1, "{line}");
    let directive = &directives[0];
    assert_eq!(directive["Namespace"], NAMESPACE, "{line}");
    let sets = directive["Dimensions"].as_array().expect("Dimensions");
    assert!(!sets.is_empty(), "{line}");
    for set in sets {
        let set = set.as_array().expect("a dimension set is an array");
        assert!(set.len() <= 30, "{line}");
        assert_eq!(set[0], "function", "{line}");
        for dimension in set {
            let name = dimension.as_str().expect("a dimension is named");
            assert!(line[name].is_string(), "dimension {name} missing: {line}");
        }
    }
    assert_eq!(line["function"], "stack-TokenFunction-1");
    let definitions = directive["Metrics"].as_array().expect("Metrics");
    assert!(
        !definitions.is_empty() && definitions.len() <= 100,
        "{line}"
    );
    definitions
        .iter()
        .map(|definition| {
            let name = definition["Name"].as_str().expect("Name").to_owned();
            let unit = definition["Unit"].as_str().expect("Unit");
            assert!(["Count", "Seconds", "None"].contains(&unit), "{line}");
            let value = &line[&name];
            let values = value
                .as_array()
                .cloned()
                .unwrap_or_else(|| vec![value.clone()]);
            assert!(!values.is_empty() && values.len() <= 100, "{line}");
            assert!(values.iter().all(Value::is_number), "{name}: {line}");
            name
        })
        .collect()
}

fn line_with<'a>(lines: &'a [Value], metric: &str) -> &'a Value {
    lines
        .iter()
        .find(|line| !line[metric].is_null())
        .unwrap_or_else(|| panic!("no line with {metric}: {lines:?}"))
}

#[test]
fn a_request_is_written_as_valid_emf_with_function_endpoint_and_grant() {
    let (_, lines) = recorded(|| {
        let latency = Duration::from_millis(12);
        measure::request("/v0/token", "password", StatusCode::OK, None, latency);
        measure::request("/v0/token", "password", StatusCode::OK, None, latency);
        measure::request(
            "/v0/token",
            "password",
            StatusCode::BAD_REQUEST,
            Some("5"),
            latency,
        );
        let unavailable = StatusCode::SERVICE_UNAVAILABLE;
        measure::request("/v0/token", "refresh_token", unavailable, None, latency);
        measure::refresh_reuse_detected();
    });
    for line in &lines {
        assert_valid_emf(line);
    }

    let requests = lines
        .iter()
        .find(|l| l["grant"] == "password" && !l[measure::REQUESTS].is_null())
        .expect("the password requests' line");
    assert_eq!(requests[measure::REQUESTS], 3);
    assert_eq!(requests["endpoint"], "/v0/token");
    assert_eq!(requests[measure::LATENCY].as_array().unwrap().len(), 3);
    assert_eq!(
        requests["_aws"]["CloudWatchMetrics"][0]["Dimensions"],
        serde_json::json!([["function", "endpoint", "grant"], ["function"]])
    );
    let refusal = line_with(&lines, measure::REFUSALS);
    assert_eq!(
        (
            refusal["code"].as_str(),
            refusal[measure::REFUSALS].as_u64()
        ),
        (Some("5"), Some(1))
    );
    let unavailable = line_with(&lines, measure::UNAVAILABLE);
    assert_eq!(unavailable["grant"], "refresh_token");
    assert_eq!(unavailable[measure::SERVER_ERRORS], 1);
    let reuse = line_with(&lines, measure::REUSE_DETECTED);
    assert_eq!(
        reuse["_aws"]["CloudWatchMetrics"][0]["Dimensions"],
        serde_json::json!([["function"]])
    );
}

#[test]
fn each_flush_writes_only_what_is_new() {
    let (recorder, lines) = recorded(measure::cold_start);
    assert_eq!(
        line_with(&lines, measure::COLD_STARTS)[measure::COLD_STARTS],
        1
    );
    assert!(recorder.drain_lines(NOW_MS).is_empty());
    metrics::with_local_recorder(&recorder, measure::lockout);
    let again = recorder.drain_lines(NOW_MS);
    assert_eq!(again.len(), 1, "{again:?}");
    assert!(!again[0].contains(measure::COLD_STARTS), "{again:?}");
}

#[test]
fn more_than_a_hundred_samples_are_split_over_lines() {
    let (_, lines) = recorded(|| {
        for _ in 0..250 {
            measure::request("/v0/token", "none", StatusCode::OK, None, Duration::ZERO);
        }
    });
    let samples: usize = lines
        .iter()
        .inspect(|line| {
            assert_valid_emf(line);
        })
        .filter_map(|line| line[measure::LATENCY].as_array().map(Vec::len))
        .sum();
    assert_eq!(samples, 250);
    assert_eq!(lines.len(), 3);
}
