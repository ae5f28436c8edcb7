//! Configuration (the services' environment, overridden by the global flags) and the store.

use std::collections::HashMap;

use token_core::config::{Config, StoreKind};
use token_core::context::Context;
use token_store::dynamodb::DynamoStore;
use token_store::sqlite::SqliteStore;

use crate::args::GlobalArgs;
use crate::error::CliError;

/// `Config::from_env`, with each global flag standing in for its variable, so a flag also
/// overrides an invalid value in the environment and everything is validated in one place.
pub fn load_config(global: &GlobalArgs) -> Result<Config, CliError> {
    let mut overrides: HashMap<&str, String> = HashMap::new();
    if let Some(store) = global.store {
        overrides.insert("STORE", store.env_value().to_owned());
    }
    if let Some(table) = &global.table_name {
        overrides.insert("TABLE_NAME", table.clone());
    }
    if let Some(endpoint) = &global.dynamodb_endpoint {
        overrides.insert("DYNAMODB_ENDPOINT", endpoint.clone());
    }
    let mut config = Config::from_lookup(|name| {
        overrides
            .get(name)
            .cloned()
            .or_else(|| std::env::var(name).ok())
    })?;
    if let Some(dir) = &global.data_dir {
        config.data_dir.clone_from(dir);
    }
    Ok(config)
}

/// The backend named by the configuration, concretely: `table create` needs the DynamoDB one,
/// and creates the table on AWS too (`store::open` creates it only on DynamoDB Local).
pub enum Backend {
    Sqlite(SqliteStore),
    Dynamo(DynamoStore),
}

impl Backend {
    /// Opening the embedded store creates its file and schema.
    pub async fn open(config: &Config) -> Result<Self, CliError> {
        match config.store {
            StoreKind::Sqlite => {
                let data_dir = config.data_dir.clone();
                let store =
                    tokio::task::spawn_blocking(move || SqliteStore::open_in_dir(&data_dir))
                        .await
                        .map_err(|e| {
                            CliError::other(format!("opening the embedded store: {e}"))
                        })??;
                Ok(Self::Sqlite(store))
            }
            StoreKind::DynamoDb => Ok(Self::Dynamo(
                DynamoStore::connect(&config.table_name, config.dynamodb_endpoint.as_deref()).await,
            )),
        }
    }
}

/// The context the admin operations take: the configured store (as every service opens it),
/// real time, OS randomness.
pub async fn context(config: &Config) -> Result<Context, CliError> {
    Ok(Context::new(
        token_store::open(&config.store_location()).await?,
    ))
}
