//! An event that is no store write of ours (here a lockout, found once the password is wrong)
//! is recorded best effort: when its write fails, the request is answered as it would be, the
//! event is still in the `audit` log, and `audit_write_failures_total` counts the failure.

use crate::support::logs::captured_lines_with;
use reqwest::StatusCode;
use uuid::Uuid;

use super::{events_of, names, principal_subject};
use crate::metrics::scrape::Scrape;
use crate::store_unavailable::{FaultyApp, Outage};
use metrics_exporter_prometheus::PrometheusHandle;

/// The proxy refuses transactions, which the lockout's event is written with; the lockout
/// counter's own write (an `UpdateItem`) lands. The apps lock a login at its first wrong
/// password.
#[test]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
fn a_failed_audit_write_is_counted_and_fails_no_request() {
    crate::metrics::own_recorder::counted(a_failed_audit_write_counted_by);
}

async fn a_failed_audit_write_counted_by(metrics: PrometheusHandle) {
    let Some(app) = FaultyApp::dynamodb(Outage::TransactionsRefused).await else {
        return;
    };
    let client = app.create_client("read").await;
    let login = format!("best-effort-{}", Uuid::new_v4().simple());
    let user = app.create_user(&login, "the right password").await;
    let before = Scrape::of_recorder(&metrics);

    let correlation_id = format!("best-effort-{}", Uuid::new_v4());
    let (status, body) = app
        .during_outage(async {
            let response = app
                .http
                .post(app.url("/v0/token"))
                .header("x-correlation-id", &correlation_id)
                .form(&[
                    ("grant_type", "password"),
                    ("client_id", client.id.as_str()),
                    ("client_secret", client.secret.as_str()),
                    ("username", login.as_str()),
                    ("password", "a wrong password"),
                ])
                .send()
                .await
                .unwrap();
            crate::support::app::json_of(response).await
        })
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "answered as ever: {body}");

    let after = Scrape::of_recorder(&metrics);
    after.grew_by(&before, "audit_write_failures_total", &[], 1.0);
    assert!(
        !names(&events_of(&app, principal_subject(user.id)).await).contains(&"login.locked"),
        "not stored"
    );
    let logged = captured_lines_with(&correlation_id);
    assert!(
        logged
            .iter()
            .any(|line| line.contains("\"target\":\"audit\"") && line.contains("login.locked")),
        "still logged: {logged:?}"
    );
}
