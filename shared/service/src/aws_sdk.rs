//! The one way this service builds AWS SDK configuration.
//!
//! Every client (DynamoDB, KMS, Secrets Manager) gets the same HTTPS client: hyper on rustls with
//! the ring crypto provider, the library the signer already links. The SDK's default client would
//! bring rustls on aws-lc, a second cryptography library built from C and assembly, which costs
//! build time and binary size and buys nothing here. Certificates are the system's, as with the
//! default client.
//!
//! The configuration is loaded once per process and every client derives its own from it
//! (endpoint, timeouts, retries): each load resolves the region and builds an HTTPS client
//! whose first connection reads the system's certificates, which at a Lambda cold start was
//! paid once per client (docs/decisions.md, "One SDK configuration per process").

use aws_config::{BehaviorVersion, SdkConfig};
use aws_smithy_http_client::tls::{rustls_provider::CryptoMode, Provider};
use aws_smithy_http_client::Builder;
use tokio::sync::OnceCell;

static SHARED: OnceCell<SdkConfig> = OnceCell::const_new();

/// The SDK's defaults (region, credentials chain, behaviour version) on our HTTPS client,
/// loaded by the first caller; concurrent first callers wait for the same load.
pub async fn shared_config() -> &'static SdkConfig {
    SHARED
        .get_or_init(|| async {
            let https = Builder::new()
                .tls_provider(Provider::Rustls(CryptoMode::Ring))
                .build_https();
            aws_config::defaults(BehaviorVersion::latest())
                .http_client(https)
                .load()
                .await
        })
        .await
}

/// A Secrets Manager secret's string value, fetched at start-up. The error carries the SDK's
/// context, never the secret.
pub async fn secret_string(arn: &str) -> Result<String, String> {
    let output = aws_sdk_secretsmanager::Client::new(shared_config().await)
        .get_secret_value()
        .secret_id(arn)
        .send()
        .await
        .map_err(|e| aws_sdk_secretsmanager::error::DisplayErrorContext(e).to_string())?;
    output
        .secret_string
        .ok_or_else(|| "the secret has no string value".to_owned())
}
