//! Clients on SQLite: one JSON body per client. Conditional writes compare the body's
//! `secrets_version` (absent in records written before clients had several secrets: 0).

use async_trait::async_trait;

use super::{id_to_sql, to_json, SqliteStore};
use crate::clients::secrets_changed_meanwhile;
use crate::clock::UnixTime;
use crate::domain::{Client, ClientId, ClientSecrets, SecretId, LAST_USED_RESOLUTION_SECONDS};
use crate::secrets::TokenHash;
use crate::{ClientStore, StoreError, StoreResult};

#[async_trait]
impl ClientStore for SqliteStore {
    async fn put_client(&self, client: &Client) -> StoreResult<()> {
        let params = (
            id_to_sql(&client.id),
            to_json(client)?,
            version_to_sql(client.secrets.version())?,
        );
        let written = self
            .execute(
                "INSERT INTO clients (id, body) VALUES (?1, ?2) \
                 ON CONFLICT (id) DO UPDATE SET body = excluded.body \
                 WHERE COALESCE(json_extract(clients.body, '$.secrets_version'), 0) = ?3",
                params,
            )
            .await?;
        if written == 0 {
            return Err(secrets_changed_meanwhile());
        }
        Ok(())
    }

    async fn get_client(&self, id: &ClientId) -> StoreResult<Option<Client>> {
        self.get_body("SELECT body FROM clients WHERE id = ?1", [id_to_sql(id)])
            .await
    }

    async fn replace_registered_client(
        &self,
        client: &Client,
        expected_token: &TokenHash,
    ) -> StoreResult<bool> {
        let params = (
            id_to_sql(&client.id),
            to_json(client)?,
            expected_token.to_hex(),
            version_to_sql(client.secrets.version())?,
        );
        let written = self
            .execute(
                "UPDATE clients SET body = ?2 WHERE id = ?1 \
                 AND json_extract(body, '$.registration.access_token_hash') = ?3 \
                 AND COALESCE(json_extract(body, '$.secrets_version'), 0) = ?4",
                params,
            )
            .await?;
        Ok(written == 1)
    }

    async fn list_clients(&self) -> StoreResult<Vec<Client>> {
        let mut clients: Vec<Client> = self
            .read(|conn| {
                conn.prepare_cached("SELECT body FROM clients")
                    .and_then(|mut stmt| {
                        stmt.query_map([], |row| row.get::<_, String>(0))?
                            .collect::<Result<Vec<_>, _>>()
                    })
                    .map_err(super::map_err)?
                    .iter()
                    .map(|body| super::from_json(body))
                    .collect()
            })
            .await?;
        clients.sort_by_key(|client| (client.created_at, client.id));
        Ok(clients)
    }

    async fn replace_client_secrets(
        &self,
        id: &ClientId,
        expected_version: u64,
        secrets: &ClientSecrets,
    ) -> StoreResult<bool> {
        // Remove the old set first: a merge patch keeps the keys it does not name.
        let params = (
            id_to_sql(id),
            version_to_sql(expected_version)?,
            to_json(secrets)?,
        );
        let written = self
            .execute(
                "UPDATE clients \
                 SET body = json_patch(json_remove(body, '$.secret_hash', '$.secrets'), ?3) \
                 WHERE id = ?1 AND COALESCE(json_extract(body, '$.secrets_version'), 0) = ?2",
                params,
            )
            .await?;
        Ok(written == 1)
    }

    async fn record_secret_use(
        &self,
        id: &ClientId,
        secret: &SecretId,
        at: UnixTime,
    ) -> StoreResult<bool> {
        let entry = format!("$.secrets.\"{secret}\"");
        let params = (
            id_to_sql(id),
            format!("{entry}.last_used"),
            at,
            entry,
            at - LAST_USED_RESOLUTION_SECONDS,
        );
        let written = self
            .execute(
                "UPDATE clients SET body = json_set(body, ?2, ?3) \
                 WHERE id = ?1 AND json_type(body, ?4) = 'object' \
                 AND COALESCE(json_extract(body, ?2), ?5) <= ?5",
                params,
            )
            .await?;
        Ok(written == 1)
    }
}

fn version_to_sql(version: u64) -> StoreResult<i64> {
    i64::try_from(version).map_err(|_| StoreError::internal("secrets version out of range"))
}
