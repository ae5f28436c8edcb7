//! What a grant answers instead of tokens: a [`Refusal`] with a catalogued [`GrantDenial`].
//! (The refusals of DPoP proofs and rate limits convert into it where they are defined.)

use super::{Denial, ErrorCode, Refusal};
use crate::domain::Geolocation;

/// A grant's refusal (4xx with a catalogue code) or our failure (5xx); nothing was issued.
pub type GrantError = Refusal<GrantDenial>;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantDenial {
    pub code: ErrorCode,
    /// Code 16 names the deployment where the principal lives.
    pub geolocation: Option<Geolocation>,
    /// A rate limit's refusal: the seconds for `Retry-After`.
    pub retry_after: Option<i64>,
}

impl Denial for GrantDenial {}

impl GrantDenial {
    pub fn new(code: ErrorCode) -> Self {
        Self {
            code,
            geolocation: None,
            retry_after: None,
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
        self.denial().map(|denial| denial.code)
    }
}

impl From<ErrorCode> for GrantError {
    fn from(code: ErrorCode) -> Self {
        Self::Denied(GrantDenial::new(code))
    }
}
