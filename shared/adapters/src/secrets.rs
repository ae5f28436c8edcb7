//! Secrets Manager, read at start-up with the one AWS SDK configuration
//! ([`token_store::aws_sdk::config_loader`]).

use token_core::signing::{SecretRef, SecretStore};

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

/// The secret store of `token_core::signing` on Secrets Manager.
#[derive(Debug, Clone, Copy, Default)]
pub struct SecretsManager;

#[async_trait::async_trait]
impl SecretStore for SecretsManager {
    async fn secret_string(&self, arn: &str) -> Result<String, String> {
        secret_string(arn).await
    }
}

/// The signing keys' secret (`SIGNING_KEYS_SECRET_ARN`), read from Secrets Manager.
pub fn signing_secret(arn: Option<&String>) -> Option<SecretRef> {
    arn.map(|arn| SecretRef {
        arn: arn.clone(),
        store: std::sync::Arc::new(SecretsManager),
    })
}
