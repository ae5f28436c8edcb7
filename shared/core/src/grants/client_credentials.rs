//! `grant_type=client_credentials`: the application token.

use super::GrantContext;
use crate::errors::GrantError;
use crate::issuance::{requested_scopes, IssuedTokens};
use crate::requests::ClientCredentialsRequest;
use crate::services::Services;

pub(super) async fn grant(
    services: &Services,
    context: &GrantContext,
    request: ClientCredentialsRequest,
) -> Result<IssuedTokens, GrantError> {
    let client = &context.client;
    let scopes = requested_scopes(request.scope.as_deref(), &client.allowed_scopes)?;
    let audience = context.requested_resources(services)?;
    services
        .issuer()
        .issue_counted_application_token(
            client,
            scopes,
            (context.dpop_jkt.clone(), audience),
            services.limiter(),
        )
        .await
}

#[cfg(test)]
#[path = "client_credentials_tests.rs"]
mod tests;
