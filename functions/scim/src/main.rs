//! AWS Lambda function serving SCIM 2.0 provisioning at `/scim/v2`. A function of its own so
//! that only its role may write user records (docs/decisions.md, "SCIM provisioning"). Thin by
//! design: configuration, store, router, run.

use token_adapters::{bootstrap, telemetry};
use token_core::config::Config;
use token_http as http;

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    let config = Config::from_env()?;
    telemetry::init(&config.telemetry);
    let services = bootstrap::lambda_services(&config).await?;
    lambda_http::run(token_adapters::lambda(
        http::scim_router(services),
        &config.telemetry,
    ))
    .await
}
