//! AWS Lambda function serving dynamic client registration (RFC 7591) and its management
//! (RFC 7592). A function of its own so that only its role may write whole client items
//! (docs/decisions.md, "Dynamic client registration"). Thin by design: configuration, store,
//! router, run.

use token_adapters::{bootstrap, telemetry};
use token_core::config::Config;
use token_http as http;

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    let config = Config::from_env()?;
    telemetry::init(&config.telemetry);
    let services = bootstrap::lambda_services(&config).await?;
    lambda_http::run(token_adapters::lambda(
        http::registration_router(services),
        &config.telemetry,
    ))
    .await
}
