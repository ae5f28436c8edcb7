//! Token revocation (RFC 7009; docs/decisions.md, "Revocation, introspection and connections") and
//! Concur's connection removal, independent of HTTP.
//!
//! A refresh token revokes its whole family (its refresh tokens and the access tokens they
//! minted); an access token revokes itself only. A token that is unknown, expired, already
//! revoked or issued to another client changes nothing and is answered like a success (RFC 7009
//! §2.2), so the endpoint reveals nothing about other clients' tokens.

use super::presented_token::{identify, PresentedToken, TokenTypeHint};
use crate::domain::{Client, PrincipalId, PrincipalType};
use crate::errors::{Denial, Refusal, ServerError};
use crate::grants::{authenticate_bearer, BearerDenial};
use crate::services::Services;

/// What revocation did, for the request log; the caller answers 200 either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revoked {
    Family,
    AccessToken,
    /// Unknown, expired, or another client's: nothing changed.
    Nothing,
}

/// `POST /oauth2/v0/revoke` after client authentication.
pub async fn revoke_token(
    services: &Services,
    client: &Client,
    token: &str,
    hint: Option<TokenTypeHint>,
) -> Result<Revoked, ServerError> {
    let now = services.ctx.clock.now();
    let presented = identify(services, token, hint, now).await?;
    if presented.client_id() != Some(client.id) {
        return Ok(Revoked::Nothing);
    }
    let store = &services.ctx.store;
    Ok(match presented {
        PresentedToken::Access(record) => {
            store
                .revocation()
                .revoke_access_token(&record.jti, now)
                .await?;
            Revoked::AccessToken
        }
        PresentedToken::Refresh { record, .. } => {
            store
                .families()
                .revoke_family(&record.family_id, now)
                .await?;
            Revoked::Family
        }
        PresentedToken::Unknown => Revoked::Nothing,
    })
}

/// Why `DELETE /app-mgmt/v0/connections` revoked nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ConnectionDenial {
    /// No, bad, expired or revoked bearer token.
    #[error("{0}")]
    Bearer(BearerDenial),
    /// An application token speaks for no user or company: there is no connection to remove.
    #[error("application tokens have no connection")]
    ApplicationToken,
}

impl Denial for ConnectionDenial {}

impl From<BearerDenial> for ConnectionDenial {
    fn from(denial: BearerDenial) -> Self {
        Self::Bearer(denial)
    }
}

pub type ConnectionError = Refusal<ConnectionDenial>;

/// `DELETE /app-mgmt/v0/connections`: authenticates the `Authorization` header value and revokes
/// every family the token's principal holds with the token's client, the token's own included.
pub async fn revoke_connection(
    services: &Services,
    authorization: Option<&str>,
) -> Result<(), ConnectionError> {
    let bearer = authenticate_bearer(services, authorization)
        .await
        .map_err(Refusal::widen)?;
    if bearer.principal_type() == PrincipalType::Application {
        return Err(ConnectionDenial::ApplicationToken.into());
    }
    tracing::Span::current().record("client_id", tracing::field::display(bearer.client_id()));
    let principal = PrincipalId::new(bearer.subject());
    let now = services.ctx.clock.now();
    services
        .ctx
        .store
        .revocation()
        .revoke_connection(&principal, &bearer.client_id(), now)
        .await?;
    Ok(())
}
