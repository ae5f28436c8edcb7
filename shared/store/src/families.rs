//! Token families: a family, its refresh tokens (rotation, revocation) and the access tokens
//! minted with them, plus application access tokens, which belong to no family.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use super::{Hit, RateKey, RateLimit, StoreResult};
use crate::clock::UnixTime;
use crate::domain::audit::AuditEvent;
use crate::domain::{
    AccessTokenRecord, ClientId, Family, FamilyId, Geolocation, LegacyExchange, PrincipalId,
    PrincipalType, RefreshTokenRecord, Scopes, TokenId,
};
use crate::secrets::TokenHash;

/// What a family is, fixed when it is created. Each of its refresh token records carries a copy
/// where the backend stores records apart (DynamoDB), so that one read of a presented token
/// answers every check a refresh makes before its write; the family's changing state (current
/// token, revocation, expiry) is left to that write's conditions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FamilyOrigin {
    pub client_id: ClientId,
    pub principal_type: PrincipalType,
    pub principal_id: PrincipalId,
    pub scopes: Scopes,
    pub geolocation: Geolocation,
    pub created_at: UnixTime,
    /// The DPoP key the family's refresh tokens are bound to ([`Family::jkt`]); copies written
    /// before the field existed read as unbound, as do their families.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jkt: Option<String>,
    /// [`Family::auth_time`]; copies written before the field existed read as `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_time: Option<UnixTime>,
}

impl From<&Family> for FamilyOrigin {
    fn from(family: &Family) -> Self {
        Self {
            client_id: family.client_id,
            principal_type: family.principal_type,
            principal_id: family.principal_id,
            scopes: family.scopes.clone(),
            geolocation: family.geolocation.clone(),
            created_at: family.created_at,
            jkt: family.jkt.clone(),
            auth_time: family.auth_time,
        }
    }
}

/// A refresh token as [`FamilyStore::get_refresh_token_with_origin`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefreshTokenWithOrigin {
    pub record: RefreshTokenRecord,
    pub origin: FamilyOrigin,
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
    /// Set by the password grant: in the same write, take back the attempt its correct password
    /// counted (as [`super::LockoutStore::refund_login_attempt`] would: nothing if its window
    /// ended, which does not stop the family). Never with `legacy_exchange`.
    pub login_refund: Option<super::LoginRefund>,
    /// Audit events written in the same write (the family's `family.started`): all or nothing.
    pub audit: &'a [AuditEvent],
}

#[derive(Debug, Clone)]
pub struct LegacyExchangeUpdate {
    pub exchange: LegacyExchange,
    /// The family the caller saw linked (`None`: never exchanged). The write succeeds only if
    /// this is still the link, so two concurrent exchanges cannot both leave a live family.
    pub previous_family: Option<FamilyId>,
    /// The previous family's `family.revoked` event: written in the same write, and only if
    /// that write is the one that revokes it (it exists and was not revoked yet).
    pub previous_revoked: Vec<AuditEvent>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FamilyCreated {
    Created,
    /// Created, and the same write revoked the previous exchange's family (with
    /// [`LegacyExchangeUpdate::previous_revoked`]), which was not revoked until then.
    CreatedRevokingPrevious,
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
    /// The family's origin, copied onto the successor's record by backends that keep it there.
    /// `None` writes the successor as records were written before the copy existed: it still
    /// refreshes, at the cost of one more read.
    pub origin: Option<&'a FamilyOrigin>,
    /// Audit events written in the same write, only if the rotation happens.
    pub audit: &'a [AuditEvent],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rotated {
    Rotated,
    /// The presented token is no longer current, or the family is revoked or expired: nothing
    /// was written. Of many concurrent rotations of one token, all but one end here. A backend
    /// that could not tell whether its own write landed (a timeout after sending) reads the
    /// family back: if the successor is current but this rotation's access token is absent,
    /// another request rotated first, which is also this outcome.
    NotCurrent,
}

/// The `sliding` policy (docs/decisions.md, "Refresh tokens"): keep the family's current refresh
/// token, renew its expiry (on the token and the family) and record the access token minted with
/// it, at once.
#[derive(Debug, Clone)]
pub struct Renewal<'a> {
    pub family_id: FamilyId,
    /// Must be the family's current refresh token.
    pub presented: &'a TokenHash,
    pub expires_at: UnixTime,
    pub access_token: &'a AccessTokenRecord,
    pub now: UnixTime,
    /// Audit events written in the same write, only if the renewal happens.
    pub audit: &'a [AuditEvent],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Renewed {
    Renewed,
    /// The token is not the family's current one, or the family is revoked or expired:
    /// nothing was written.
    NotCurrent,
}

/// What [`FamilyStore::revoke_family_recorded`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FamilyRevoked {
    /// This call revoked the family, and wrote its audit events.
    Revoked,
    /// It was revoked before: nothing was written.
    AlreadyRevoked,
    NotFound,
}

#[async_trait]
pub trait FamilyStore: Send + Sync {
    async fn create_family(&self, new: NewFamily<'_>) -> StoreResult<FamilyCreated>;
    /// Returns revoked families too (reuse detection needs them); expired ones are absent.
    async fn get_family(&self, id: &FamilyId, now: UnixTime) -> StoreResult<Option<Family>>;
    /// Returns rotated tokens too (with `rotated_at`); expired ones are absent.
    async fn get_refresh_token(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<RefreshTokenRecord>>;
    /// The refresh token with its family's origin: one read on both backends, whether the token
    /// was rotated or not (a record written without the copy costs a second read of the
    /// family). Expired tokens are absent, and so may be a token whose family is gone. Says
    /// nothing of the family's state: a write that relies on it must be conditional on it.
    async fn get_refresh_token_with_origin(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<RefreshTokenWithOrigin>>;
    /// At most one successor per token: the write is conditional on `presented` being current.
    /// An error means the rotation did not happen as far as the backend could tell after reading
    /// back (`Unavailable`: retrying the same request is safe).
    async fn rotate_refresh_token(&self, rotation: Rotation<'_>) -> StoreResult<Rotated>;
    async fn renew_refresh_token(&self, renewal: Renewal<'_>) -> StoreResult<Renewed>;
    /// Marks the family revoked: its refresh tokens stop working and its access tokens read as
    /// revoked. Returns `false` if there is no such family. Idempotent.
    async fn revoke_family(&self, id: &FamilyId, now: UnixTime) -> StoreResult<bool> {
        Ok(self.revoke_family_recorded(id, now, &[]).await? != FamilyRevoked::NotFound)
    }
    /// [`FamilyStore::revoke_family`] with audit events, written in the same write and only by
    /// the call that revokes a live family (not by a repeat).
    async fn revoke_family_recorded(
        &self,
        id: &FamilyId,
        now: UnixTime,
        audit: &[AuditEvent],
    ) -> StoreResult<FamilyRevoked>;

    // Access tokens.
    /// For application tokens; the other grants write theirs with the family.
    async fn put_access_token(&self, record: &AccessTokenRecord) -> StoreResult<()>;
    /// Counts one hit on `key` (as [`RateLimitStore::count_hit`](super::RateLimitStore::count_hit))
    /// and stores `record` only if the hit was counted. SQLite does both in one write of its
    /// group commit; DynamoDB counts, then puts (two calls, as before: a transaction would cost
    /// twice the write units).
    async fn put_counted_access_token(
        &self,
        record: &AccessTokenRecord,
        key: &RateKey,
        limit: RateLimit,
        now: UnixTime,
    ) -> StoreResult<Hit>;
    /// `revoked` is true in the result if the token's family has been revoked.
    async fn get_access_token(
        &self,
        jti: &TokenId,
        now: UnixTime,
    ) -> StoreResult<Option<AccessTokenRecord>>;
}
