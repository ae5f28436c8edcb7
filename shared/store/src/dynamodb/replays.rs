//! Used `jti`s on DynamoDB: one item per key (`JTI#<kind>#<digest>`, `JTI`) with the TTL
//! `expires_at`, written by one conditional `PutItem` that succeeds only when no unexpired use
//! is stored: no read first, and a lost race is the condition failing.

use async_trait::async_trait;

use super::codec::{keys, n, s, PK, SK};
use super::errors::store_error;
use super::DynamoStore;
use crate::clock::UnixTime;
use crate::{ReplayKey, ReplayStore, StoreResult};

#[async_trait]
impl ReplayStore for DynamoStore {
    async fn first_use(
        &self,
        key: &ReplayKey,
        expires_at: UnixTime,
        now: UnixTime,
    ) -> StoreResult<bool> {
        let (pk, sk) = keys::used_jti(&key.stored());
        let result = self
            .client
            .put_item()
            .table_name(&self.table)
            .item(PK, s(pk))
            .item(SK, s(sk))
            .item("expires_at", n(expires_at))
            // An expired item may linger for days before the TTL deletes it: reusable.
            .condition_expression("attribute_not_exists(pk) OR expires_at <= :now")
            .expression_attribute_values(":now", n(now))
            .send()
            .await;
        match result {
            Ok(_) => Ok(true),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
            {
                Ok(false)
            }
            Err(e) => Err(store_error("MarkJtiUsed", e)),
        }
    }
}
