//! Error catalogues of the public endpoints, as data, and the server-side failure every route
//! answers the same way.

mod catalogue;
mod exchange_codes;
mod server;

pub use catalogue::{ErrorCode, OAuthError};
pub use exchange_codes::ExchangeCode;
pub use server::ServerError;
