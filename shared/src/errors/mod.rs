//! Error catalogues of the public endpoints, as data.

mod catalogue;
mod exchange_codes;

pub use catalogue::{ErrorCode, OAuthError};
pub use exchange_codes::ExchangeCode;
