//! `grant_type=client_credentials`: the application token.
//!
//! A token for the app's own secrets API (part 13) is asked for by naming
//! [`SECRETS_MANAGEMENT_SCOPE`]: every confidential client may, without registering it, but it is
//! never a default. Such a token lives [`SECRETS_MANAGEMENT_TTL_SECONDS`], its audience is this
//! deployment, and it carries the scopes named, none added: a token sent to resource servers
//! never manages the app's secrets, and one that does is useful for minutes.

use super::GrantContext;
use crate::domain::{Scopes, SECRETS_MANAGEMENT_SCOPE};
use crate::errors::{ErrorCode, GrantError};
use crate::issuance::{requested_scopes, IssuedTokens};
use crate::requests::ClientCredentialsRequest;
use crate::services::Services;

/// The lifetime of a token that manages the app's secrets.
pub const SECRETS_MANAGEMENT_TTL_SECONDS: i64 = 300;

pub(super) async fn grant(
    services: &Services,
    context: &GrantContext,
    request: ClientCredentialsRequest,
) -> Result<IssuedTokens, GrantError> {
    let client = &context.client;
    let named = request.scope.as_deref().map(Scopes::parse);
    let manages_secrets =
        matches!(&named, Some(Ok(scopes)) if scopes.contains(SECRETS_MANAGEMENT_SCOPE));
    if manages_secrets {
        if client.is_public() {
            return Err(ErrorCode::ScopeExceedsGrant.into());
        }
        let grantable = client.allowed_scopes.with(SECRETS_MANAGEMENT_SCOPE);
        let scopes = requested_scopes(request.scope.as_deref(), &grantable)?;
        // The audience is this deployment: no resource server accepts it.
        return services
            .issuer()
            .issue_counted_application_token(
                client,
                scopes,
                (context.dpop_jkt.clone(), Vec::new()),
                Some(SECRETS_MANAGEMENT_TTL_SECONDS),
                services.limiter(),
            )
            .await;
    }
    let scopes = requested_scopes(request.scope.as_deref(), &client.allowed_scopes)?;
    let audience = context.requested_resources(services)?;
    services
        .issuer()
        .issue_counted_application_token(
            client,
            scopes,
            (context.dpop_jkt.clone(), audience),
            None,
            services.limiter(),
        )
        .await
}

#[cfg(test)]
#[path = "client_credentials_tests.rs"]
mod tests;
