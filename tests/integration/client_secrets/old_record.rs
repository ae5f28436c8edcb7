//! A client record as the code before several secrets wrote it: one `secret_hash`, no
//! `secrets`, no `secrets_version`. Written below the `Store` trait, on both stores.

use std::path::PathBuf;

use token_domain::secrets::TokenHash;
use token_domain::{Client, ClientSecrets};
use token_store::dynamodb::sdk::types::AttributeValue;
use token_store::dynamodb::DynamoStore;
use token_store::Store;

/// Where the raw record is rewritten.
pub enum Raw<'a> {
    SqliteFile(PathBuf),
    Dynamo(&'a DynamoStore),
}

/// Stores `client` with the single secret `secret` in the earlier shape.
pub async fn write(store: &dyn Store, raw: Raw<'_>, mut client: Client, secret: &str) -> Client {
    client.secrets = ClientSecrets::from_single_hash(TokenHash::of(secret));
    store.clients().put_client(&client).await.unwrap();
    // The earlier code wrote no version: take it out below the trait.
    match raw {
        Raw::SqliteFile(path) => {
            let connection = rusqlite::Connection::open(&path).unwrap();
            let changed = connection
                .execute(
                    "UPDATE clients SET body = json_remove(body, '$.secrets_version') WHERE id = ?1",
                    [client.id.to_string()],
                )
                .unwrap();
            assert_eq!(changed, 1);
            let body: String = connection
                .query_row(
                    "SELECT body FROM clients WHERE id = ?1",
                    [client.id.to_string()],
                    |row| row.get(0),
                )
                .unwrap();
            let body: serde_json::Value = serde_json::from_str(&body).unwrap();
            assert_old_shape(body.as_object().unwrap().keys().map(String::as_str));
        }
        Raw::Dynamo(raw) => {
            let item = raw
                .client()
                .update_item()
                .table_name(raw.table_name())
                .key("pk", AttributeValue::S(format!("CLIENT#{}", client.id)))
                .key("sk", AttributeValue::S("CLIENT".into()))
                .update_expression("REMOVE secrets_version")
                .return_values(token_store::dynamodb::sdk::types::ReturnValue::AllNew)
                .send()
                .await
                .unwrap()
                .attributes
                .unwrap();
            assert_old_shape(item.keys().map(String::as_str));
        }
    }
    client
}

fn assert_old_shape<'a>(fields: impl Iterator<Item = &'a str>) {
    let fields: Vec<&str> = fields.collect();
    assert!(fields.contains(&"secret_hash"), "{fields:?}");
    assert!(!fields.contains(&"secrets"), "{fields:?}");
    assert!(!fields.contains(&"secrets_version"), "{fields:?}");
}

/// A raw handle on a test app's store.
pub fn raw_of(data: &crate::support::stored_data::StoredData) -> Raw<'_> {
    use crate::support::stored_data::StoredData;
    match data {
        StoredData::Sqlite(dir) => Raw::SqliteFile(dir.path().join(token_store::sqlite::FILE_NAME)),
        StoredData::Dynamo(store) => Raw::Dynamo(store),
        StoredData::Opaque => panic!("no raw handle on this store"),
    }
}
