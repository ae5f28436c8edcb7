//! Metrics on both stores: each fact is read from the Prometheus text before and after the flow
//! that causes it. The process's recorder (what `GET /metrics` serves) is shared by every suite
//! running in parallel, so each test here counts into a recorder of its own
//! (`own_recorder`) and asserts exact counts; one test reads the route itself. No metric line
//! holds a secret, a token or a password of the flows run.

pub mod own_recorder;
pub mod scrape;
mod unavailable;

use metrics_exporter_prometheus::PrometheusHandle;
use own_recorder::on_both_stores_counted;

use crate::support::app::{AppOptions, TestApp, TestClient};
use crate::support::assertions::assert_token_error;
use reqwest::StatusCode;
use serde_json::Value;
use token_core::config::{Policy, RateLimits};

use scrape::Scrape;

const PASSWORD: &str = "metrics password 1";

fn client_credentials(client: &TestClient) -> [(&str, &str); 3] {
    [
        ("grant_type", "client_credentials"),
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
    ]
}

async fn refresh(app: &TestApp, client: &TestClient, token: &str) -> (StatusCode, Value) {
    app.token(&[
        ("grant_type", "refresh_token"),
        ("refresh_token", token),
        ("client_id", &client.id),
        ("client_secret", &client.secret),
    ])
    .await
}

on_both_stores_counted!(
    requests_and_refusals_are_counted_by_endpoint_grant_and_code,
    a_retry_within_grace_and_a_reuse_are_counted,
    the_password_that_locks_a_login_counts_one_lockout,
    secrets_added_by_the_app_and_by_an_administrator_are_counted_apart,
);

mod route {
    use super::*;
    crate::on_both_stores!(metrics_are_a_local_route_outside_the_api_document);
}

async fn requests_and_refusals_are_counted_by_endpoint_grant_and_code(
    app: TestApp,
    metrics: PrometheusHandle,
) {
    let client = app.create_client("read").await;
    let token_requests = [
        ("endpoint", "/v0/token"),
        ("grant", "client_credentials"),
        ("function", "local"),
    ];
    let before = Scrape::of_recorder(&metrics);

    let token = app.app_token(&client).await;
    let wrong = [
        ("grant_type", "client_credentials"),
        ("client_id", client.id.as_str()),
        ("client_secret", "not the secret"),
    ];
    let refused = app.token(&wrong).await;
    let code = refused.1["code"].as_u64().expect("a catalogue code");
    assert_eq!(refused.0, StatusCode::UNAUTHORIZED, "{refused:?}");
    let unknown_grant = app.token(&[("grant_type", "nonsense")]).await;
    let unknown_code = unknown_grant.1["code"].as_u64().unwrap();

    let after = Scrape::of_recorder(&metrics);
    after.grew_by(&before, "requests_total", &token_requests, 2.0);
    after.grew_by(
        &before,
        "request_duration_seconds_count",
        &token_requests,
        2.0,
    );
    let code_label = code.to_string();
    let refusal = [
        ("endpoint", "/v0/token"),
        ("grant", "client_credentials"),
        ("code", code_label.as_str()),
    ];
    after.grew_by(&before, "refusals_total", &refusal, 1.0);
    // An unknown grant type is no grant: labelled `none`, never with what the caller sent.
    let unknown_label = unknown_code.to_string();
    let unknown = [("grant", "none"), ("code", unknown_label.as_str())];
    after.grew_by(&before, "refusals_total", &unknown, 1.0);
    assert!(!after.text.contains("nonsense"), "{}", after.text);
    after.assert_holds_none_of(&[&client.secret, &client.id, &token, "not the secret"]);
}

async fn a_retry_within_grace_and_a_reuse_are_counted(app: TestApp, metrics: PrometheusHandle) {
    let client = app.create_client("read").await;
    let login = format!("metrics-reuse-{}", uuid::Uuid::new_v4().simple());
    app.create_user(&login, PASSWORD).await;
    let first = app.user_tokens(&client, &login, PASSWORD).await;
    let first_refresh = first["refresh_token"].as_str().unwrap().to_owned();
    let before = Scrape::of_recorder(&metrics);

    let rotated = refresh(&app, &client, &first_refresh).await;
    assert_eq!(rotated.0, StatusCode::OK, "{rotated:?}");
    let retried = refresh(&app, &client, &first_refresh).await;
    assert_eq!(
        retried.0,
        StatusCode::OK,
        "a retry within grace: {retried:?}"
    );
    let after_retry = Scrape::of_recorder(&metrics);
    after_retry.grew_by(&before, "refresh_retries_within_grace_total", &[], 1.0);
    let refreshes = [("endpoint", "/v0/token"), ("grant", "refresh_token")];
    after_retry.grew_by(&before, "requests_total", &refreshes, 2.0);

    app.clock
        .advance(app.services.policy.refresh_grace_seconds + 1);
    let reused = refresh(&app, &client, &first_refresh).await;
    assert_token_error(&reused, 400, "invalid_grant", 108);
    let after_reuse = Scrape::of_recorder(&metrics);
    after_reuse.grew_by(&after_retry, "refresh_reuse_detected_total", &[], 1.0);
    let refusal = [("grant", "refresh_token"), ("code", "108")];
    after_reuse.grew_by(&after_retry, "refusals_total", &refusal, 1.0);

    let secrets = [
        first_refresh.as_str(),
        first["access_token"].as_str().unwrap(),
        rotated.1["refresh_token"].as_str().unwrap(),
        rotated.1["access_token"].as_str().unwrap(),
        client.secret.as_str(),
        PASSWORD,
        login.as_str(),
    ];
    after_reuse.assert_holds_none_of(&secrets);
}

async fn the_password_that_locks_a_login_counts_one_lockout(
    app: TestApp,
    metrics: PrometheusHandle,
) {
    let client = app.create_client("read").await;
    let login = format!("metrics-lock-{}", uuid::Uuid::new_v4().simple());
    app.create_user(&login, PASSWORD).await;
    let threshold = app.services.policy.lockout_threshold;
    let before = Scrape::of_recorder(&metrics);
    for _ in 0..threshold {
        let answer = app
            .password_grant(&client, &login, "a wrong password", &[])
            .await;
        assert_eq!(answer.1["code"], 5, "{answer:?}");
    }
    let locked = app.password_grant(&client, &login, PASSWORD, &[]).await;
    assert_eq!(locked.1["code"], 14, "locked: {locked:?}");
    let after = Scrape::of_recorder(&metrics);
    after.grew_by(&before, "lockouts_total", &[], 1.0);
    let refusal = [("grant", "password"), ("code", "14")];
    after.grew_by(&before, "refusals_total", &refusal, 1.0);
    after.assert_holds_none_of(&[PASSWORD, "a wrong password", &login, &client.secret]);
}

/// An app adding a secret for itself (what a leaked application token would do first) counts
/// apart from an administrator's addition; a refused addition counts nothing.
async fn secrets_added_by_the_app_and_by_an_administrator_are_counted_apart(
    app: TestApp,
    metrics: PrometheusHandle,
) {
    use crate::client_secrets::api::add;
    let client = app.create_client("read").await;
    let token = app.secrets_token(&client).await;
    let before = Scrape::of_recorder(&metrics);

    let (status, body) = add(&app, &client.id, Some(&token), None).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let id = token_domain::ClientId::parse(&client.id).unwrap();
    token_core::admin::add_client_secret(app.ctx(), &id, None)
        .await
        .unwrap();
    let (status, body) = add(&app, &client.id, Some("not a token"), None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");

    let after = Scrape::of_recorder(&metrics);
    after.grew_by(&before, "client_secrets_added_total", &[("by", "app")], 1.0);
    after.grew_by(
        &before,
        "client_secrets_added_total",
        &[("by", "administrator")],
        1.0,
    );
}

async fn metrics_are_a_local_route_outside_the_api_document(app: TestApp) {
    // The process that installed the recorder started cold once, whatever else it served.
    let served = Scrape::of(&app).await;
    assert!(
        (served.sum("cold_starts_total", &[]) - 1.0).abs() < f64::EPSILON,
        "one cold start: {}",
        served.text
    );
    let response = app.http.get(app.url("/metrics")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(content_type.starts_with("text/plain"), "{content_type}");
    let (_, document) =
        crate::support::app::json_of(app.http.get(app.url("/openapi.json")).send().await.unwrap())
            .await;
    assert!(document["paths"].get("/metrics").is_none());
    // Not served by a Lambda function's router: CloudWatch reads their EMF lines instead.
    let router = token_http::token_router(app.services.clone());
    let request = http::Request::get("/metrics")
        .body(axum::body::Body::empty())
        .unwrap();
    let answer = tower::ServiceExt::oneshot(router, request).await.unwrap();
    assert_eq!(answer.status(), StatusCode::NOT_FOUND);
}

mod rate_limited {
    use super::*;

    pub(crate) fn one_token_a_minute() -> AppOptions {
        AppOptions {
            policy: Policy {
                rate_limits: RateLimits {
                    client_per_minute: 1,
                    ..RateLimits::default()
                },
                ..Policy::default()
            },
            ..AppOptions::default()
        }
    }

    on_both_stores_counted!(with crate::metrics::rate_limited::one_token_a_minute();
        a_429_is_counted_by_its_limit_and_code);

    async fn a_429_is_counted_by_its_limit_and_code(app: TestApp, metrics: PrometheusHandle) {
        let client = app.create_client("read").await;
        let before = Scrape::of_recorder(&metrics);
        app.app_token(&client).await;
        let limited = app.token(&client_credentials(&client)).await;
        assert_token_error(&limited, 429, "slow_down", 140);
        let after = Scrape::of_recorder(&metrics);
        after.grew_by(&before, "rate_limited_total", &[("limit", "client")], 1.0);
        let refusal = [("grant", "client_credentials"), ("code", "140")];
        after.grew_by(&before, "refusals_total", &refusal, 1.0);
        after.assert_holds_none_of(&[&client.secret, &client.id]);
    }
}
