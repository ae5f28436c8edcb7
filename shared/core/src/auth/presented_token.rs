//! What a token presented to the revocation or introspection endpoint is: one of our access
//! tokens, one of our refresh tokens, or neither. Shared by the revocation and introspection
//! flows, which differ only in what they do with the answer, and the token exchange grant.

use crate::clock::UnixTime;
use crate::domain::{AccessTokenRecord, ClientId, Family, RefreshTokenRecord, TokenId};
use crate::errors::ServerError;
use crate::secrets::{Secret, TokenHash};
use crate::services::Services;

/// Which kind to look for first (RFC 7009 §2.1, RFC 7662 §2.1: only a hint; the other kind is
/// searched too when the first finds nothing). Unknown hint values are ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenTypeHint {
    AccessToken,
    RefreshToken,
}

impl TokenTypeHint {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "access_token" => Some(Self::AccessToken),
            "refresh_token" => Some(Self::RefreshToken),
            _ => None,
        }
    }
}

/// A token this deployment issued and still stores, with its stored state (which may be
/// revoked, rotated or expired: the caller decides what that means).
#[derive(Debug, Clone)]
pub enum PresentedToken {
    /// A JWT that verifies with our key ring and whose `jti` is stored. Its `expires_at` is
    /// checked by the codec, so an expired one reads as [`PresentedToken::Unknown`].
    Access(AccessTokenRecord),
    /// A stored refresh token and its family (`None` if the family has expired).
    Refresh {
        record: RefreshTokenRecord,
        hash: TokenHash,
        /// Boxed: a family is most of the enum's size.
        family: Option<Box<Family>>,
    },
    /// Not ours, malformed, expired, or forgotten by the store.
    Unknown,
}

impl PresentedToken {
    /// The client the token was issued to, if it is ours.
    pub fn client_id(&self) -> Option<ClientId> {
        match self {
            Self::Access(record) => Some(record.client_id),
            Self::Refresh { record, .. } => Some(record.client_id),
            Self::Unknown => None,
        }
    }
}

/// Looks the token up as the hint suggests, then as the other kind.
pub async fn identify(
    services: &Services,
    token: &str,
    hint: Option<TokenTypeHint>,
    now: UnixTime,
) -> Result<PresentedToken, ServerError> {
    let order = match hint {
        Some(TokenTypeHint::RefreshToken) => {
            [TokenTypeHint::RefreshToken, TokenTypeHint::AccessToken]
        }
        _ => [TokenTypeHint::AccessToken, TokenTypeHint::RefreshToken],
    };
    for kind in order {
        let found = match kind {
            TokenTypeHint::AccessToken => access_token(services, token, now).await?,
            TokenTypeHint::RefreshToken => refresh_token(services, token, now).await?,
        };
        if !matches!(found, PresentedToken::Unknown) {
            return Ok(found);
        }
    }
    Ok(PresentedToken::Unknown)
}

async fn access_token(
    services: &Services,
    token: &str,
    now: UnixTime,
) -> Result<PresentedToken, ServerError> {
    let Ok(claims) = services.codec.decode(token, now).await? else {
        return Ok(PresentedToken::Unknown);
    };
    let Ok(jti) = TokenId::parse(&claims.jti) else {
        return Ok(PresentedToken::Unknown);
    };
    let Some(record) = services
        .ctx
        .store
        .families()
        .get_access_token(&jti, now)
        .await?
    else {
        return Ok(PresentedToken::Unknown);
    };
    // Signed by us, so these agree unless a record was overwritten; refuse rather than guess.
    let consistent = record.wire_client_id() == claims.client_id
        && record.subject.hyphenated().to_string() == claims.sub;
    Ok(if consistent {
        let revoked = record.revoked || super::bearer::outlived_its_user(services, &record).await?;
        PresentedToken::Access(AccessTokenRecord { revoked, ..record })
    } else {
        PresentedToken::Unknown
    })
}

async fn refresh_token(
    services: &Services,
    token: &str,
    now: UnixTime,
) -> Result<PresentedToken, ServerError> {
    let presented = Secret::new(token);
    let Some(found) = services.issuer().find_refresh_token(&presented).await? else {
        return Ok(PresentedToken::Unknown);
    };
    let record = found.token.record;
    let family = match found.family {
        Some(family) => Some(family),
        None => {
            services
                .ctx
                .store
                .families()
                .get_family(&record.family_id, now)
                .await?
        }
    };
    Ok(PresentedToken::Refresh {
        hash: presented.hash(),
        record,
        family: family.map(Box::new),
    })
}
