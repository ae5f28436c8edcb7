//! Why the one-time-password flows refuse a request, and the catalogue code of each.

use crate::errors::{Denial, ErrorCode, Refusal};
use crate::limits::Exceeded;

/// What the flows answer instead of success: a [`OtpDenial`], or our failure (a store or mail
/// server that did not answer: 503).
pub type OtpError = Refusal<OtpDenial>;

#[derive(Debug, thiserror::Error)]
pub enum OtpDenial {
    #[error("channel_type missing")]
    ChannelTypeMissing,
    #[error("channel_handle missing")]
    ChannelHandleMissing,
    #[error("invalid channel type")]
    InvalidChannelType,
    #[error("bad channel handle")]
    BadChannelHandle,
    /// Code 82, `invalid_request`.
    #[error("number of open otp requests has been exceeded")]
    TooManyOpenRequests,
    #[error("otp was not supplied")]
    OtpMissing,
    #[error("otp not found")]
    OtpNotFound,
    #[error("otp verification failed")]
    OtpVerificationFailed,
    #[error("fact verification failed")]
    FactVerificationFailed,
    /// Code 86: the mail's `link` is not on one of the client's registered origins.
    #[error("link is not an address registered for this client")]
    LinkNotRegistered,
    /// A rate limit (429).
    #[error("rate limit exceeded")]
    RateLimited(Exceeded),
    /// After a verified password only: no user has this address.
    #[error("we don't know this email")]
    UnknownEmail,
}

impl Denial for OtpDenial {}

impl From<Exceeded> for OtpDenial {
    fn from(exceeded: Exceeded) -> Self {
        Self::RateLimited(exceeded)
    }
}

impl OtpDenial {
    /// The catalogue entry of this refusal.
    pub fn error_code(&self) -> ErrorCode {
        match self {
            Self::ChannelTypeMissing => ErrorCode::ChannelTypeMissing,
            Self::ChannelHandleMissing => ErrorCode::ChannelHandleMissing,
            Self::InvalidChannelType => ErrorCode::InvalidChannelType,
            Self::BadChannelHandle => ErrorCode::BadChannelHandle,
            Self::TooManyOpenRequests => ErrorCode::TooManyOpenOtpRequests,
            Self::OtpMissing => ErrorCode::OtpMissing,
            Self::OtpNotFound => ErrorCode::OtpNotFound,
            Self::OtpVerificationFailed => ErrorCode::OtpVerificationFailed,
            Self::FactVerificationFailed => ErrorCode::FactVerificationFailed,
            Self::UnknownEmail => ErrorCode::UnknownEmail,
            Self::LinkNotRegistered => ErrorCode::OtpLinkNotRegistered,
            Self::RateLimited(exceeded) => exceeded.limit.code(),
        }
    }
}
