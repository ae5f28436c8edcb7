//! The old-token exchange's codes (spec part 7, contract part 3).

use http::StatusCode;

use super::OAuthError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExchangeCode {
    Ok,
    InvalidScopes,
    InvalidApp,
    InvalidToken,
    Unauthorized,
}

impl ExchangeCode {
    /// The value of the `code` field.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "OK",
            Self::InvalidScopes => "INVALIDSCOPES",
            Self::InvalidApp => "INVALIDAPP",
            Self::InvalidToken => "INVALIDTOKEN",
            Self::Unauthorized => "UNAUTHORIZED",
        }
    }

    /// The RFC 6749 `error` that accompanies a failure code (contract part 3).
    pub fn error(self) -> Option<OAuthError> {
        match self {
            Self::Ok => None,
            Self::InvalidScopes => Some(OAuthError::InvalidScope),
            Self::InvalidApp | Self::Unauthorized => Some(OAuthError::InvalidClient),
            Self::InvalidToken => Some(OAuthError::InvalidGrant),
        }
    }

    /// The meaning column of spec part 7.
    pub fn description(self) -> &'static str {
        match self {
            Self::Ok => "Success",
            Self::InvalidScopes => "Requested scopes are not a subset of the allowed scopes",
            Self::InvalidApp => "Application is invalid",
            Self::InvalidToken => "Bad or expired token",
            Self::Unauthorized => "Invalid credentials",
        }
    }

    /// Every failure is 400, except the unknown consumer key, which the handler answers with
    /// 404 itself (contract part 3).
    pub fn status(self) -> StatusCode {
        match self {
            Self::Ok => StatusCode::OK,
            _ => StatusCode::BAD_REQUEST,
        }
    }
}
