//! Storage: one trait per aggregate, [`Store`] their sum, two backends (DynamoDB in production, embedded SQLite locally), and the
//! conformance suite both must pass.
//!
//! Rules every backend follows:
//! - Lookups return `Ok(None)` for what is absent, and equally for what is stored but expired:
//!   expiry is checked on every read against the `now` passed in, because DynamoDB's TTL deletes
//!   late (days).
//! - Every expiring item carries `expires_at` (Unix seconds), DynamoDB's TTL attribute.
//! - Writes that belong together (a new family, a rotation) are one atomic write: all or nothing.
//! - A conditional write that loses is an outcome (`Ok(..)` with a variant saying so), not an
//!   error. Errors are only for the store itself failing.

mod auth_tokens;
mod authorization_codes;
pub mod cached;
mod clients;
#[cfg(any(test, feature = "conformance"))]
pub mod conformance;
pub mod dynamodb;
mod families;
mod legacy;
mod lockout;
mod open;
mod otp;
mod principals;
mod revocation;
#[cfg(feature = "sqlite")]
pub mod sqlite;

pub use auth_tokens::AuthTokenStore;
pub use authorization_codes::{AuthorizationCodeStore, CodeRedeemed};
pub use cached::CachedStore;
pub use clients::ClientStore;
pub use families::{
    FamilyCreated, FamilyStore, LegacyExchangeUpdate, NewFamily, Renewal, Renewed, Rotated,
    Rotation,
};
pub use families::{FamilyOrigin, RefreshTokenWithOrigin};
pub use legacy::LegacyStore;
pub use lockout::{AllowedAttempt, Attempt, AttemptLimit, LockoutStore};
pub use open::open;
pub use otp::{FactsHash, OtpId, OtpRecord, OtpStore, REQUEST_WINDOW_SECONDS};
pub use principals::{EmailUpdate, Inserted, PrincipalStore};
pub use revocation::RevocationStore;

/// The store traits, for callers: `use crate::store::prelude::*;` puts every aggregate's methods
/// in scope.
pub mod prelude {
    pub use super::AuthorizationCodeStore;
    pub use super::OtpStore;
    pub use super::{
        AuthTokenStore, ClientStore, FamilyStore, LegacyStore, LockoutStore, PrincipalStore,
        RevocationStore, Store,
    };
}

pub type StoreResult<T> = Result<T, StoreError>;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Timed out, throttled after retries, or unreachable: the caller answers 503, and the
    /// request may succeed later.
    #[error("store temporarily unavailable: {0}")]
    Unavailable(String),
    /// Anything else (a malformed item, a schema mismatch): the caller answers 500.
    #[error("store failure: {0}")]
    Internal(String),
}

/// The whole store: every aggregate. Callers that need one aggregate take its trait instead
/// (the legacy import takes a [`LegacyStore`]); `&dyn Store` upcasts to each of them.
pub trait Store:
    ClientStore
    + PrincipalStore
    + LegacyStore
    + AuthTokenStore
    + FamilyStore
    + LockoutStore
    + OtpStore
    + AuthorizationCodeStore
    + RevocationStore
    + std::fmt::Debug
    + Send
    + Sync
{
}

impl<T> Store for T where
    T: ClientStore
        + PrincipalStore
        + LegacyStore
        + AuthTokenStore
        + FamilyStore
        + LockoutStore
        + OtpStore
        + AuthorizationCodeStore
        + RevocationStore
        + std::fmt::Debug
        + Send
        + Sync
        + ?Sized
{
}
