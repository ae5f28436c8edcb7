//! Token revocation (RFC 7009; docs/decisions.md, "Revocation, introspection and connections") and
//! Concur's connection removal, independent of HTTP.
//!
//! A refresh token revokes its whole family (its refresh tokens and the access tokens they
//! minted); an access token revokes itself only. A token that is unknown, expired, already
//! revoked or issued to another client changes nothing and is answered like a success (RFC 7009
//! §2.2), so the endpoint reveals nothing about other clients' tokens.

use crate::audit;
use crate::auth::dpop::{authenticate_credential, credential, AccessDenial, DpopRequest};
use crate::auth::presented_token::{identify, PresentedToken, TokenTypeHint};
use crate::auth::BearerDenial;
use crate::clock::UnixTime;
use crate::domain::audit::{AuditEvent, AuditKind, RevocationReason};
use crate::domain::{AccessTokenRecord, Client, PrincipalId, PrincipalType};
use crate::errors::{Denial, Refusal, ServerError};
use crate::issuance::FamilyOwner;
use crate::services::Services;
use crate::store::TokenRevoked;

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
            // A token that reads revoked (its own mark, or its family's) is revoked again
            // without a record: this request ended nothing.
            let audit: Vec<AuditEvent> = (!record.revoked)
                .then(|| access_token_revoked(services, &record))
                .into_iter()
                .collect();
            let revoked = store
                .revocation()
                .revoke_access_token_recorded(&record.jti, now, &audit)
                .await?;
            if revoked == TokenRevoked::Revoked {
                audit::logged(&audit);
            }
            Revoked::AccessToken
        }
        PresentedToken::Refresh { record, family, .. } => {
            match &family {
                Some(family) => {
                    services
                        .issuer()
                        .revoke_family_for(
                            record.family_id,
                            family.as_ref().into(),
                            RevocationReason::RevocationEndpoint,
                            None,
                        )
                        .await?;
                }
                // Gone or expired: nothing to record.
                None => {
                    store
                        .families()
                        .revoke_family(&record.family_id, now)
                        .await?;
                }
            }
            Revoked::Family
        }
        PresentedToken::Unknown => Revoked::Nothing,
    })
}

/// The `access_token.revoked` event of `record`: its client, its principal (an application
/// token's is its client), its family if any.
fn access_token_revoked(services: &Services, record: &AccessTokenRecord) -> AuditEvent {
    let kind = AuditKind::AccessTokenRevoked {
        jti: record.jti,
        reason: RevocationReason::RevocationEndpoint,
    };
    let mut event = audit::event(&services.ctx, kind).client(record.client_id);
    if record.principal_type != PrincipalType::Application {
        event = event.principal(record.principal_type, PrincipalId::new(record.subject));
    }
    match record.family_id {
        Some(family) => event.family(family),
        None => event,
    }
}

/// Why `DELETE /app-mgmt/v0/connections` revoked nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConnectionDenial {
    /// No, bad, expired or revoked bearer token, or a DPoP-bound one presented as a bearer
    /// token.
    #[error("{0}")]
    Bearer(BearerDenial),
    /// The `DPoP` scheme: an invalid or unbound token, or a refused proof.
    #[error("{0}")]
    Dpop(AccessDenial),
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

impl From<AccessDenial> for ConnectionDenial {
    fn from(denial: AccessDenial) -> Self {
        match denial {
            AccessDenial::Bearer(denial) => Self::Bearer(denial),
            other => Self::Dpop(other),
        }
    }
}

pub type ConnectionError = Refusal<ConnectionDenial>;

/// `DELETE /app-mgmt/v0/connections`: authenticates the `Authorization` header value and revokes
/// every family the token's principal holds with the token's client, the token's own included.
pub async fn revoke_connection(
    services: &Services,
    authorization: Option<&str>,
    dpop: &DpopRequest,
) -> Result<(), ConnectionError> {
    let credential = authorization
        .ok_or(BearerDenial::Missing)
        .and_then(credential)
        .map_err(ConnectionDenial::Bearer)?;
    let bearer = authenticate_credential(services, credential, dpop)
        .await
        .map_err(Refusal::widen)?;
    if bearer.principal_type() == PrincipalType::Application {
        return Err(ConnectionDenial::ApplicationToken.into());
    }
    tracing::Span::current().record("client_id", tracing::field::display(bearer.client_id()));
    let owner = FamilyOwner {
        client_id: bearer.client_id(),
        principal_type: bearer.principal_type(),
        principal_id: PrincipalId::new(bearer.subject()),
    };
    services
        .issuer()
        .revoke_connection_for(owner, UnixTime::MAX, RevocationReason::ConnectionsEndpoint)
        .await?;
    Ok(())
}
