//! DynamoDB throttling (`ProvisionedThroughputExceededException` on every attempt) is an outage
//! like any other to the caller: the 503 of [`assert_unavailable`], and the same request succeeds
//! once DynamoDB answers again.

use crate::support::ddb_proxy::Fault;
use reqwest::StatusCode;

use super::{assert_unavailable, FaultyApp, Outage};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn throttled_dynamodb_answers_503_then_recovers() {
    let Some(app) = FaultyApp::dynamodb(Outage::Everything).await else {
        return;
    };
    let client = app.create_client("read").await;
    let form = [
        ("grant_type", "client_credentials"),
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
    ];
    let proxy = app.proxy();
    proxy.take_calls();
    proxy.inject(Fault::Throttle);
    assert_unavailable("token, throttled", app.post_form("/v0/token", &form).await).await;
    assert_eq!(
        proxy.calls().total(),
        3,
        "the client's read, on each of the SDK's three attempts: {:?}",
        proxy.calls()
    );

    proxy.clear_fault();
    let (status, body) = app.token(&form).await;
    assert_eq!(status, StatusCode::OK, "after the throttling: {body}");
}
