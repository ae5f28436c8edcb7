//! `table create`.

use serde_json::json;
use token_core::config::Config;

use crate::args::TableCommand;
use crate::error::CliError;
use crate::output::Output;
use crate::setup::Backend;

pub async fn run(command: TableCommand, config: &Config) -> Result<Output, CliError> {
    match command {
        TableCommand::Create => match Backend::open(config).await? {
            // Opening the embedded store has created its schema.
            Backend::Sqlite(store) => Ok(Output::new(
                json!({ "store": "sqlite", "path": store.path().display().to_string(), "ready": true }),
                format!("Embedded store ready at {}.", store.path().display()),
            )),
            Backend::Dynamo(store) => {
                store.create_table_if_missing().await?;
                Ok(Output::new(
                    json!({ "store": "dynamodb", "table_name": store.table_name(), "ready": true, "ttl_attribute": "expires_at" }),
                    format!(
                        "DynamoDB table {} is ready (TTL on expires_at).",
                        store.table_name()
                    ),
                ))
            }
        },
    }
}
