//! Token families: a family, its refresh tokens (rotation, revocation) and the access tokens
//! minted with them, plus application access tokens, which belong to no family.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use super::{Committed, Store, StoreResult, WriteBatch};
use crate::clock::UnixTime;
use crate::domain::audit::AuditEvent;
use crate::domain::{
    AccessTokenRecord, AuthMethod, ClientId, Family, FamilyId, Geolocation, IdpId, PrincipalId,
    PrincipalType, RefreshTokenRecord, Resource, Scopes, SessionId, TokenId,
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
    /// [`Family::sid`]; absent likewise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sid: Option<SessionId>,
    /// [`Family::amr`]; empty likewise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub amr: Vec<AuthMethod>,
    /// [`Family::idp`]; absent likewise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idp: Option<IdpId>,
    /// [`Family::resources`]: what a refresh may name. Absent: none granted, as in copies
    /// written before the field existed, whose families had none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<Resource>,
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
            sid: family.sid.clone(),
            amr: family.amr.clone(),
            idp: family.idp,
            resources: family.resources.clone(),
        }
    }
}

/// A refresh token as [`FamilyStore::get_refresh_token_with_origin`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefreshTokenWithOrigin {
    pub record: RefreshTokenRecord,
    pub origin: FamilyOrigin,
}

/// A new token family with its first access token and, for a first refresh token that does not
/// name its family, that token's record. Their ids must be free (an integrity condition, not an
/// outcome).
#[derive(Debug, Clone)]
pub struct NewFamily {
    pub family: Family,
    /// `None` for a first token that names its family ([`crate::domain::RefreshTokenName`]):
    /// its lookup reads the family, whose `current_token` and expiry are all a record would
    /// hold (docs/decisions.md, "What a refresh writes"). `Some`: a record under its digest, as
    /// every first token had before tokens named their family.
    pub refresh_token: Option<RefreshTokenRecord>,
    pub access_token: AccessTokenRecord,
}

/// Replace a family's current refresh token by its successor and record the access token
/// minted with it.
#[derive(Debug, Clone)]
pub struct Rotation {
    pub family_id: FamilyId,
    /// The refresh token being rotated away; it must be the family's current one.
    pub presented: TokenHash,
    /// Its successor, which names its family ([`crate::domain::RefreshTokenName`]) and so gets
    /// no record: its digest becomes the family's `current_token`, `successor.expires_at` the
    /// family's expiry, `successor.jkt` its `current_jkt`.
    pub successor: RefreshTokenRecord,
    pub access_token: AccessTokenRecord,
    pub now: UnixTime,
}

/// The `sliding` policy (docs/decisions.md, "Refresh tokens"): keep the family's current refresh
/// token, renew its expiry (on the token and the family) and record the access token minted with
/// it.
#[derive(Debug, Clone)]
pub struct Renewal {
    pub family_id: FamilyId,
    /// Must be the family's current refresh token.
    pub presented: TokenHash,
    pub expires_at: UnixTime,
    pub access_token: AccessTokenRecord,
    pub now: UnixTime,
    /// The presented token has a record of its own (it was issued before tokens named their
    /// family, [`crate::domain::RefreshTokenName`]), which its lookup reads: its expiry is
    /// renewed too. A named token's expiry is its family's.
    pub renews_record: bool,
}

/// The families aggregate's operations in a [`WriteBatch`](super::WriteBatch).
// Boxed whole where it is carried (`WriteOp::Family`): its variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum FamilyWrite {
    Start(NewFamily),
    /// Its condition is a rotation's ([`BatchWrites::rotate`](super::BatchWrites::rotate)):
    /// `presented` is the family's current token, and the family is neither revoked nor expired.
    Renew(Renewal),
    /// Marks the family revoked: its refresh tokens stop working and its access tokens read as
    /// revoked. Its condition: the family exists and is not revoked yet.
    Revoke {
        id: FamilyId,
        now: UnixTime,
    },
    /// An access token of no family (application tokens), or minted for a family outside a
    /// rotation. Replaces one of the same id.
    PutAccessToken(AccessTokenRecord),
}

impl FamilyWrite {
    pub fn name(&self) -> &'static str {
        match self {
            Self::Start(_) => "CreateFamily",
            Self::Renew(_) => "RenewRefreshToken",
            Self::Revoke { .. } => "RevokeFamily",
            Self::PutAccessToken(_) => "PutAccessToken",
        }
    }
}

/// What [`revoke_family_recorded`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FamilyRevoked {
    /// This call revoked the family, and wrote its audit events.
    Revoked,
    /// It was revoked before: nothing was written.
    AlreadyRevoked,
    NotFound,
}

/// Revokes a family with `audit`, its events, written in the same write and only by the call
/// that revokes a live family (not by a repeat).
pub async fn revoke_family_recorded(
    store: &dyn Store,
    id: &FamilyId,
    now: UnixTime,
    audit: Vec<AuditEvent>,
) -> StoreResult<FamilyRevoked> {
    let revoke = FamilyWrite::Revoke { id: *id, now }.into();
    match store
        .writes()
        .commit(WriteBatch::of([revoke, audit.into()]))
        .await?
    {
        Committed::Applied { .. } => Ok(FamilyRevoked::Revoked),
        // Already revoked, or no such family: the plain revocation tells which, and keeps the
        // first revocation time.
        Committed::Refused(_) | Committed::Limited { .. } => {
            Ok(if store.families().revoke_family(id, now).await? {
                FamilyRevoked::AlreadyRevoked
            } else {
                FamilyRevoked::NotFound
            })
        }
    }
}

/// The families aggregate's reads and its single-item writes; what is written together with
/// something else goes through a [`WriteBatch`] ([`FamilyWrite`]).
#[async_trait]
pub trait FamilyStore: Send + Sync {
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
    /// Marks the family revoked (keeping the first revocation time): its refresh tokens stop
    /// working and its access tokens read as revoked. `false` if there is no such family.
    /// Idempotent. With audit events: [`revoke_family_recorded`].
    async fn revoke_family(&self, id: &FamilyId, now: UnixTime) -> StoreResult<bool>;

    // Access tokens.
    /// One access token on its own (a batch puts one with what it belongs to).
    async fn put_access_token(&self, record: &AccessTokenRecord) -> StoreResult<()>;
    /// `revoked` is true in the result if the token is marked revoked, its family has been
    /// revoked, or any token it was exchanged from ([`AccessTokenRecord::exchanged_from`]) is
    /// marked revoked or gone.
    async fn get_access_token(
        &self,
        jti: &TokenId,
        now: UnixTime,
    ) -> StoreResult<Option<AccessTokenRecord>>;
}
