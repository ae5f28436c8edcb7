//! The one way this service builds AWS SDK configuration.
//!
//! Every client (DynamoDB here; KMS and Secrets Manager in `token-core`) gets the same HTTPS client: hyper on rustls with the
//! ring crypto provider, the library the signer already links. The SDK's default client would
//! bring rustls on aws-lc, a second cryptography library built from C and assembly, which costs
//! build time and binary size and buys nothing here. Certificates are the system's, as with the
//! default client.

use aws_config::{BehaviorVersion, ConfigLoader};
use aws_smithy_http_client::tls::{rustls_provider::CryptoMode, Provider};
use aws_smithy_http_client::Builder;

/// The SDK's defaults (region, credentials chain, behaviour version) on our HTTPS client.
pub fn config_loader() -> ConfigLoader {
    let https = Builder::new()
        .tls_provider(Provider::Rustls(CryptoMode::Ring))
        .build_https();
    aws_config::defaults(BehaviorVersion::latest()).http_client(https)
}
