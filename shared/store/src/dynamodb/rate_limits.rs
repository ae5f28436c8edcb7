//! Rate-limit counters on DynamoDB: one item per counter and window
//! (`RATE#<counter>#<subject digest>`, `WINDOW#<start>`), `hits` and the TTL `expires_at` (the
//! window's end). A hit is one conditional `UpdateItem` (`ADD hits :one` unless `hits` reached
//! the limit), which creates the item on the window's first hit: no read, no second round.
//! A block is a `BLOCK` item under the same partition with `until`, also its TTL.

use async_trait::async_trait;
use aws_sdk_dynamodb::types::ReturnValue;

use super::codec::{key, keys, n, Item};
use super::errors::store_error;
use super::requests::update_if;
use super::DynamoStore;
use crate::clock::UnixTime;
use crate::rate_limits::retry_after;
use crate::{Hit, RateKey, RateLimit, RateLimitStore, StoreError, StoreResult};

#[async_trait]
impl RateLimitStore for DynamoStore {
    async fn count_hit(&self, key: &RateKey, limit: RateLimit, now: UnixTime) -> StoreResult<Hit> {
        let window_end = limit.window_end(now);
        let result = self
            .update_item(keys::rate_window(&key.stored(), limit.window_start(now)))
            .update_expression("ADD hits :one SET expires_at = :end")
            .condition_expression("attribute_not_exists(hits) OR hits < :max")
            .expression_attribute_values(":one", n(1))
            .expression_attribute_values(":end", n(window_end))
            .expression_attribute_values(":max", n(limit.max))
            .return_values(ReturnValue::UpdatedNew)
            .send()
            .await;
        match result {
            Ok(out) => Ok(Hit::Counted {
                count: number(&out.attributes.unwrap_or_default(), "hits")?,
            }),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
            {
                Ok(Hit::Refused {
                    retry_after: retry_after(window_end, now),
                })
            }
            Err(e) => Err(store_error("CountRateLimitHit", e)),
        }
    }

    async fn refund_hit(&self, key: &RateKey, limit: RateLimit, at: UnixTime) -> StoreResult<()> {
        let refund = self
            .update_item(keys::rate_window(&key.stored(), limit.window_start(at)))
            .update_expression("ADD hits :minus_one")
            .condition_expression("hits > :zero")
            .expression_attribute_values(":minus_one", n(-1))
            .expression_attribute_values(":zero", n(0));
        // A failed condition: the counter is gone (its window ended) or already at zero.
        update_if("RefundRateLimitHit", refund).await?;
        Ok(())
    }

    async fn block_until(&self, key: &RateKey, until: UnixTime) -> StoreResult<()> {
        let block = self
            .update_item(keys::rate_block(&key.stored()))
            .update_expression("SET #until = :until, expires_at = :until")
            .condition_expression("attribute_not_exists(#until) OR #until < :until")
            .expression_attribute_names("#until", "until")
            .expression_attribute_values(":until", n(until));
        // A failed condition means a longer block is already stored.
        update_if("BlockRateLimitSubject", block).await?;
        Ok(())
    }

    async fn blocked_until(
        &self,
        rate_key: &RateKey,
        now: UnixTime,
    ) -> StoreResult<Option<UnixTime>> {
        let (pk, sk) = keys::rate_block(&rate_key.stored());
        let Some(item) = self.get_item("ReadRateLimitBlock", key(pk, sk)).await? else {
            return Ok(None);
        };
        let until: UnixTime = number(&item, "until")?;
        Ok((until > now).then_some(until))
    }
}

fn number<T: std::str::FromStr>(item: &Item, name: &str) -> StoreResult<T> {
    item.get(name)
        .and_then(|value| value.as_n().ok())
        .and_then(|text| text.parse().ok())
        .ok_or_else(|| StoreError::Internal(format!("malformed rate-limit item: {name}").into()))
}
