//! The OpenID Connect userinfo endpoint (OpenID Connect Core §5.3), independent of HTTP: the
//! claims about the user (or company) an access token speaks for, as its scopes allow.
//!
//! | scope | claims |
//! |---|---|
//! | `openid` (required) | `sub`, `principal_type` (also in every ID token) |
//! | `profile` | `preferred_username` (the login), `name` (a company's), `company_id` |
//! | `email` | `email`, `email_verified` |

use crate::auth::dpop::{authenticate_credential, AccessDenial, Credential, DpopRequest};
use crate::auth::BearerDenial;
use crate::domain::{PrincipalId, PrincipalType, OPENID};
use crate::errors::{Denial, Refusal};
use crate::services::Services;

const PROFILE: &str = "profile";
const EMAIL: &str = "email";

/// The claims of OpenID Connect Core §5.1 the scopes allow; `None` is left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserInfo {
    pub sub: String,
    pub principal_type: PrincipalType,
    pub preferred_username: Option<String>,
    pub name: Option<String>,
    pub company_id: Option<String>,
    pub email: Option<String>,
    /// Addresses are registered by the company's administrator and already sign the user in by
    /// one-time password: the service vouches for them.
    pub email_verified: Option<bool>,
}

/// Why no claims are answered (RFC 6750 §3.1, RFC 9449 §7.1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UserInfoDenial {
    /// No, malformed, expired, revoked or unknown access token, or a DPoP-bound one presented
    /// as a bearer token: 401 `invalid_token`.
    #[error("{0}")]
    Bearer(BearerDenial),
    /// The `DPoP` scheme: an invalid or unbound token, or a refused proof (401 with a `DPoP`
    /// challenge).
    #[error("{0}")]
    Dpop(AccessDenial),
    /// An application token, or a token without `openid`: 403 `insufficient_scope`, challenged
    /// in the scheme the token came with (`dpop`: the `DPoP` scheme, RFC 9449 §7.1).
    #[error("the token does not carry the openid scope of a user or company")]
    InsufficientScope { dpop: bool },
}

impl Denial for UserInfoDenial {}

impl From<BearerDenial> for UserInfoDenial {
    fn from(denial: BearerDenial) -> Self {
        Self::Bearer(denial)
    }
}

impl From<AccessDenial> for UserInfoDenial {
    fn from(denial: AccessDenial) -> Self {
        match denial {
            AccessDenial::Bearer(denial) => Self::Bearer(denial),
            other => Self::Dpop(other),
        }
    }
}

pub type UserInfoError = Refusal<UserInfoDenial>;

/// The claims for the access token (taken from the `Authorization` header or the form body by
/// the caller; `Err` when neither carried one), with the request's DPoP proof if the token
/// came with the `DPoP` scheme.
pub async fn userinfo(
    services: &Services,
    credential: Result<Credential<'_>, BearerDenial>,
    dpop: &DpopRequest,
) -> Result<UserInfo, UserInfoError> {
    let credential = credential.map_err(UserInfoDenial::Bearer)?;
    let bearer = authenticate_credential(services, credential, dpop)
        .await
        .map_err(Refusal::widen)?;
    let scopes = &bearer.record.scopes;
    if bearer.principal_type() == PrincipalType::Application || !scopes.contains(OPENID) {
        let dpop = matches!(credential, Credential::Dpop(_));
        return Err(UserInfoDenial::InsufficientScope { dpop }.into());
    }
    let principal = PrincipalId::new(bearer.subject());
    let mut info = UserInfo {
        sub: principal.to_string(),
        principal_type: bearer.principal_type(),
        preferred_username: None,
        name: None,
        company_id: None,
        email: None,
        email_verified: None,
    };
    let (profile, email) = (scopes.contains(PROFILE), scopes.contains(EMAIL));
    let principals = services.ctx.store.principals();
    match bearer.principal_type() {
        PrincipalType::User => {
            // A user removed since the token was issued has nobody to describe.
            let user = principals
                .get_user(&principal)
                .await?
                .ok_or(UserInfoDenial::Bearer(BearerDenial::Unknown))?;
            if profile {
                info.preferred_username = Some(user.login.to_string());
                info.company_id = user.company_id.map(|id| id.to_string());
            }
            if email {
                info.email_verified = user.email.as_ref().map(|_| true);
                info.email = user.email;
            }
        }
        PrincipalType::Company if profile => {
            let company = principals
                .get_company(&principal)
                .await?
                .ok_or(UserInfoDenial::Bearer(BearerDenial::Unknown))?;
            info.name = Some(company.name);
            info.company_id = Some(company.id.to_string());
        }
        PrincipalType::Company | PrincipalType::Application => {}
    }
    Ok(info)
}
