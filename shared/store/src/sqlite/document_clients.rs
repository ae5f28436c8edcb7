//! Clients of metadata documents on SQLite: a row of `document_clients` per client id with the
//! record as its JSON body, swept after its expiry.

use async_trait::async_trait;
use rusqlite::{params, OptionalExtension};

use super::{from_json, map_err, to_json, SqliteStore};
use crate::clock::UnixTime;
use crate::domain::{ClientId, DocumentClient};
use crate::{DocumentClientStore, StoreResult};

#[async_trait]
impl DocumentClientStore for SqliteStore {
    async fn put_document_client(&self, record: &DocumentClient) -> StoreResult<()> {
        let params = (
            record.client.id.to_string(),
            record.expires_at,
            to_json(record)?,
        );
        self.execute(
            "INSERT OR REPLACE INTO document_clients (id, expires_at, body) VALUES (?1, ?2, ?3)",
            params,
        )
        .await?;
        Ok(())
    }

    async fn get_document_client(
        &self,
        id: &ClientId,
        now: UnixTime,
    ) -> StoreResult<Option<DocumentClient>> {
        let id = id.to_string();
        self.read(move |conn| {
            let body: Option<String> = conn
                .prepare_cached(
                    "SELECT body FROM document_clients WHERE id = ?1 AND expires_at > ?2",
                )
                .and_then(|mut stmt| {
                    stmt.query_row(params![id, now], |row| row.get(0))
                        .optional()
                })
                .map_err(map_err)?;
            body.map(|body| from_json(&body)).transpose()
        })
        .await
    }
}
