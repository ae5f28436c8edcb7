//! AWS Lambda function that rotates the signing key ring on a schedule (EventBridge). Thin by
//! design: configuration, one rotation per invocation.

use lambda_http::lambda_runtime::{self, service_fn, LambdaEvent};
use token_adapters::{bootstrap, telemetry};
use token_core::config::Config;

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    let config = Config::from_env()?;
    telemetry::init(&config.telemetry);
    lambda_runtime::run(service_fn(|_: LambdaEvent<serde_json::Value>| {
        let config = config.clone();
        async move { Ok::<_, lambda_runtime::Error>(bootstrap::rotate_keys(&config).await?) }
    }))
    .await
}
