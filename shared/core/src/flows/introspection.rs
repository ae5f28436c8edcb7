//! Token introspection (RFC 7662; docs/decisions.md, "Revocation, introspection and connections"),
//! independent of HTTP.
//!
//! A client may introspect the tokens issued to it; any other token (another client's,
//! unknown, malformed, expired, revoked, or a rotated refresh token) reads `{"active": false}`,
//! so the answer never tells a client anything about tokens it does not hold.

use crate::auth::presented_token::{identify, PresentedToken, TokenTypeHint};
use crate::clock::UnixTime;
use crate::domain::{Client, PrincipalType, Scopes};
use crate::errors::ServerError;
use crate::jwt::Audience;
use crate::services::Services;

/// `token_type` of an active access token: its RFC 6749 §5.1 type.
pub const ACCESS_TOKEN_TYPE: &str = "Bearer";
/// `token_type` of an active DPoP-bound access token (RFC 9449 §6.2).
pub const DPOP_ACCESS_TOKEN_TYPE: &str = "DPoP";
/// `token_type` of an active refresh token, which has no §5.1 type: the RFC 7009 hint's name.
pub const REFRESH_TOKEN_TYPE: &str = "refresh_token";

/// What an active token is. Inactive tokens carry nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActiveToken {
    pub scopes: Scopes,
    pub client_id: String,
    /// The principal's UUID (the client's own for application tokens), as in the `sub` claim.
    pub subject: String,
    pub expires_at: UnixTime,
    pub issued_at: UnixTime,
    pub token_type: &'static str,
    pub principal_type: PrincipalType,
    /// The DPoP key thumbprint the token is bound to (`cnf.jkt`).
    pub jkt: Option<String>,
    /// Whom the token is for (`aud`): an access token's claim (this deployment, or the
    /// resources it was asked for); for a refresh token, the resources its family was granted,
    /// if any.
    pub audience: Option<Audience>,
}

/// `POST /oauth2/v0/introspect` after client authentication: `None` means inactive.
pub async fn introspect(
    services: &Services,
    client: &Client,
    token: &str,
    hint: Option<TokenTypeHint>,
) -> Result<Option<ActiveToken>, ServerError> {
    let now = services.ctx.clock.now();
    let presented = identify(services, token, hint, now).await?;
    if presented.client_id() != Some(client.id) {
        return Ok(None);
    }
    Ok(match presented {
        PresentedToken::Access(record) if !record.revoked => Some(ActiveToken {
            audience: Some(Audience::of(&record, services.codec.issuer())),
            client_id: record.wire_client_id(),
            scopes: record.scopes,
            subject: record.subject.hyphenated().to_string(),
            expires_at: record.expires_at,
            issued_at: record.issued_at,
            token_type: if record.jkt.is_some() {
                DPOP_ACCESS_TOKEN_TYPE
            } else {
                ACCESS_TOKEN_TYPE
            },
            principal_type: record.principal_type,
            jkt: record.jkt,
        }),
        // Only the family's current, unrotated token is live; the family holds its expiry,
        // renewed at each use.
        PresentedToken::Refresh {
            record,
            hash,
            family: Some(family),
        } if record.rotated_at.is_none() && family.current_token == hash && family.is_live(now) => {
            Some(ActiveToken {
                scopes: family.scopes,
                // The introspecting client's own token: its `client_id` as it has it (a
                // metadata document's URL, or its UUID).
                client_id: client.wire_id(),
                subject: family.principal_id.to_string(),
                expires_at: family.expires_at,
                issued_at: record.issued_at,
                token_type: REFRESH_TOKEN_TYPE,
                principal_type: family.principal_type,
                audience: match &family.resources[..] {
                    [] => None,
                    [one] => Some(Audience::One(one.to_string())),
                    many => Some(Audience::Many(
                        many.iter().map(ToString::to_string).collect(),
                    )),
                },
                jkt: family.jkt.or(record.jkt),
            })
        }
        _ => None,
    })
}
