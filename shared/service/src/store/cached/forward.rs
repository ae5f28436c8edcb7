//! The aggregates [`CachedStore`] does not cache: every method goes straight to the store
//! behind it. A method added to one of these traits needs its forwarding line here.

use async_trait::async_trait;

use super::CachedStore;
use crate::clock::UnixTime;
use crate::domain::{
    AccessTokenRecord, AuthToken, Family, FamilyId, Login, RefreshTokenRecord, TokenId,
};
use crate::secrets::TokenHash;
use crate::store::{
    AuthTokenStore, FamilyCreated, FamilyStore, LockoutStore, NewFamily, Rotated, Rotation,
    StoreResult,
};

#[async_trait]
impl<S: AuthTokenStore + ?Sized> AuthTokenStore for CachedStore<S> {
    async fn put_auth_token(&self, token: &AuthToken) -> StoreResult<()> {
        self.inner.put_auth_token(token).await
    }

    async fn get_auth_token(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<AuthToken>> {
        self.inner.get_auth_token(hash, now).await
    }
}

#[async_trait]
impl<S: FamilyStore + ?Sized> FamilyStore for CachedStore<S> {
    async fn create_family(&self, new: NewFamily<'_>) -> StoreResult<FamilyCreated> {
        self.inner.create_family(new).await
    }

    async fn get_family(&self, id: &FamilyId, now: UnixTime) -> StoreResult<Option<Family>> {
        self.inner.get_family(id, now).await
    }

    async fn get_refresh_token(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<RefreshTokenRecord>> {
        self.inner.get_refresh_token(hash, now).await
    }

    async fn rotate_refresh_token(&self, rotation: Rotation<'_>) -> StoreResult<Rotated> {
        self.inner.rotate_refresh_token(rotation).await
    }

    async fn revoke_family(&self, id: &FamilyId, now: UnixTime) -> StoreResult<bool> {
        self.inner.revoke_family(id, now).await
    }

    async fn put_access_token(&self, record: &AccessTokenRecord) -> StoreResult<()> {
        self.inner.put_access_token(record).await
    }

    async fn get_access_token(
        &self,
        jti: &TokenId,
        now: UnixTime,
    ) -> StoreResult<Option<AccessTokenRecord>> {
        self.inner.get_access_token(jti, now).await
    }
}

#[async_trait]
impl<S: LockoutStore + ?Sized> LockoutStore for CachedStore<S> {
    async fn record_failed_login(
        &self,
        login: &Login,
        at: UnixTime,
        expires_at: UnixTime,
    ) -> StoreResult<()> {
        self.inner.record_failed_login(login, at, expires_at).await
    }

    async fn count_failed_logins(&self, login: &Login, since: UnixTime) -> StoreResult<u32> {
        self.inner.count_failed_logins(login, since).await
    }
}
