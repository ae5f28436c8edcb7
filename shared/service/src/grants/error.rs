//! What a grant answers instead of tokens: a [`Refusal`] with a catalogued [`GrantDenial`].

use crate::domain::Geolocation;
use crate::errors::{Denial, ErrorCode, Refusal};
use crate::flows::dpop::ProofDenial;
use crate::limits::Exceeded;

/// A grant's refusal (4xx with a catalogue code) or our failure (5xx); nothing was issued.
pub type GrantError = Refusal<GrantDenial>;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantDenial {
    pub code: ErrorCode,
    /// Code 16 names the deployment where the principal lives.
    pub geolocation: Option<Geolocation>,
    /// The client authenticated with HTTP Basic, so a 401 carries `WWW-Authenticate: Basic`.
    pub basic_challenge: bool,
    /// A rate limit's refusal: the seconds for `Retry-After`.
    pub retry_after: Option<i64>,
}

impl Denial for GrantDenial {}

impl GrantDenial {
    pub fn new(code: ErrorCode) -> Self {
        Self {
            code,
            geolocation: None,
            basic_challenge: false,
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

/// RFC 9449 §5 and §8: `use_dpop_nonce` for a missing or stale server nonce, otherwise
/// `invalid_dpop_proof`.
impl From<ProofDenial> for GrantDenial {
    fn from(denial: ProofDenial) -> Self {
        GrantDenial::new(match denial {
            ProofDenial::NonceRequired => ErrorCode::UseDpopNonce,
            _ => ErrorCode::InvalidDpopProof,
        })
    }
}

/// A rate limit's refusal: 429 `slow_down` with its own code and `Retry-After`.
impl From<Exceeded> for GrantDenial {
    fn from(exceeded: Exceeded) -> Self {
        Self {
            retry_after: Some(exceeded.retry_after),
            ..GrantDenial::new(exceeded.limit.code())
        }
    }
}
