//! What the flows answer instead of success, and the catalogue code of each.

use crate::errors::ErrorCode;
use crate::limits::{Exceeded, LimitError};
use crate::mail::MailError;
use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum OtpError {
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
    /// The mail could not be sent: 503, and no password was stored.
    #[error(transparent)]
    Mail(#[from] MailError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<LimitError> for OtpError {
    fn from(error: LimitError) -> Self {
        match error {
            LimitError::Exceeded(exceeded) => Self::RateLimited(exceeded),
            LimitError::Store(e) => Self::Store(e),
        }
    }
}

impl OtpError {
    /// The catalogue entry of a refusal; `None` for the mail and store failures (503 / 500).
    pub fn error_code(&self) -> Option<ErrorCode> {
        Some(match self {
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
            Self::Mail(_) | Self::Store(_) => return None,
        })
    }
}
