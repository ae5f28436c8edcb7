//! Legacy apps, imported legacy tokens (batch writes) and exchange links on DynamoDB.

use std::collections::HashMap;

use async_trait::async_trait;

use super::DynamoStore;
use aws_sdk_dynamodb::types::{Put, PutRequest, TransactWriteItem, WriteRequest};
use futures::stream::{self, StreamExt, TryStreamExt};

use super::codec::{keys, s, to_item};
use super::errors::build_error;
use crate::clock::UnixTime;
use crate::domain::{ConsumerKey, LegacyApp, LegacyExchange, LegacyToken};
use crate::secrets::TokenHash;
use crate::{LegacyLink, LegacyStore, StoreResult};

/// BatchWriteItem's limit.
const BATCH_SIZE: usize = 25;
/// Batches of a legacy import in flight at once: enough to import 100,000 tokens in well under a
/// minute, few enough not to trip on-demand throttling on a fresh table.
const BATCHES_IN_FLIGHT: usize = 12;

impl DynamoStore {
    /// A batch's move of an exchange link: its condition holds only while the link still points
    /// where the caller saw it, so of two concurrent exchanges of one legacy token one wins and
    /// the other writes nothing.
    pub(super) fn legacy_link_item(&self, link: &LegacyLink) -> StoreResult<TransactWriteItem> {
        let mut put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(to_item(
                &link.exchange,
                keys::legacy_exchange(&link.exchange.token_hash),
            )?));
        put = match &link.previous_family {
            None => put.condition_expression("attribute_not_exists(pk)"),
            Some(previous) => put
                .condition_expression("family_id = :previous")
                .expression_attribute_values(":previous", s(previous.to_string())),
        };
        Ok(TransactWriteItem::builder()
            .put(put.build().map_err(build_error)?)
            .build())
    }
}

#[async_trait]
impl LegacyStore for DynamoStore {
    async fn put_legacy_app(&self, app: &LegacyApp) -> StoreResult<()> {
        self.put(
            "PutLegacyApp",
            to_item(app, keys::legacy_app(&app.consumer_key))?,
        )
        .await
    }

    async fn get_legacy_app(&self, key: &ConsumerKey) -> StoreResult<Option<LegacyApp>> {
        self.get("GetLegacyApp", keys::legacy_app(key)).await
    }

    async fn put_legacy_tokens(&self, tokens: &[LegacyToken]) -> StoreResult<()> {
        // BatchWriteItem rejects a batch naming one key twice; the last occurrence wins, as it
        // would with one put after another.
        let mut latest: HashMap<&TokenHash, &LegacyToken> = HashMap::with_capacity(tokens.len());
        for token in tokens {
            latest.insert(&token.token_hash, token);
        }
        let requests = latest
            .into_values()
            .map(|token| {
                let item = to_item(token, keys::legacy_token(&token.token_hash))?;
                let put = PutRequest::builder()
                    .set_item(Some(item))
                    .build()
                    .map_err(build_error)?;
                Ok(WriteRequest::builder().put_request(put).build())
            })
            .collect::<StoreResult<Vec<_>>>()?;
        let batches: Vec<Vec<WriteRequest>> =
            requests.chunks(BATCH_SIZE).map(<[_]>::to_vec).collect();
        stream::iter(batches)
            .map(|batch| self.write_batch(batch))
            .buffer_unordered(BATCHES_IN_FLIGHT)
            .try_collect::<Vec<()>>()
            .await?;
        Ok(())
    }

    async fn get_legacy_token(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<LegacyToken>> {
        Ok(self
            .get::<LegacyToken>("GetLegacyToken", keys::legacy_token(hash))
            .await?
            .filter(|token| !token.is_expired(now)))
    }

    async fn get_legacy_exchange(&self, hash: &TokenHash) -> StoreResult<Option<LegacyExchange>> {
        self.get("GetLegacyExchange", keys::legacy_exchange(hash))
            .await
    }
}
