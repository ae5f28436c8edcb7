//! Used `jti`s on DynamoDB: one item per key (`JTI#<kind>#<digest>`, `JTI`) with the TTL
//! `expires_at`, written by one conditional `PutItem` that succeeds only when no unexpired use
//! is stored: no read first, and a lost race is the condition failing.

use async_trait::async_trait;

use super::codec::{keys, n, s, PK, SK};
use super::errors::{build_error, store_error};
use super::DynamoStore;
use crate::clock::UnixTime;
use crate::{FirstUse, ReplayKey, ReplayStore, StoreResult};
use aws_sdk_dynamodb::types::{Put, TransactWriteItem};

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
            .condition_expression(UNUSED)
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

/// An expired item may linger for days before the TTL deletes it: reusable.
const UNUSED: &str = "attribute_not_exists(pk) OR expires_at <= :now";

impl DynamoStore {
    /// [`ReplayStore::first_use`]'s put, as an item of a transaction.
    pub(super) fn first_use_item(&self, first_use: &FirstUse) -> StoreResult<TransactWriteItem> {
        let (pk, sk) = keys::used_jti(&first_use.key.stored());
        let put = Put::builder()
            .table_name(&self.table)
            .item(PK, s(pk))
            .item(SK, s(sk))
            .item("expires_at", n(first_use.expires_at))
            .condition_expression(UNUSED)
            .expression_attribute_values(":now", n(first_use.now))
            .build()
            .map_err(build_error)?;
        Ok(TransactWriteItem::builder().put(put).build())
    }
}
