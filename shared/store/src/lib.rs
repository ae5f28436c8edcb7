//! The storage layer (crate `token-store`). The domain layer is reached as `crate::domain`.
//!
//! Storage: one trait per aggregate, [`Store`] with one accessor per aggregate, two backends
//! (DynamoDB in production, embedded SQLite locally), and the conformance suite (crate `token-store-conformance`) both must pass.
//! Callers name the aggregate they use: `store.families().get_family(..)`; writes that span
//! aggregates are one [`WriteBatch`], committed by `store.writes().commit(..)`.
//!
//! Rules every backend follows:
//! - Lookups return `Ok(None)` for what is absent, and equally for what is stored but expired:
//!   expiry is checked on every read against the `now` passed in, because DynamoDB's TTL deletes
//!   late (days).
//! - Every expiring item carries `expires_at` (Unix seconds), DynamoDB's TTL attribute.
//! - Writes that belong together (a new family, a rotation, with their audit events) are one
//!   [`WriteBatch`]: all or nothing.
//! - A conditional write that loses is an outcome (`Ok(..)` with a variant saying so), not an
//!   error. Errors are only for the store itself failing.

// Built with neither backend (as token-core links it: the traits and records only), the helpers
// the backends share are unused.
#![cfg_attr(
    not(any(feature = "dynamodb", feature = "sqlite")),
    allow(dead_code, unused_imports)
)]

mod access;
mod audit;
mod auth_tokens;
mod authorization_codes;
#[cfg(feature = "dynamodb")]
pub mod aws_sdk;
mod batch;
pub mod cached;
mod clients;
mod device_authorizations;
mod directory;
mod document_clients;
#[cfg(feature = "dynamodb")]
pub mod dynamodb;
mod error;
mod families;
mod federation;
mod legacy;
mod lockout;
mod open;
mod otp;
mod passkeys;
mod principals;
mod pushed_authorizations;
pub mod rate_limits;
mod registration_tokens;
mod replays;
mod revocation;
mod second_factors;
mod sessions;
pub mod signing_key_ring;
#[cfg(feature = "sqlite")]
pub mod sqlite;

pub use access::{Layered, Store, StoreLayer};
pub use audit::{AuditQuery, AuditStore};
pub use auth_tokens::AuthTokenStore;
pub use authorization_codes::{AuthorizationCodeStore, CodeRedeemed};
pub use batch::{BatchWrites, Committed, Gate, Gated, Part, PartId, WriteBatch, WriteOp};
pub use cached::CachedStore;
pub use clients::ClientStore;
pub use device_authorizations::DeviceAuthorizationStore;
pub use directory::{DirectoryStore, Replaced, UserPage};
pub use document_clients::DocumentClientStore;
pub use error::{Failure, StoreError, StoreResult};
pub use families::{
    revoke_family_recorded, FamilyRevoked, FamilyStore, FamilyWrite, NewFamily, Renewal, Rotation,
};
pub use families::{FamilyOrigin, RefreshTokenWithOrigin};
pub use federation::{FederationStore, IdpInserted, Linked};
pub use legacy::{LegacyLink, LegacyStore};
pub use lockout::{AllowedAttempt, Attempt, AttemptLimit, LockoutStore, LoginRefund};
pub use open::{
    open, open_cold, open_signing_key_ring, open_with_ring, Readiness, StoreKind, StoreLocation,
};
pub use otp::{FactsHash, OtpId, OtpRecord, OtpStore, REQUEST_WINDOW_SECONDS};
pub use passkeys::PasskeyStore;
pub use principals::{EmailUpdate, ExternalIdUpdate, Inserted, PrincipalStore};
pub use pushed_authorizations::PushedAuthorizationStore;
pub use rate_limits::{Hit, RateKey, RateLimit, RateLimitStore};
pub use registration_tokens::RegistrationTokenStore;
pub use replays::{FirstUse, ReplayKey, ReplayStore};
pub use revocation::{AuditFor, Connection, RevocationStore, TokenRevoked};
pub use second_factors::SecondFactorStore;
pub use sessions::{ConsentStore, SessionStore};
pub use signing_key_ring::{RingWrite, SigningKeyRingStore, VersionedRing};

/// For callers: `use crate::prelude::*;` puts [`Store`]'s accessors in scope, also on a
/// concrete backend. An aggregate's methods need no import: they are called on the `&dyn` the
/// accessor returns.
pub mod prelude {
    pub use super::Store;
}

use token_domain as domain;
use token_domain::{clock, secrets};
