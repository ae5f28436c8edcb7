//! Company auth tokens: reusable until they expire, so there is no consume.

use async_trait::async_trait;

use super::StoreResult;
use crate::clock::UnixTime;
use crate::domain::AuthToken;
use crate::secrets::TokenHash;

#[async_trait]
pub trait AuthTokenStore: Send + Sync {
    async fn put_auth_token(&self, token: &AuthToken) -> StoreResult<()>;
    async fn get_auth_token(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<AuthToken>>;
}
