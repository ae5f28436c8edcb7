//! One-time passwords on DynamoDB: one item per password under its address's partition, sorted
//! by creation time, so the cap is a key-range count and the newest password one query. Both
//! read only the requesting client's items (a filter on `client_id`, which every item has had
//! from the start, so the key layout did not change when the cap and the lookup became the
//! client's own): the key range is the last 15 minutes, which holds at most a few items per
//! client.
//!
//! The table's TTL attribute `expires_at` is set to the end of the request window (15 minutes),
//! not to the password's validity (10 minutes, kept in `valid_until`): the cap counts expired
//! passwords too, so an item must outlive its validity until it leaves the window. Validity is
//! checked on every read and in every condition, whatever TTL has or has not deleted yet.

use async_trait::async_trait;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue, Select};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::codec::{from_item, key, keys, n, s, to_item};
use super::errors::store_error;
use super::requests::{query_items, query_pages, update_if};
use super::DynamoStore;
use crate::clock::UnixTime;
use crate::domain::{AddressKey, ClientId, OtpHash};
use crate::secrets::TokenHash;
use crate::{
    FactsHash, OtpId, OtpRecord, OtpStore, StoreError, StoreResult, REQUEST_WINDOW_SECONDS,
};

/// The item's attributes besides its key.
#[derive(Serialize, Deserialize)]
struct OtpItem {
    id: Uuid,
    client_id: ClientId,
    password: String,
    facts: TokenHash,
    created_at: UnixTime,
    valid_until: UnixTime,
    /// The TTL: `created_at` + the request window.
    expires_at: UnixTime,
    tries_left: u32,
    consumed: bool,
}

/// The key of a new record. Requests for one address within one second (the clock's grain)
/// are ordered by the writer's wall clock in microseconds, so "the newest" is the one mailed
/// last, as on SQLite (insertion order).
fn new_item_key(record: &OtpRecord) -> (String, String) {
    let micros = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_micros());
    (
        keys::otps(&record.address.0),
        keys::otp_sort(record.created_at, micros, &record.id.0),
    )
}

fn boolean(value: bool) -> AttributeValue {
    AttributeValue::Bool(value)
}

impl DynamoStore {
    /// The stored key of `record`: its sort key holds the write time, which the record does not
    /// carry, so it is looked up among the address's records of the same second by id.
    async fn locate_otp(&self, record: &OtpRecord) -> StoreResult<Option<(String, String)>> {
        let pk = keys::otps(&record.address.0);
        let out = self
            .client
            .query()
            .table_name(&self.table)
            .key_condition_expression("pk = :pk AND begins_with(sk, :second)")
            .filter_expression("id = :id")
            .expression_attribute_values(":pk", s(pk.clone()))
            .expression_attribute_values(":second", s(keys::sortable_time(record.created_at)))
            .expression_attribute_values(":id", s(record.id.0.hyphenated().to_string()))
            .projection_expression("sk")
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| store_error("LocateOtp", e))?;
        let sk = out
            .items
            .unwrap_or_default()
            .into_iter()
            .find_map(|mut item| item.remove("sk"))
            .and_then(|sk| sk.as_s().ok().cloned());
        Ok(sk.map(|sk| (pk, sk)))
    }
}

#[async_trait]
impl OtpStore for DynamoStore {
    async fn create_otp(&self, record: &OtpRecord) -> StoreResult<()> {
        let item = OtpItem {
            id: record.id.0,
            client_id: record.client_id,
            password: record.password.as_phc().to_owned(),
            facts: record.facts.0.clone(),
            created_at: record.created_at,
            valid_until: record.expires_at,
            expires_at: record.created_at + REQUEST_WINDOW_SECONDS,
            tries_left: record.tries_left,
            consumed: record.consumed,
        };
        self.put("CreateOtp", to_item(&item, new_item_key(record))?)
            .await
    }

    async fn count_otp_requests(
        &self,
        address: &AddressKey,
        client: &ClientId,
        since: UnixTime,
    ) -> StoreResult<u32> {
        let query = self
            .client
            .query()
            .table_name(&self.table)
            .key_condition_expression("pk = :pk AND sk >= :since")
            .filter_expression("#consumed = :false AND client_id = :client")
            .expression_attribute_names("#consumed", "consumed")
            .expression_attribute_values(":pk", s(keys::otps(&address.0)))
            .expression_attribute_values(":since", s(keys::sortable_time(since)))
            .expression_attribute_values(":false", boolean(false))
            .expression_attribute_values(":client", s(client.to_string()))
            .select(Select::Count)
            .consistent_read(true);
        let mut total: u32 = 0;
        query_pages("CountOtpRequests", query, |page| {
            total = total.saturating_add(u32::try_from(page.count).unwrap_or(0));
            Ok(())
        })
        .await?;
        Ok(total)
    }

    async fn find_open_otp(
        &self,
        address: &AddressKey,
        client: &ClientId,
        now: UnixTime,
    ) -> StoreResult<Option<OtpRecord>> {
        // Newest first, the client's own only. No `Limit`: DynamoDB applies it before the
        // filter, so another client's newer item would hide this client's. A password is valid
        // for less than the request window, so older items need not be read.
        let query = self
            .client
            .query()
            .table_name(&self.table)
            .key_condition_expression("pk = :pk AND sk >= :since")
            .filter_expression("client_id = :client")
            .expression_attribute_values(":pk", s(keys::otps(&address.0)))
            .expression_attribute_values(
                ":since",
                s(keys::sortable_time(now - REQUEST_WINDOW_SECONDS)),
            )
            .expression_attribute_values(":client", s(client.to_string()))
            .scan_index_forward(false)
            .consistent_read(true);
        let Some(item) = query_items("FindOpenOtp", query).await?.into_iter().next() else {
            return Ok(None);
        };
        let stored: OtpItem = from_item(item)?;
        let record = OtpRecord {
            id: OtpId(stored.id),
            address: address.clone(),
            client_id: stored.client_id,
            password: OtpHash::from_phc(stored.password),
            facts: FactsHash(stored.facts),
            created_at: stored.created_at,
            expires_at: stored.valid_until,
            tries_left: stored.tries_left,
            consumed: stored.consumed,
        };
        Ok(Some(record).filter(|r| r.is_open(now)))
    }

    async fn spend_otp_try(&self, record: &OtpRecord, now: UnixTime) -> StoreResult<Option<u32>> {
        let Some((pk, sk)) = self.locate_otp(record).await? else {
            return Ok(None);
        };
        // Condition and decrement in one conditional update: parallel tries are serialised by
        // DynamoDB, and the one that finds no try left fails its condition.
        let result = self
            .update_item((pk, sk))
            .update_expression("SET tries_left = tries_left - :one")
            .condition_expression(
                "#consumed = :false AND tries_left > :zero AND valid_until > :now",
            )
            // `consumed` is one of DynamoDB's reserved words.
            .expression_attribute_names("#consumed", "consumed")
            .expression_attribute_values(":one", n(1))
            .expression_attribute_values(":zero", n(0))
            .expression_attribute_values(":false", boolean(false))
            .expression_attribute_values(":now", n(now))
            .return_values(ReturnValue::UpdatedNew)
            .send()
            .await;
        match result {
            Ok(out) => {
                let left = out
                    .attributes
                    .and_then(|mut attributes| attributes.remove("tries_left"))
                    .and_then(|value| value.as_n().ok().and_then(|n| n.parse().ok()))
                    .ok_or_else(|| {
                        StoreError::internal("SpendOtpTry: no tries_left returned".to_owned())
                    })?;
                Ok(Some(left))
            }
            Err(e)
                if e.as_service_error()
                    .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
            {
                Ok(None)
            }
            Err(e) => Err(store_error("SpendOtpTry", e)),
        }
    }

    async fn consume_otp(&self, record: &OtpRecord, now: UnixTime) -> StoreResult<bool> {
        let Some((pk, sk)) = self.locate_otp(record).await? else {
            return Ok(false);
        };
        // This consumption's own mark: the SDK's resubmission of the same update after a lost
        // answer matches it, instead of failing against its own write; a competitor never does.
        let mark = Uuid::new_v4().to_string();
        let update = self
            .update_item((pk.clone(), sk.clone()))
            .update_expression("SET #consumed = :true, consumed_by = :mark")
            .condition_expression(
                "(#consumed = :false AND valid_until > :now) OR consumed_by = :mark",
            )
            .expression_attribute_names("#consumed", "consumed")
            .expression_attribute_values(":true", boolean(true))
            .expression_attribute_values(":false", boolean(false))
            .expression_attribute_values(":now", n(now))
            .expression_attribute_values(":mark", s(mark.clone()));
        match update_if("ConsumeOtp", update).await {
            Ok(consumed) => Ok(consumed),
            // Every attempt may have landed with its answer lost: read the mark back.
            Err(lost) => {
                let read = self
                    .client
                    .get_item()
                    .table_name(&self.table)
                    .set_key(Some(key(pk, sk)))
                    .projection_expression("consumed_by")
                    .consistent_read(true)
                    .send()
                    .await;
                let ours = read.ok().and_then(|out| out.item).is_some_and(|item| {
                    item.get("consumed_by").and_then(|v| v.as_s().ok()) == Some(&mark)
                });
                if ours {
                    Ok(true)
                } else {
                    Err(lost)
                }
            }
        }
    }
}
