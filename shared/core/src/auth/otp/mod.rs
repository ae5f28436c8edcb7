//! One-time passwords by e-mail (docs/decisions.md, "One-time passwords"), free of HTTP: the caller
//! has authenticated the client (60-63) and passes the request's fields; these flows answer with a
//! domain result.
//!
//! - [`request_otp`]: validate the channel, cap the requests per address and client, mail a fresh
//!   password, then store only its hash.
//! - [`verify_otp`]: spend a try, compare, check the bound facts, look the address up among the
//!   users, consume; [`check_otp`] leaves the consumption to its caller, after its own writes.
//!
//! The flow runs on ports it does not implement: storage through [`crate::store::OtpStore`],
//! mail through [`crate::mail::Mailer`]. Both depend only on [`crate::domain`] (the address, the
//! password and its hash), never on this module.

mod error;
mod facts;
mod flow;
#[cfg(test)]
mod tests;

pub use error::{OtpDenial, OtpError};
pub use facts::OtpFacts;
pub use flow::{
    check_otp, otp_deps, registered_origins, request_otp, verify_otp, OtpDeps, OtpRequest,
    OtpVerification, VerifiedOtp, MAX_OPEN_REQUESTS, OTP_TRIES, OTP_TTL_SECONDS,
};
