//! One-time passwords by e-mail (contract part 9), free of HTTP: the caller has authenticated the
//! client (60-63) and passes the request's fields; these flows answer with a domain result.
//!
//! - [`request_otp`]: validate the channel, cap the requests per address, mail a fresh password,
//!   then store only its hash.
//! - [`verify_otp`]: spend a try, compare, check the bound facts, look the address up among the
//!   users, consume; [`check_otp`] leaves the consumption to its caller, after its own writes.
//!
//! Storage goes through [`OtpStore`], which both backends implement.

mod channel;
mod error;
mod flow;
mod password;
mod store;
#[cfg(test)]
mod tests;

pub use channel::{AddressKey, ChannelHandle, InvalidChannelHandle};
pub use error::OtpError;
pub use flow::{
    check_otp, request_otp, verify_otp, OtpDeps, OtpRequest, OtpVerification, VerifiedOtp,
    MAX_OPEN_REQUESTS, OTP_TRIES, OTP_TTL_SECONDS, REQUEST_WINDOW_SECONDS,
};
pub use password::{OneTimePassword, OtpHash, OTP_DIGITS};
pub use store::{FactsHash, OtpFacts, OtpId, OtpRecord, OtpStore};
