//! Why the company auth token endpoint issued nothing: its own file so that the Connect
//! redirect's checks ([`super::connect`]) and the endpoint share it without importing each other.

use crate::auth::BearerDenial;
use crate::domain::PrincipalType;
use crate::errors::{Denial, ErrorCode, GrantError, Refusal};

/// What the endpoint answers instead of an auth token.
pub type CompanyAuthTokenError = Refusal<CompanyAuthTokenDenial>;

/// Why no auth token was issued. Every variant is answered before anything is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompanyAuthTokenDenial {
    /// No, malformed, bad, expired or revoked bearer token.
    Bearer(BearerDenial),
    /// A live token, but a company's or an application's.
    NotAUserToken(PrincipalType),
    /// The token's user no longer exists.
    UserGone,
    /// The token was issued to an app that is not first-party (or no longer exists or is
    /// disabled): a partner app holding an administrator's token cannot mint company tokens.
    NotFirstPartyClient,
    /// The user does not administer the company.
    NotAdministrator,
    /// `COMPANY_ID` is not a UUID, or no such company.
    UnknownCompany,
    /// A catalogue code.
    Catalogue(ErrorCode),
    /// A malformed request outside the catalogue.
    BadRequest(&'static str),
    /// The body is over 16 KiB.
    BodyTooLarge,
}

impl CompanyAuthTokenDenial {
    /// Whether the caller failed to prove who it is (rather than being refused what it asked).
    pub fn is_unauthenticated(self) -> bool {
        matches!(
            self,
            Self::Bearer(_) | Self::NotAUserToken(_) | Self::UserGone
        )
    }
}

/// For the log: why the administrator was refused. Never contains the token.
impl std::fmt::Display for CompanyAuthTokenDenial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Bearer(denial) => denial.fmt(f),
            Self::NotAUserToken(kind) => write!(f, "a {kind} token, not a user's"),
            Self::UserGone => f.write_str("the token's user no longer exists"),
            Self::NotFirstPartyClient => {
                f.write_str("the token was not issued to an enabled first-party client")
            }
            Self::NotAdministrator => f.write_str("not an administrator of the company"),
            Self::UnknownCompany => f.write_str("no such company"),
            Self::Catalogue(code) => write!(f, "code {}", code.code()),
            Self::BadRequest(why) => f.write_str(why),
            Self::BodyTooLarge => f.write_str("body too large"),
        }
    }
}

impl Denial for CompanyAuthTokenDenial {}

impl From<ErrorCode> for CompanyAuthTokenError {
    fn from(code: ErrorCode) -> Self {
        Self::Denied(CompanyAuthTokenDenial::Catalogue(code))
    }
}

/// The grants' company checks (123, 134, 53) keep their catalogue codes here.
impl From<GrantError> for CompanyAuthTokenError {
    fn from(error: GrantError) -> Self {
        error.map_denied(|denial| CompanyAuthTokenDenial::Catalogue(denial.code))
    }
}
