//! Initial access tokens on DynamoDB: one item per digest (`REGTOKEN#<digest>`, `REGTOKEN`)
//! with the TTL `expires_at`; expiry is checked on read, as the TTL deletes late.

use async_trait::async_trait;

use super::codec::{key, keys, n, s, PK, SK};
use super::errors::store_error;
use super::DynamoStore;
use crate::clock::UnixTime;
use crate::secrets::TokenHash;
use crate::{RegistrationTokenStore, StoreResult};

#[async_trait]
impl RegistrationTokenStore for DynamoStore {
    async fn put_registration_token(
        &self,
        hash: &TokenHash,
        expires_at: UnixTime,
    ) -> StoreResult<()> {
        let (pk, sk) = keys::registration_token(hash);
        self.client
            .put_item()
            .table_name(&self.table)
            .item(PK, s(pk))
            .item(SK, s(sk))
            .item("expires_at", n(expires_at))
            .send()
            .await
            .map_err(|e| store_error("PutRegistrationToken", e))?;
        Ok(())
    }

    async fn registration_token_valid(&self, hash: &TokenHash, now: UnixTime) -> StoreResult<bool> {
        let (pk, sk) = keys::registration_token(hash);
        let item = self.get_item("GetRegistrationToken", key(pk, sk)).await?;
        Ok(item
            .and_then(|item| {
                item.get("expires_at")
                    .and_then(|v| v.as_n().ok())
                    .and_then(|v| v.parse::<UnixTime>().ok())
            })
            .is_some_and(|expires_at| expires_at > now))
    }
}
