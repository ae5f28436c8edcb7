//! `grant_type=client_credentials`: the application token.

use crate::issuance::{requested_scopes, IssuedTokens};

use crate::errors::{ErrorCode, GrantError};

use crate::domain::{Client, GrantType};
use crate::params::TokenParams;
use crate::services::Services;

pub(super) async fn grant(
    services: &Services,
    client: &Client,
    params: &TokenParams,
) -> Result<IssuedTokens, GrantError> {
    if !client.may_use(GrantType::ClientCredentials) {
        return Err(ErrorCode::UnsupportedGrant.into());
    }
    let scopes = requested_scopes(params, &client.allowed_scopes)?;
    let jkt = params.dpop_jkt().map(str::to_owned);
    services
        .issuer()
        .issue_counted_application_token(client, scopes, jkt, services.limiter())
        .await
}

#[cfg(test)]
#[path = "client_credentials_tests.rs"]
mod tests;
