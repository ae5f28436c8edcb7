//! What a grant answers instead of tokens.

use crate::domain::Geolocation;
use crate::errors::ErrorCode;
use crate::store::StoreError;

#[derive(Debug)]
pub enum GrantError {
    /// A catalogued refusal (4xx).
    Denied(Denial),
    /// The store failed; nothing was issued (5xx).
    Store(StoreError),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denial {
    pub code: ErrorCode,
    /// Code 16 names the deployment where the principal lives.
    pub geolocation: Option<Geolocation>,
    /// The client authenticated with HTTP Basic, so a 401 carries `WWW-Authenticate: Basic`.
    pub basic_challenge: bool,
}

impl GrantError {
    pub fn lives_elsewhere(home: Geolocation) -> Self {
        Self::Denied(Denial {
            code: ErrorCode::UserLivesElsewhere,
            geolocation: Some(home),
            basic_challenge: false,
        })
    }

    /// The catalogue code, if this is a refusal.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            Self::Denied(d) => Some(d.code),
            Self::Store(_) => None,
        }
    }
}

impl From<ErrorCode> for GrantError {
    fn from(code: ErrorCode) -> Self {
        Self::Denied(Denial {
            code,
            geolocation: None,
            basic_challenge: false,
        })
    }
}

impl From<StoreError> for GrantError {
    fn from(e: StoreError) -> Self {
        Self::Store(e)
    }
}
