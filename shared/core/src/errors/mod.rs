//! Error catalogues of the public endpoints, as data; the one shape of every flow's error
//! ([`Refusal`]); and the server-side failure every route answers the same way.

mod catalogue;
mod exchange_codes;
mod grant;
mod refusal;
mod server;

pub use catalogue::{ErrorCode, OAuthError};
pub use exchange_codes::{ExchangeCode, EXCHANGE_OK};
pub use grant::{GrantDenial, GrantError};
pub use refusal::{Denial, Refusal};
pub use server::{Cause, ServerError};
