//! Device authorizations on SQLite: the whole record is the JSON body, and each change of state
//! reads and rewrites it in one `BEGIN IMMEDIATE` transaction, so its condition and its write
//! are one step, as DynamoDB's conditional update is.

use async_trait::async_trait;
use rusqlite::{params, OptionalExtension};

use super::{from_json, map_err, to_json, SqliteStore};
use crate::clock::UnixTime;
use crate::domain::{ClientId, DeviceAuthorization, DeviceDecision, DeviceStatus};
use crate::secrets::TokenHash;
use crate::{DeviceAuthorizationStore, StoreResult};

const BY_DEVICE_CODE: &str = "SELECT body FROM device_authorizations \
                              WHERE device_code_hash = ?1 AND expires_at > ?2";

impl SqliteStore {
    /// Rewrites the record under `device_code_hash` with `change`, if `change` accepts it.
    async fn change_device_authorization<F>(
        &self,
        device_code_hash: &TokenHash,
        change: F,
    ) -> StoreResult<bool>
    where
        F: FnOnce(&mut DeviceAuthorization) -> bool + Send + 'static,
    {
        let hash = device_code_hash.to_hex();
        self.write_tx(move |tx| {
            let body: Option<String> = tx
                .prepare_cached(
                    "SELECT body FROM device_authorizations WHERE device_code_hash = ?1",
                )
                .and_then(|mut stmt| stmt.query_row(params![hash], |row| row.get(0)).optional())
                .map_err(map_err)?;
            let Some(body) = body else {
                return Ok(false);
            };
            let mut record: DeviceAuthorization = from_json(&body)?;
            if !change(&mut record) {
                return Ok(false);
            }
            let body = to_json(&record)?;
            tx.prepare_cached(
                "UPDATE device_authorizations SET body = ?2, expires_at = ?3 \
                 WHERE device_code_hash = ?1",
            )
            .and_then(|mut stmt| stmt.execute(params![hash, body, record.expires_at]))
            .map_err(map_err)?;
            Ok(true)
        })
        .await
    }
}

#[async_trait]
impl DeviceAuthorizationStore for SqliteStore {
    async fn put_device_authorization(&self, record: &DeviceAuthorization) -> StoreResult<bool> {
        let params = (
            record.device_code_hash.to_hex(),
            record.user_code_hash.to_hex(),
            record.expires_at,
            to_json(record)?,
        );
        let written = self
            .execute(
                "INSERT INTO device_authorizations \
                 (device_code_hash, user_code_hash, expires_at, body) VALUES (?1, ?2, ?3, ?4) \
                 ON CONFLICT DO NOTHING",
                params,
            )
            .await?;
        Ok(written == 1)
    }

    async fn get_device_authorization(
        &self,
        device_code_hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<DeviceAuthorization>> {
        self.get_body(BY_DEVICE_CODE, (device_code_hash.to_hex(), now))
            .await
    }

    async fn find_device_authorization(
        &self,
        user_code_hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<DeviceAuthorization>> {
        self.get_body(
            "SELECT body FROM device_authorizations \
             WHERE user_code_hash = ?1 AND expires_at > ?2",
            (user_code_hash.to_hex(), now),
        )
        .await
    }

    async fn decide_device_authorization(
        &self,
        device_code_hash: &TokenHash,
        decision: &DeviceDecision,
        valid_after: UnixTime,
    ) -> StoreResult<bool> {
        let decision = decision.clone();
        self.change_device_authorization(device_code_hash, move |record| {
            if record.status != DeviceStatus::Pending || record.issued_at <= valid_after {
                return false;
            }
            match decision {
                DeviceDecision::Approved {
                    user_id,
                    auth_time,
                    sid,
                    amr,
                } => {
                    record.status = DeviceStatus::Approved;
                    record.user_id = Some(user_id);
                    record.auth_time = Some(auth_time);
                    record.sid = sid;
                    record.amr = amr;
                }
                DeviceDecision::Denied => record.status = DeviceStatus::Denied,
            }
            true
        })
        .await
    }

    async fn record_device_poll(
        &self,
        device_code_hash: &TokenHash,
        seen: Option<UnixTime>,
        now: UnixTime,
        interval: UnixTime,
    ) -> StoreResult<bool> {
        self.change_device_authorization(device_code_hash, move |record| {
            if record.last_polled_at != seen {
                return false;
            }
            record.last_polled_at = Some(now);
            record.interval = interval;
            true
        })
        .await
    }

    async fn redeem_device_authorization(
        &self,
        device_code_hash: &TokenHash,
        client_id: &ClientId,
        valid_after: UnixTime,
    ) -> StoreResult<bool> {
        let client_id = *client_id;
        self.change_device_authorization(device_code_hash, move |record| {
            if record.status != DeviceStatus::Approved
                || record.client_id != client_id
                || record.issued_at <= valid_after
            {
                return false;
            }
            record.status = DeviceStatus::Redeemed;
            true
        })
        .await
    }
}
