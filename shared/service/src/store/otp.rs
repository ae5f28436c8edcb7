//! One-time passwords (contract part 9). The trait and its records live with the flows that
//! define their rules ([`crate::otp`]); this is their place among the store's aggregates.

pub use crate::otp::{FactsHash, OtpId, OtpRecord, OtpStore};
