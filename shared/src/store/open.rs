//! Opens the backend the configuration names (`STORE`), for every binary alike.

use std::sync::Arc;

use super::dynamodb::DynamoStore;
use super::sqlite::SqliteStore;
use super::{Store, StoreResult};
use crate::config::{Config, StoreKind};

/// The embedded SQLite store under `DATA_DIR`, or the DynamoDB table `TABLE_NAME`.
///
/// In AWS the deployment template owns the table, so opening it makes no request. With
/// `DYNAMODB_ENDPOINT` (DynamoDB Local, which starts empty) the table is created if missing, so
/// that local use needs no setup step.
pub async fn open(config: &Config) -> StoreResult<Arc<dyn Store>> {
    Ok(match config.store {
        StoreKind::Sqlite => Arc::new(SqliteStore::open_in_dir(&config.data_dir)?),
        StoreKind::DynamoDb => {
            let endpoint = config.dynamodb_endpoint.as_deref();
            let store = DynamoStore::connect(&config.table_name, endpoint).await;
            if endpoint.is_some() {
                store.create_table_if_missing().await?;
            }
            Arc::new(store)
        }
    })
}
