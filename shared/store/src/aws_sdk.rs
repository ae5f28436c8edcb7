//! The one way this service builds AWS SDK configuration.
//!
//! Every client (DynamoDB here; KMS, SQS and Secrets Manager in `token-core`) gets the same
//! HTTPS client: hyper on rustls with the ring crypto provider, the library the signer already
//! links. The SDK's default client would bring rustls on aws-lc, a second cryptography library
//! built from C and assembly, which costs build time and binary size and buys nothing here.
//! Certificates are the system's, as with the default client.

use aws_config::environment::credentials::EnvironmentVariableCredentialsProvider;
use aws_config::environment::region::EnvironmentVariableRegionProvider;
use aws_config::meta::credentials::CredentialsProviderChain;
use aws_config::meta::region::RegionProviderChain;
use aws_config::profile::ProfileFileCredentialsProvider;
use aws_config::provider_config::ProviderConfig;
use aws_config::{BehaviorVersion, ConfigLoader, Region};
use aws_sdk_dynamodb::config::Credentials;
use aws_sdk_dynamodb::config::SharedHttpClient;
use aws_smithy_http_client::tls::{rustls_provider::CryptoMode, Provider};
use aws_smithy_http_client::Builder;

/// The region of an emulator when the environment names none.
pub const LOCAL_REGION: &str = "us-east-1";

/// The SDK's defaults (region, credentials chain, behaviour version) on our HTTPS client.
pub fn config_loader() -> ConfigLoader {
    aws_config::defaults(BehaviorVersion::latest()).http_client(https_client())
}

fn https_client() -> SharedHttpClient {
    Builder::new()
        .tls_provider(Provider::Rustls(CryptoMode::Ring))
        .build_https()
}

/// [`config_loader`] for a client of `service`, sent to `endpoint` when one is configured
/// (`DYNAMODB_ENDPOINT`, `KMS_ENDPOINT`, `SQS_ENDPOINT`).
///
/// The one rule for such an endpoint (docs/decisions.md, "Local endpoints"): it is an emulator,
/// so local use needs no AWS setup and nothing ever asks an instance-metadata service. The
/// region is the environment's (`AWS_REGION`, else `AWS_DEFAULT_REGION`), else
/// [`LOCAL_REGION`]; the credentials are the environment's (both `AWS_ACCESS_KEY_ID` and
/// `AWS_SECRET_ACCESS_KEY`), else a profile's (`AWS_PROFILE` or the default profile of the
/// shared files), else the dummy `local`/`local`. The SDK reads those standard variables
/// itself. Without an endpoint, the SDK's default chains apply unchanged.
pub fn loader_for(endpoint: Option<&str>, service: &'static str) -> ConfigLoader {
    let loader = config_loader();
    let Some(endpoint) = endpoint else {
        return loader;
    };
    let region = RegionProviderChain::first_try(EnvironmentVariableRegionProvider::new())
        .or_else(Region::new(LOCAL_REGION));
    let credentials = CredentialsProviderChain::first_try(
        "Environment",
        EnvironmentVariableCredentialsProvider::new(),
    )
    .or_else("Profile", profile_credentials())
    .or_else(
        "Local",
        Credentials::new("local", "local", None, None, service),
    );
    loader
        .endpoint_url(endpoint)
        .region(region)
        .credentials_provider(credentials)
}

/// A profile's credentials (SSO and `credential_process` profiles included), fetched over our
/// HTTPS client too.
fn profile_credentials() -> ProfileFileCredentialsProvider {
    let config = ProviderConfig::default().with_http_client(https_client());
    ProfileFileCredentialsProvider::builder()
        .configure(&config)
        .build()
}
