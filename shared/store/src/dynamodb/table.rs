//! Creating the table (DynamoDB Local, tests) with its key schema and TTL.

use std::time::Duration;

use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, KeySchemaElement, KeyType, ScalarAttributeType, TableStatus,
    TimeToLiveSpecification, TimeToLiveStatus,
};

use super::codec::{PK, SK};
use super::errors::{build_error, store_error};
use super::{DynamoStore, TTL_ATTRIBUTE};
use crate::{StoreError, StoreResult};

/// How long `create_table_if_missing` waits for a new table to become ACTIVE (seconds on AWS,
/// instant on DynamoDB Local).
const TABLE_ACTIVE_TIMEOUT: Duration = Duration::from_secs(120);

impl DynamoStore {
    /// Creates the table (on demand capacity) if it does not exist, waits until it is ACTIVE and
    /// enables TTL on `expires_at`. Safe to call on a table that already exists.
    pub async fn create_table_if_missing(&self) -> StoreResult<()> {
        let attribute = |name: &str| {
            AttributeDefinition::builder()
                .attribute_name(name)
                .attribute_type(ScalarAttributeType::S)
                .build()
                .map_err(build_error)
        };
        let key_element = |name: &str, key_type| {
            KeySchemaElement::builder()
                .attribute_name(name)
                .key_type(key_type)
                .build()
                .map_err(build_error)
        };
        let created = self
            .client
            .create_table()
            .table_name(&self.table)
            .billing_mode(BillingMode::PayPerRequest)
            .attribute_definitions(attribute(PK)?)
            .attribute_definitions(attribute(SK)?)
            .key_schema(key_element(PK, KeyType::Hash)?)
            .key_schema(key_element(SK, KeyType::Range)?)
            .send()
            .await;
        match created {
            Ok(_) => {}
            Err(e)
                if e.as_service_error()
                    .is_some_and(|e| e.is_resource_in_use_exception()) => {}
            Err(e) => return Err(store_error("CreateTable", e)),
        }
        self.wait_until_active().await?;
        self.enable_ttl().await
    }

    async fn wait_until_active(&self) -> StoreResult<()> {
        let deadline = tokio::time::Instant::now() + TABLE_ACTIVE_TIMEOUT;
        loop {
            let described = self
                .client
                .describe_table()
                .table_name(&self.table)
                .send()
                .await;
            let status = match described {
                Ok(out) => out.table.and_then(|t| t.table_status),
                // Just created: AWS may not list it for a moment.
                Err(e)
                    if e.as_service_error()
                        .is_some_and(|e| e.is_resource_not_found_exception()) =>
                {
                    None
                }
                Err(e) => return Err(store_error("DescribeTable", e)),
            };
            if status == Some(TableStatus::Active) {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(StoreError::unavailable(format!(
                    "table {} not ACTIVE after {}s (status {status:?})",
                    self.table,
                    TABLE_ACTIVE_TIMEOUT.as_secs()
                )));
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    async fn enable_ttl(&self) -> StoreResult<()> {
        let described = self
            .client
            .describe_time_to_live()
            .table_name(&self.table)
            .send()
            .await
            .map_err(|e| store_error("DescribeTimeToLive", e))?;
        let (status, attribute) = described
            .time_to_live_description
            .map(|d| (d.time_to_live_status, d.attribute_name))
            .unwrap_or_default();
        if matches!(
            status,
            Some(TimeToLiveStatus::Enabled | TimeToLiveStatus::Enabling)
        ) {
            // A TTL on another attribute would silently keep every expired item forever.
            return match attribute.as_deref() {
                Some(TTL_ATTRIBUTE) | None => Ok(()),
                Some(other) => Err(StoreError::internal(format!(
                    "table {} has TTL on `{other}`, expected `{TTL_ATTRIBUTE}`",
                    self.table
                ))),
            };
        }
        let specification = TimeToLiveSpecification::builder()
            .enabled(true)
            .attribute_name(TTL_ATTRIBUTE)
            .build()
            .map_err(build_error)?;
        match self
            .client
            .update_time_to_live()
            .table_name(&self.table)
            .time_to_live_specification(specification)
            .send()
            .await
        {
            Ok(_) => Ok(()),
            // Another process enabled it between our describe and update.
            Err(e)
                if e.code() == Some("ValidationException")
                    && e.message().is_some_and(|m| m.contains("already enabled")) =>
            {
                Ok(())
            }
            Err(e) => Err(store_error("UpdateTimeToLive", e)),
        }
    }
}
