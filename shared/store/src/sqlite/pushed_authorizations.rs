//! Pushed authorization requests on SQLite: a row per `request_uri` digest with the record as its
//! JSON body; taking one is a single `DELETE ... RETURNING` whose `WHERE` holds the client and
//! expiry conditions, as DynamoDB's conditional delete does.

use async_trait::async_trait;
use rusqlite::{params, OptionalExtension};

use super::{from_json, map_err, to_json, SqliteStore};
use crate::clock::UnixTime;
use crate::domain::{ClientId, PushedAuthorization};
use crate::secrets::TokenHash;
use crate::{PushedAuthorizationStore, StoreResult};

#[async_trait]
impl PushedAuthorizationStore for SqliteStore {
    async fn put_pushed_authorization(&self, record: &PushedAuthorization) -> StoreResult<()> {
        let params = (
            record.request_uri_hash.to_hex(),
            record.client_id.to_string(),
            record.expires_at,
            to_json(record)?,
        );
        self.execute(
            "INSERT INTO pushed_authorizations (request_uri_hash, client_id, expires_at, body) \
             VALUES (?1, ?2, ?3, ?4)",
            params,
        )
        .await?;
        Ok(())
    }

    async fn take_pushed_authorization(
        &self,
        request_uri_hash: &TokenHash,
        client_id: &ClientId,
        now: UnixTime,
    ) -> StoreResult<Option<PushedAuthorization>> {
        let hash = request_uri_hash.to_hex();
        let client = client_id.to_string();
        self.write_tx(move |tx| {
            let body: Option<String> = tx
                .prepare_cached(
                    "DELETE FROM pushed_authorizations \
                     WHERE request_uri_hash = ?1 AND client_id = ?2 AND expires_at > ?3 \
                     RETURNING body",
                )
                .and_then(|mut stmt| {
                    stmt.query_row(params![hash, client, now], |row| row.get(0))
                        .optional()
                })
                .map_err(map_err)?;
            body.map(|body| from_json(&body)).transpose()
        })
        .await
    }
}
