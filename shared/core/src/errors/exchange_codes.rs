//! The old-token exchange's codes (spec part 7; docs/decisions.md, "Old-token exchange").

use super::OAuthError;

/// The `code` of the exchange's success body.
pub const EXCHANGE_OK: &str = "OK";

/// The exchange's failure codes. Every one is answered with 400, except the unknown consumer
/// key, which the handler answers with 404 itself (docs/decisions.md, "Old-token exchange").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExchangeCode {
    InvalidScopes,
    InvalidApp,
    InvalidToken,
    Unauthorized,
}

impl ExchangeCode {
    /// The value of the `code` field.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidScopes => "INVALIDSCOPES",
            Self::InvalidApp => "INVALIDAPP",
            Self::InvalidToken => "INVALIDTOKEN",
            Self::Unauthorized => "UNAUTHORIZED",
        }
    }

    /// The RFC 6749 `error` that accompanies the code (docs/decisions.md, "Old-token exchange").
    pub fn error(self) -> OAuthError {
        match self {
            Self::InvalidScopes => OAuthError::InvalidScope,
            Self::InvalidApp | Self::Unauthorized => OAuthError::InvalidClient,
            Self::InvalidToken => OAuthError::InvalidGrant,
        }
    }

    /// The meaning column of spec part 7.
    pub fn description(self) -> &'static str {
        match self {
            Self::InvalidScopes => "Requested scopes are not a subset of the allowed scopes",
            Self::InvalidApp => "Application is invalid",
            Self::InvalidToken => "Bad or expired token",
            Self::Unauthorized => "Invalid credentials",
        }
    }
}
