//! Device authorizations on DynamoDB: the record under `DEVICE#<device code digest>`, and a
//! `DEVICEUSER#<user code digest>` item naming it, written together. A poll reads the record
//! with one `GetItem`; every change of state is one conditional `UpdateItem` of the record, so
//! of racing polls exactly one redeems.

use async_trait::async_trait;
use aws_sdk_dynamodb::types::{AttributeValue, Put, TransactWriteItem};
use serde::{Deserialize, Serialize};

use super::codec::{keys, n, s, to_item};
use super::errors::build_error;
use super::requests::{update_if, Transaction};
use super::DynamoStore;
use crate::clock::UnixTime;
use crate::domain::{ClientId, DeviceAuthorization, DeviceDecision, DeviceStatus};
use crate::secrets::TokenHash;
use crate::{DeviceAuthorizationStore, StoreResult};

/// The user-code item: which record a typed code names.
#[derive(Serialize, Deserialize)]
struct UserCodeItem {
    device_code_hash: TokenHash,
    expires_at: UnixTime,
}

#[async_trait]
impl DeviceAuthorizationStore for DynamoStore {
    async fn put_device_authorization(&self, record: &DeviceAuthorization) -> StoreResult<bool> {
        // A user code still held by a record inside its TTL refuses the pair; one whose TTL
        // passed (DynamoDB deletes late) may be taken over.
        let user_code = Put::builder()
            .table_name(&self.table)
            .set_item(Some(to_item(
                &UserCodeItem {
                    device_code_hash: record.device_code_hash.clone(),
                    expires_at: record.expires_at,
                },
                keys::device_user_code(&record.user_code_hash),
            )?))
            .condition_expression("attribute_not_exists(pk) OR expires_at <= :now")
            .expression_attribute_values(":now", n(record.issued_at))
            .build()
            .map_err(build_error)?;
        let items = vec![
            self.put_new(to_item(
                record,
                keys::device_authorization(&record.device_code_hash),
            )?)?,
            TransactWriteItem::builder().put(user_code).build(),
        ];
        match self.transact("PutDeviceAuthorization", items).await? {
            Transaction::Committed => Ok(true),
            Transaction::ConditionsFailed(_) => Ok(false),
        }
    }

    async fn get_device_authorization(
        &self,
        device_code_hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<DeviceAuthorization>> {
        Ok(self
            .get::<DeviceAuthorization>(
                "GetDeviceAuthorization",
                keys::device_authorization(device_code_hash),
            )
            .await?
            .filter(|record| record.expires_at > now))
    }

    async fn find_device_authorization(
        &self,
        user_code_hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<DeviceAuthorization>> {
        let Some(pointer) = self
            .get::<UserCodeItem>("GetDeviceUserCode", keys::device_user_code(user_code_hash))
            .await?
            .filter(|item| item.expires_at > now)
        else {
            return Ok(None);
        };
        Ok(self
            .get_device_authorization(&pointer.device_code_hash, now)
            .await?
            .filter(|record| record.user_code_hash == *user_code_hash))
    }

    async fn decide_device_authorization(
        &self,
        device_code_hash: &TokenHash,
        decision: &DeviceDecision,
        valid_after: UnixTime,
    ) -> StoreResult<bool> {
        let update = self
            .update_item(keys::device_authorization(device_code_hash))
            .condition_expression(
                "attribute_exists(pk) AND #status = :pending AND issued_at > :valid_after",
            )
            .expression_attribute_names("#status", "status")
            .expression_attribute_values(":pending", s(DeviceStatus::Pending.as_str()))
            .expression_attribute_values(":valid_after", n(valid_after));
        let update = match decision {
            DeviceDecision::Approved {
                user_id,
                auth_time,
                sid,
                amr,
            } => {
                let methods = amr.iter().map(|method| s(method.as_str())).collect();
                let update = update
                    .expression_attribute_values(":status", s(DeviceStatus::Approved.as_str()))
                    .expression_attribute_values(":user", s(user_id.to_string()))
                    .expression_attribute_values(":auth_time", n(auth_time))
                    .expression_attribute_values(":amr", AttributeValue::L(methods));
                match sid {
                    Some(sid) => update
                        .update_expression(
                            "SET #status = :status, user_id = :user, auth_time = :auth_time, \
                             amr = :amr, sid = :sid",
                        )
                        .expression_attribute_values(":sid", s(sid.to_string())),
                    None => update.update_expression(
                        "SET #status = :status, user_id = :user, auth_time = :auth_time, \
                         amr = :amr",
                    ),
                }
            }
            DeviceDecision::Denied => update
                .update_expression("SET #status = :status")
                .expression_attribute_values(":status", s(DeviceStatus::Denied.as_str())),
        };
        update_if("DecideDeviceAuthorization", update).await
    }

    async fn record_device_poll(
        &self,
        device_code_hash: &TokenHash,
        seen: Option<UnixTime>,
        now: UnixTime,
        interval: UnixTime,
    ) -> StoreResult<bool> {
        let update = self
            .update_item(keys::device_authorization(device_code_hash))
            .update_expression("SET last_polled_at = :now, #interval = :interval")
            .expression_attribute_names("#interval", "interval")
            .expression_attribute_values(":now", n(now))
            .expression_attribute_values(":interval", n(interval));
        let update = match seen {
            Some(seen) => update
                .condition_expression("attribute_exists(pk) AND last_polled_at = :seen")
                .expression_attribute_values(":seen", n(seen)),
            None => update.condition_expression(
                "attribute_exists(pk) AND attribute_not_exists(last_polled_at)",
            ),
        };
        update_if("RecordDevicePoll", update).await
    }

    async fn redeem_device_authorization(
        &self,
        device_code_hash: &TokenHash,
        client_id: &ClientId,
        valid_after: UnixTime,
    ) -> StoreResult<bool> {
        // The condition is the whole guarantee: of concurrent redemptions only one sees the
        // record still approved.
        let update = self
            .update_item(keys::device_authorization(device_code_hash))
            .condition_expression(
                "attribute_exists(pk) AND #status = :approved AND client_id = :client \
                 AND issued_at > :valid_after",
            )
            .update_expression("SET #status = :redeemed")
            .expression_attribute_names("#status", "status")
            .expression_attribute_values(":approved", s(DeviceStatus::Approved.as_str()))
            .expression_attribute_values(":redeemed", s(DeviceStatus::Redeemed.as_str()))
            .expression_attribute_values(":client", s(client_id.to_string()))
            .expression_attribute_values(":valid_after", n(valid_after));
        update_if("RedeemDeviceAuthorization", update).await
    }
}
