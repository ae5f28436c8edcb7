//! Storage: one trait, two backends (DynamoDB in production, embedded SQLite locally), and the
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

use async_trait::async_trait;

use crate::clock::UnixTime;
use crate::domain::{
    AccessTokenRecord, AuthToken, Client, ClientId, Company, ConsumerKey, Family, FamilyId,
    LegacyApp, LegacyExchange, LegacyToken, Login, PrincipalId, RefreshTokenRecord, TokenId, User,
};
use crate::secrets::TokenHash;

#[cfg(feature = "conformance")]
pub mod conformance;
pub mod dynamodb;
mod open;
#[cfg(feature = "sqlite")]
pub mod sqlite;

pub use open::open;

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

/// The outcome of an insert that must not overwrite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inserted {
    Inserted,
    AlreadyExists,
}

/// A new token family with its first refresh token and first access token, written at once.
#[derive(Debug, Clone)]
pub struct NewFamily<'a> {
    pub family: &'a Family,
    pub refresh_token: &'a RefreshTokenRecord,
    pub access_token: &'a AccessTokenRecord,
    /// Set by the legacy exchange: in the same write, point the old token at this family and
    /// revoke the family the previous exchange created.
    pub legacy_exchange: Option<LegacyExchangeUpdate>,
}

#[derive(Debug, Clone)]
pub struct LegacyExchangeUpdate {
    pub exchange: LegacyExchange,
    /// The family the caller saw linked (`None`: never exchanged). The write succeeds only if
    /// this is still the link, so two concurrent exchanges cannot both leave a live family.
    pub previous_family: Option<FamilyId>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FamilyCreated {
    Created,
    /// Another exchange of the same legacy token changed the link first; nothing was written.
    LegacyExchangeRaced,
}

/// Replace a family's current refresh token by its successor and record the access token
/// minted with it, at once.
#[derive(Debug, Clone)]
pub struct Rotation<'a> {
    pub family_id: FamilyId,
    /// The refresh token being rotated away; it must be the family's current one.
    pub presented: &'a TokenHash,
    /// Its successor; `successor.expires_at` becomes the family's new expiry.
    pub successor: &'a RefreshTokenRecord,
    pub access_token: &'a AccessTokenRecord,
    pub now: UnixTime,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rotated {
    Rotated,
    /// The presented token is no longer current, or the family is revoked or expired: nothing
    /// was written. Of many concurrent rotations of one token, all but one end here.
    NotCurrent,
}

#[async_trait]
pub trait Store: Send + Sync + std::fmt::Debug {
    // Clients (application management).
    /// Creates or replaces.
    async fn put_client(&self, client: &Client) -> StoreResult<()>;
    async fn get_client(&self, id: &ClientId) -> StoreResult<Option<Client>>;

    // Principals.
    /// Fails with `AlreadyExists` if the id or the login is taken; logins are unique.
    async fn insert_user(&self, user: &User) -> StoreResult<Inserted>;
    /// Replaces an existing user (status changes). The login must not change.
    async fn put_user(&self, user: &User) -> StoreResult<()>;
    async fn get_user(&self, id: &PrincipalId) -> StoreResult<Option<User>>;
    async fn get_user_by_login(&self, login: &Login) -> StoreResult<Option<User>>;
    /// Creates or replaces.
    async fn put_company(&self, company: &Company) -> StoreResult<()>;
    async fn get_company(&self, id: &PrincipalId) -> StoreResult<Option<Company>>;
    /// Idempotent.
    async fn enable_company_for_client(
        &self,
        company: &PrincipalId,
        client: &ClientId,
    ) -> StoreResult<()>;
    async fn is_company_enabled_for_client(
        &self,
        company: &PrincipalId,
        client: &ClientId,
    ) -> StoreResult<bool>;

    // Legacy migration.
    /// Creates or replaces (re-linking a consumer key moves it to another client).
    async fn put_legacy_app(&self, app: &LegacyApp) -> StoreResult<()>;
    async fn get_legacy_app(&self, key: &ConsumerKey) -> StoreResult<Option<LegacyApp>>;
    /// Writes any number of tokens in batches; replaces tokens already imported, so a re-run
    /// of the same import creates no duplicates. All are written when it returns `Ok`.
    async fn put_legacy_tokens(&self, tokens: &[LegacyToken]) -> StoreResult<()>;
    async fn get_legacy_token(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<LegacyToken>>;
    async fn get_legacy_exchange(&self, hash: &TokenHash) -> StoreResult<Option<LegacyExchange>>;

    // Company auth tokens: reusable until they expire, so there is no consume.
    async fn put_auth_token(&self, token: &AuthToken) -> StoreResult<()>;
    async fn get_auth_token(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<AuthToken>>;

    // Token families.
    async fn create_family(&self, new: NewFamily<'_>) -> StoreResult<FamilyCreated>;
    /// Returns revoked families too (reuse detection needs them); expired ones are absent.
    async fn get_family(&self, id: &FamilyId, now: UnixTime) -> StoreResult<Option<Family>>;
    /// Returns rotated tokens too (with `rotated_at`); expired ones are absent.
    async fn get_refresh_token(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<RefreshTokenRecord>>;
    async fn rotate_refresh_token(&self, rotation: Rotation<'_>) -> StoreResult<Rotated>;
    /// Marks the family revoked: its refresh tokens stop working and its access tokens read as
    /// revoked. Returns `false` if there is no such family. Idempotent.
    async fn revoke_family(&self, id: &FamilyId, now: UnixTime) -> StoreResult<bool>;

    // Access tokens.
    /// For application tokens; the other grants write theirs with the family.
    async fn put_access_token(&self, record: &AccessTokenRecord) -> StoreResult<()>;
    /// `revoked` is true in the result if the token's family has been revoked.
    async fn get_access_token(
        &self,
        jti: &TokenId,
        now: UnixTime,
    ) -> StoreResult<Option<AccessTokenRecord>>;

    // Password lockout.
    /// Records one failed password for `login` at `at`, kept until `expires_at`.
    async fn record_failed_login(
        &self,
        login: &Login,
        at: UnixTime,
        expires_at: UnixTime,
    ) -> StoreResult<()>;
    /// Failed passwords for `login` at or after `since`.
    async fn count_failed_logins(&self, login: &Login, since: UnixTime) -> StoreResult<u32>;
}
