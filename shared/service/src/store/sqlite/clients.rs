//! Clients on SQLite.

use async_trait::async_trait;

use super::{id_to_sql, to_json, SqliteStore};
use crate::domain::{Client, ClientId};
use crate::store::{ClientStore, StoreResult};

#[async_trait]
impl ClientStore for SqliteStore {
    async fn put_client(&self, client: &Client) -> StoreResult<()> {
        let params = (id_to_sql(&client.id), to_json(client)?);
        self.execute(
            "INSERT OR REPLACE INTO clients (id, body) VALUES (?1, ?2)",
            params,
        )
        .await?;
        Ok(())
    }

    async fn get_client(&self, id: &ClientId) -> StoreResult<Option<Client>> {
        self.get_body("SELECT body FROM clients WHERE id = ?1", [id_to_sql(id)])
            .await
    }
}
