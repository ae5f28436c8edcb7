//! The aggregates [`CachedStore`] does not cache: every method goes straight to the store
//! behind it. A method added to one of these traits needs its forwarding line here.

use async_trait::async_trait;

use super::CachedStore;
use crate::clock::UnixTime;
use crate::domain::AddressKey;
use crate::domain::{
    AccessTokenRecord, AuthToken, AuthorizationCode, ClientId, Family, FamilyId, Login,
    PrincipalId, RefreshTokenRecord, TokenId,
};
use crate::secrets::TokenHash;
use crate::store::{
    AllowedAttempt, Attempt, AttemptLimit, AuthTokenStore, AuthorizationCodeStore, CodeRedeemed,
    FamilyCreated, FamilyStore, LockoutStore, NewFamily, OtpRecord, OtpStore,
    RefreshTokenWithOrigin, Renewal, Renewed, RevocationStore, Rotated, Rotation, StoreResult,
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

    async fn get_refresh_token_with_origin(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<RefreshTokenWithOrigin>> {
        self.inner.get_refresh_token_with_origin(hash, now).await
    }

    async fn renew_refresh_token(&self, renewal: Renewal<'_>) -> StoreResult<Renewed> {
        self.inner.renew_refresh_token(renewal).await
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
    async fn register_login_attempt(
        &self,
        login: &Login,
        limit: AttemptLimit,
        now: UnixTime,
    ) -> StoreResult<Attempt> {
        self.inner.register_login_attempt(login, limit, now).await
    }

    async fn refund_login_attempt(
        &self,
        login: &Login,
        attempt: &AllowedAttempt,
    ) -> StoreResult<()> {
        self.inner.refund_login_attempt(login, attempt).await
    }
}

#[async_trait]
impl<S: OtpStore + ?Sized> OtpStore for CachedStore<S> {
    async fn create_otp(&self, record: &OtpRecord) -> StoreResult<()> {
        self.inner.create_otp(record).await
    }

    async fn count_otp_requests(&self, address: &AddressKey, since: UnixTime) -> StoreResult<u32> {
        self.inner.count_otp_requests(address, since).await
    }

    async fn find_open_otp(
        &self,
        address: &AddressKey,
        now: UnixTime,
    ) -> StoreResult<Option<OtpRecord>> {
        self.inner.find_open_otp(address, now).await
    }

    async fn spend_otp_try(&self, record: &OtpRecord, now: UnixTime) -> StoreResult<Option<u32>> {
        self.inner.spend_otp_try(record, now).await
    }

    async fn consume_otp(&self, record: &OtpRecord, now: UnixTime) -> StoreResult<bool> {
        self.inner.consume_otp(record, now).await
    }
}

#[async_trait]
impl<S: AuthorizationCodeStore + ?Sized> AuthorizationCodeStore for CachedStore<S> {
    async fn put_authorization_code(&self, code: &AuthorizationCode) -> StoreResult<()> {
        self.inner.put_authorization_code(code).await
    }

    async fn get_authorization_code(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<AuthorizationCode>> {
        self.inner.get_authorization_code(hash, now).await
    }

    async fn redeem_authorization_code(
        &self,
        hash: &TokenHash,
        client_id: &ClientId,
        family_id: Option<&FamilyId>,
        now: UnixTime,
    ) -> StoreResult<CodeRedeemed> {
        self.inner
            .redeem_authorization_code(hash, client_id, family_id, now)
            .await
    }
}

#[async_trait]
impl<S: RevocationStore + ?Sized> RevocationStore for CachedStore<S> {
    async fn revoke_access_token(&self, jti: &TokenId, now: UnixTime) -> StoreResult<bool> {
        self.inner.revoke_access_token(jti, now).await
    }

    async fn revoke_connection(
        &self,
        principal: &PrincipalId,
        client: &ClientId,
        now: UnixTime,
    ) -> StoreResult<()> {
        self.inner.revoke_connection(principal, client, now).await
    }
}
