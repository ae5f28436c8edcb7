//! AWS Lambda function delivering the back-channel logout tokens the token function queues
//! (SQS). Thin by design: configuration, store, run.

use aws_lambda_events::event::sqs::SqsEvent;
use lambda_http::lambda_runtime::{self, service_fn, LambdaEvent};
use token_adapters::{bootstrap, telemetry};
use token_core::config::Config;
use token_core::logout_delivery::sqs;

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    let config = Config::from_env()?;
    telemetry::init(&config.telemetry);
    let deliverer = bootstrap::logout_deliverer(&config).await?;
    lambda_runtime::run(service_fn(|event: LambdaEvent<SqsEvent>| {
        let deliverer = deliverer.clone();
        async move { Ok::<_, lambda_runtime::Error>(sqs::handle_event(&deliverer, event.payload).await) }
    }))
    .await
}
