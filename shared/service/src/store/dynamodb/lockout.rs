//! Failed logins on DynamoDB: one item per failure, counted by a key-range query.

use async_trait::async_trait;

use super::DynamoStore;
use aws_sdk_dynamodb::types::Select;

use super::codec::{keys, s, to_item, FailedLogin};
use super::errors::store_error;
use crate::clock::UnixTime;
use crate::domain::Login;
use crate::store::{LockoutStore, StoreResult};

#[async_trait]
impl LockoutStore for DynamoStore {
    async fn record_failed_login(
        &self,
        login: &Login,
        at: UnixTime,
        expires_at: UnixTime,
    ) -> StoreResult<()> {
        // A random suffix keeps two failures in the same second apart.
        let sk = format!(
            "{}#{}",
            keys::failed_login_time(at),
            uuid::Uuid::new_v4().simple()
        );
        let item = to_item(
            &FailedLogin { at, expires_at },
            (keys::failed_logins(login), sk),
        )?;
        self.put("RecordFailedLogin", item).await
    }

    async fn count_failed_logins(&self, login: &Login, since: UnixTime) -> StoreResult<u32> {
        let mut total: u32 = 0;
        let mut start = None;
        loop {
            let out = self
                .client
                .query()
                .table_name(&self.table)
                .key_condition_expression("pk = :pk AND sk >= :since")
                .expression_attribute_values(":pk", s(keys::failed_logins(login)))
                .expression_attribute_values(":since", s(keys::failed_login_time(since)))
                .select(Select::Count)
                .consistent_read(true)
                .set_exclusive_start_key(start)
                .send()
                .await
                .map_err(|e| store_error("CountFailedLogins", e))?;
            total = total.saturating_add(u32::try_from(out.count).unwrap_or(0));
            match out.last_evaluated_key {
                Some(next) if !next.is_empty() => start = Some(next),
                _ => return Ok(total),
            }
        }
    }
}
