//! Configuration (the services' environment, overridden by the global flags) and the store.

use std::sync::Arc;
use token_core::config::{Config, Environment, StoreKind};

use token_core::context::Context;
use token_core::services::Services;
use token_store::dynamodb::DynamoStore;
use token_store::sqlite::SqliteStore;

use crate::args::GlobalArgs;
use crate::error::CliError;

/// The services' configuration from the environment, where each global flag stands for its
/// variable: clap resolves a flag against its variable (`#[arg(env)]`, the flag wins), so a
/// flag also overrides an invalid value in the environment, and everything is validated in one
/// place.
pub fn load_config(global: &GlobalArgs) -> Result<Config, CliError> {
    let mut environment = Environment::of_process();
    let flags = [
        ("STORE", global.store.clone()),
        ("DATA_DIR", global.data_dir.clone()),
        ("TABLE_NAME", global.table_name.clone()),
        ("DYNAMODB_ENDPOINT", global.dynamodb_endpoint.clone()),
    ];
    for (name, value) in flags {
        if let Some(value) = value {
            environment.set(name, value);
        }
    }
    Ok(Config::read(&environment)?)
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
        match config.store.kind {
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
                DynamoStore::connect(
                    &config.store.table_name,
                    config.store.dynamodb_endpoint.as_deref(),
                )
                .await,
            )),
        }
    }
}

/// The whole service, as the token function starts it (signing keys, mailer, logout
/// deliveries), for the verbs that end sessions or mail the user.
pub async fn services(config: &Config) -> Result<Arc<Services>, CliError> {
    token_adapters::bootstrap::services(config)
        .await
        .map_err(|error| CliError::other(format!("starting the service: {error:#}")))
}

/// The context the admin operations take: the configured store (as every service opens it),
/// real time, OS randomness.
pub async fn context(config: &Config) -> Result<Context, CliError> {
    Ok(Context::new(
        token_store::open(&config.store_location()).await?,
    ))
}
