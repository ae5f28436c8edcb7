//! `METRICS=off` in a Lambda function: the request is served as ever, and no CloudWatch
//! embedded-metric-format line is written (infra/bench.sh compares the two settings'
//! throughput on the local server; this is what the setting means where it is deployed).

use serde_json::Value;

use super::function::RunningFunction;
use super::{http_api_event, Deployment};

/// The lines of the function's output that are embedded-metric-format documents.
fn metric_lines(function: &RunningFunction) -> usize {
    function
        .output()
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|line| line.get("_aws").is_some())
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn metrics_off_writes_no_metric_lines_and_serves_the_same() {
    let Some(deployment) = Deployment::create().await else {
        return;
    };
    let grant = [("grant_type", "client_credentials")];
    let metered = RunningFunction::start("token", &deployment.env).await;
    let unmetered =
        RunningFunction::start_with("token", &deployment.env, &[("METRICS", "off")]).await;
    for function in [&metered, &unmetered] {
        let event = http_api_event("/v0/token", &deployment.basic(), Some(&grant));
        let (answer, _) = function.invoke(event).await;
        assert_eq!(answer.status, 200, "client_credentials: {}", answer.body);
        assert_eq!(answer.body["token_type"], "Bearer");
    }
    // The metered instance shows the lines would be there: each invocation writes them before
    // its answer is posted.
    assert!(metric_lines(&metered) > 0, "{}", metered.output());
    assert_eq!(metric_lines(&unmetered), 0, "{}", unmetered.output());
}
