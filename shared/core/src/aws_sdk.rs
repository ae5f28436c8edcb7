//! Secrets Manager, read at start-up with the one AWS SDK configuration
//! ([`token_store::aws_sdk::config_loader`]).

/// A Secrets Manager secret's string value, fetched at start-up. The error carries the SDK's
/// context, never the secret.
pub async fn secret_string(arn: &str) -> Result<String, String> {
    let config = token_store::aws_sdk::config_loader().load().await;
    let output = aws_sdk_secretsmanager::Client::new(&config)
        .get_secret_value()
        .secret_id(arn)
        .send()
        .await
        .map_err(|e| aws_sdk_secretsmanager::error::DisplayErrorContext(e).to_string())?;
    output
        .secret_string
        .ok_or_else(|| "the secret has no string value".to_owned())
}
