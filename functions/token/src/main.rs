//! AWS Lambda function serving the token endpoint and its JWK Set. Thin by design: configuration, store, router, run.

use token_adapters::{bootstrap, telemetry};
use token_core::config::Config;
use token_http as http;

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    let config = Config::from_env()?;
    telemetry::init(&config.telemetry);
    let services = bootstrap::lambda_services(&config).await?;
    lambda_http::run(token_adapters::lambda(
        http::token_router(services),
        &config.telemetry,
    ))
    .await
}
