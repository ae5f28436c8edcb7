//! `template.yaml`'s parameters against the service's own defaults: a deployment that keeps a
//! parameter's default must behave as the service does with the variable unset. Read as text
//! (the template's `!Ref` tags are not plain YAML): the `Parameters` section's names and
//! defaults, and the `NAME: !Ref Parameter` lines that hand them to the functions.

use std::collections::BTreeMap;

use super::Config;

const TEMPLATE: &str = include_str!("../../../../template.yaml");

/// Parameters that configure the infrastructure only (no function reads them).
const INFRASTRUCTURE_ONLY: &[&str] = &[
    "LogRetentionDays",
    "ThrottlingBurstLimit",
    "ThrottlingRateLimit",
    "TokenThrottlingBurstLimit",
    "TokenThrottlingRateLimit",
    "SignInThrottlingBurstLimit",
    "SignInThrottlingRateLimit",
    "TableName",
    "ExistingTableName",
    "SigningKeysKmsKeyArn",
    // The EventBridge schedule of the key rotation: it decides when a rotation step runs; the
    // rotation itself takes no period.
    "KeyRotationDays",
    "KeyRotationSchedule",
    // The CloudWatch alarms on the functions' metrics: thresholds and where they notify.
    "AlarmTopicArn",
    "ServerErrorRateAlarmPercent",
    "UnavailableRateAlarmPercent",
    "ReuseDetectedAlarmPerMinute",
    // Whether the HTTP API's own URL answers beside the custom domain.
    "ExecuteApiEndpoint",
];

/// Each parameter's `Default:`, as written (quotes removed).
fn parameter_defaults() -> BTreeMap<&'static str, Option<String>> {
    let section = TEMPLATE
        .split_once("\nParameters:\n")
        .and_then(|(_, rest)| rest.split_once("\nConditions:\n"))
        .expect("a Parameters section followed by Conditions")
        .0;
    let mut parameters = BTreeMap::new();
    let mut current = None;
    for line in section.lines() {
        if let Some(name) = line.strip_prefix("  ").and_then(|l| l.strip_suffix(':')) {
            if !name.starts_with(' ') {
                parameters.insert(name, None);
                current = Some(name);
                continue;
            }
        }
        if let (Some(name), Some(value)) = (current, line.trim().strip_prefix("Default: ")) {
            parameters.insert(name, Some(value.trim_matches('"').to_owned()));
        }
    }
    parameters
}

/// `VARIABLE: !Ref Parameter` lines of the functions' environments.
fn variables_of_parameters() -> BTreeMap<&'static str, &'static str> {
    TEMPLATE
        .lines()
        .filter_map(|line| line.trim().split_once(": !Ref "))
        .filter(|(variable, _)| variable.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
        .map(|(variable, parameter)| (parameter.trim(), variable))
        .collect()
}

fn config_with(variable: &str, value: &str) -> String {
    let config = Config::from_lookup(|name| (name == variable).then(|| value.to_owned()))
        .unwrap_or_else(|e| panic!("{variable}={value}: {e}"));
    format!("{config:?}")
}

#[test]
fn every_parameter_default_is_the_services_own() {
    let defaults = parameter_defaults();
    let variables = variables_of_parameters();
    assert!(defaults.len() > 10, "parsed {defaults:?}");
    let unset = format!("{:?}", Config::from_lookup(|_| None).unwrap());
    for (parameter, default) in &defaults {
        let Some(default) = default else {
            continue;
        };
        if INFRASTRUCTURE_ONLY.contains(parameter) {
            continue;
        }
        let variable = variables
            .get(parameter)
            .unwrap_or_else(|| panic!("{parameter} has a default but reaches no function"));
        if *variable == "RUST_LOG" {
            assert_eq!(default, super::DEFAULT_LOG_DIRECTIVES, "{parameter}");
            continue;
        }
        assert_eq!(
            config_with(variable, default),
            unset,
            "{parameter}'s default {default} differs from the service's default for {variable}"
        );
    }
}

#[test]
fn the_limits_and_the_grace_period_are_parameters() {
    let variables = variables_of_parameters();
    let passed: Vec<&str> = variables.values().copied().collect();
    for variable in [
        "REFRESH_GRACE_SECONDS",
        "RATE_LIMIT_CLIENT_PER_MINUTE",
        "RATE_LIMIT_ADDRESS_PER_MINUTE",
        "RATE_LIMIT_OTP_CLIENT_PER_HOUR",
        "RATE_LIMIT_OTP_FAILURES_PER_HOUR",
        "RATE_LIMIT_REGISTRATIONS_PER_HOUR",
        "RATE_LIMIT_DOCUMENT_FETCHES_PER_HOUR",
        "RATE_LIMIT_SCIM_PER_MINUTE",
        "DYNAMIC_REGISTRATION",
        "REGISTRATION_SCOPES",
    ] {
        assert!(passed.contains(&variable), "{variable} is not a parameter");
    }
}

/// Whatever protects the custom domain (a WAF, an edge) must not be bypassable through the API's
/// own execute-api URL in a stack deployed with the defaults.
#[test]
fn the_execute_api_endpoint_is_off_by_default() {
    assert_eq!(
        parameter_defaults().get("ExecuteApiEndpoint"),
        Some(&Some("disabled".to_owned()))
    );
    assert!(
        TEMPLATE.contains(
            "  ExecuteApiEndpointDisabled: !Equals [!Ref ExecuteApiEndpoint, disabled]\n"
        ),
        "the condition that disables it"
    );
    let api = TEMPLATE
        .split_once("\n  HttpApi:\n")
        .and_then(|(_, rest)| rest.split_once("\n\n"))
        .expect("the HttpApi resource")
        .0;
    assert!(
        api.contains("DisableExecuteApiEndpoint: !If [ExecuteApiEndpointDisabled, true, false]"),
        "the API disables its own endpoint under that condition: {api}"
    );
}

/// The scheduled key rotation runs every 90 days unless told otherwise, with the parameter as
/// its period.
#[test]
fn keys_rotate_every_90_days_by_default() {
    assert_eq!(
        parameter_defaults().get("KeyRotationDays"),
        Some(&Some("90".to_owned()))
    );
    assert!(
        TEMPLATE.contains("ScheduleExpression: !Sub rate(${KeyRotationDays} days)"),
        "the rotation's schedule takes its period from the parameter"
    );
}

/// The alarms watch what the functions emit: the EMF namespace, metric names the service
/// defines, and the `function` dimension alone, which every EMF line carries as a dimension set
/// of its own (`token_adapters::metrics::emf`).
#[test]
fn the_alarms_watch_metrics_the_functions_emit() {
    use crate::measure;
    let emitted = [
        measure::REQUESTS,
        measure::REFUSALS,
        measure::SERVER_ERRORS,
        measure::UNAVAILABLE,
        measure::REUSE_DETECTED,
        measure::RATE_LIMITED,
    ];
    let lines: Vec<&str> = TEMPLATE.lines().map(str::trim).collect();
    let mut alarms = 0;
    for (index, line) in lines.iter().enumerate() {
        if let Some(name) = line.strip_prefix("MetricName: ") {
            alarms += 1;
            assert!(
                emitted.contains(&name),
                "{name} is not a metric the service emits"
            );
            assert_eq!(
                lines[index - 1],
                format!("Namespace: {}", measure::NAMESPACE),
                "{name}'s namespace"
            );
            assert_eq!(lines[index + 1], "Dimensions:", "{name}");
            assert_eq!(
                lines[index + 2],
                "- Name: function",
                "{name}: by function only"
            );
            assert!(
                lines[index + 3].starts_with("Value: !Ref ")
                    && lines[index + 3].ends_with("Function"),
                "{name}: the function's name, as AWS_LAMBDA_FUNCTION_NAME gives it"
            );
        }
    }
    assert!(alarms >= 10, "the alarms were found ({alarms})");
    for name in ["refusals_total", "rate_limited_total"] {
        assert!(
            TEMPLATE.contains(&format!("MetricName=\\\"{name}\\\"")),
            "the dashboard's {name}"
        );
        assert!(emitted.contains(&name));
    }
}

/// A variable the template sets is one the service reads (a renamed variable would otherwise
/// be set in vain, and its default silently apply).
#[test]
fn every_variable_the_template_sets_is_read() {
    let read = super::readme_tests::variables_read();
    let lines = TEMPLATE.lines().map(str::trim);
    let set: Vec<&str> = lines
        .filter_map(|line| line.split_once(": "))
        .map(|(name, _)| name)
        .filter(|name| name.len() > 3 && name.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
        .collect();
    assert!(set.len() > 20, "{set:?}");
    // lambda_http's own: routes see the path without the stage.
    let read_by_libraries = ["AWS_LAMBDA_HTTP_IGNORE_STAGE_IN_PATH"];
    for variable in set.into_iter().filter(|v| !read_by_libraries.contains(v)) {
        assert!(
            read.contains(variable),
            "template.yaml sets {variable}, which nothing reads"
        );
    }
}
