//! Company auth tokens on DynamoDB.

use async_trait::async_trait;

use super::codec::{keys, to_item};
use super::DynamoStore;
use crate::clock::UnixTime;
use crate::domain::AuthToken;
use crate::secrets::TokenHash;
use crate::{AuthTokenStore, StoreResult};

#[async_trait]
impl AuthTokenStore for DynamoStore {
    async fn put_auth_token(&self, token: &AuthToken) -> StoreResult<()> {
        self.put(
            "PutAuthToken",
            to_item(token, keys::auth_token(&token.token_hash))?,
        )
        .await
    }

    async fn get_auth_token(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<AuthToken>> {
        Ok(self
            .get::<AuthToken>("GetAuthToken", keys::auth_token(hash))
            .await?
            .filter(|token| token.expires_at > now))
    }
}
