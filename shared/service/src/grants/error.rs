//! What a grant answers instead of tokens.

use crate::domain::Geolocation;
use crate::errors::{ErrorCode, ServerError};
use crate::store::StoreError;

#[derive(Debug)]
pub enum GrantError {
    /// A catalogued refusal (4xx).
    Denied(GrantDenial),
    /// Our failure; nothing was issued (5xx).
    Server(ServerError),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantDenial {
    pub code: ErrorCode,
    /// Code 16 names the deployment where the principal lives.
    pub geolocation: Option<Geolocation>,
    /// The client authenticated with HTTP Basic, so a 401 carries `WWW-Authenticate: Basic`.
    pub basic_challenge: bool,
}

impl GrantDenial {
    pub fn new(code: ErrorCode) -> Self {
        Self {
            code,
            geolocation: None,
            basic_challenge: false,
        }
    }
}

impl GrantError {
    pub fn lives_elsewhere(home: Geolocation) -> Self {
        Self::Denied(GrantDenial {
            geolocation: Some(home),
            ..GrantDenial::new(ErrorCode::UserLivesElsewhere)
        })
    }

    /// The catalogue code, if this is a refusal.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            Self::Denied(d) => Some(d.code),
            Self::Server(_) => None,
        }
    }
}

impl From<ErrorCode> for GrantError {
    fn from(code: ErrorCode) -> Self {
        Self::Denied(GrantDenial::new(code))
    }
}

impl From<ServerError> for GrantError {
    fn from(e: ServerError) -> Self {
        Self::Server(e)
    }
}

impl From<StoreError> for GrantError {
    fn from(e: StoreError) -> Self {
        Self::Server(e.into())
    }
}
