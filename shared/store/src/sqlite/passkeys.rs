//! Passkeys on SQLite: a row per user and credential id with the record as its JSON body (a
//! change reads and writes it in one transaction of the serialised writer); ceremonies a row per
//! id digest, taken by a single `DELETE ... RETURNING` whose `WHERE` holds the expiry, as
//! DynamoDB's conditional delete does.

use async_trait::async_trait;
use rusqlite::{params, OptionalExtension};

use super::{from_json, id_to_sql, map_err, to_json, SqliteStore};
use crate::clock::UnixTime;
use crate::domain::{PasskeyCeremony, PasskeyCredential, PrincipalId};
use crate::secrets::TokenHash;
use crate::{PasskeyStore, StoreResult};

/// Applies `change` to the stored passkey within one write transaction; `false` if there is none.
async fn update(
    store: &SqliteStore,
    principal: &PrincipalId,
    credential_id: &str,
    change: impl FnOnce(&mut PasskeyCredential) + Send + 'static,
) -> StoreResult<bool> {
    let (principal, credential) = (id_to_sql(principal), credential_id.to_owned());
    store
        .write_tx(move |tx| {
            let body: Option<String> = tx
                .prepare_cached(
                    "SELECT body FROM passkeys WHERE principal_id = ?1 AND credential_id = ?2",
                )
                .and_then(|mut stmt| {
                    stmt.query_row(params![principal, credential], |row| row.get(0))
                        .optional()
                })
                .map_err(map_err)?;
            let Some(body) = body else {
                return Ok(false);
            };
            let mut passkey: PasskeyCredential = from_json(&body)?;
            change(&mut passkey);
            let body = to_json(&passkey)?;
            tx.prepare_cached(
                "UPDATE passkeys SET body = ?3 WHERE principal_id = ?1 AND credential_id = ?2",
            )
            .and_then(|mut stmt| stmt.execute(params![principal, credential, body]))
            .map_err(map_err)?;
            Ok(true)
        })
        .await
}

#[async_trait]
impl PasskeyStore for SqliteStore {
    async fn put_passkey(&self, passkey: &PasskeyCredential) -> StoreResult<bool> {
        let params = (
            id_to_sql(&passkey.principal_id),
            passkey.credential_id.clone(),
            passkey.created_at,
            to_json(passkey)?,
        );
        let inserted = self
            .execute(
                "INSERT INTO passkeys (principal_id, credential_id, created_at, body) \
                 VALUES (?1, ?2, ?3, ?4) ON CONFLICT (principal_id, credential_id) DO NOTHING",
                params,
            )
            .await?;
        Ok(inserted == 1)
    }

    async fn get_passkey(
        &self,
        principal: &PrincipalId,
        credential_id: &str,
    ) -> StoreResult<Option<PasskeyCredential>> {
        self.get_body(
            "SELECT body FROM passkeys WHERE principal_id = ?1 AND credential_id = ?2",
            (id_to_sql(principal), credential_id.to_owned()),
        )
        .await
    }

    async fn list_passkeys(&self, principal: &PrincipalId) -> StoreResult<Vec<PasskeyCredential>> {
        let principal = id_to_sql(principal);
        let mut passkeys: Vec<PasskeyCredential> = self
            .read(move |conn| {
                let bodies: Vec<String> = conn
                    .prepare_cached("SELECT body FROM passkeys WHERE principal_id = ?1")
                    .and_then(|mut stmt| {
                        stmt.query_map(params![principal], |row| row.get(0))?
                            .collect()
                    })
                    .map_err(map_err)?;
                bodies.iter().map(|body| from_json(body)).collect()
            })
            .await?;
        passkeys.sort_by(|a, b| {
            (a.created_at, &a.credential_id).cmp(&(b.created_at, &b.credential_id))
        });
        Ok(passkeys)
    }

    async fn rename_passkey(
        &self,
        principal: &PrincipalId,
        credential_id: &str,
        name: &str,
    ) -> StoreResult<bool> {
        let name = name.to_owned();
        update(self, principal, credential_id, move |passkey| {
            passkey.name = name;
        })
        .await
    }

    async fn record_passkey_use(
        &self,
        principal: &PrincipalId,
        credential_id: &str,
        passkey: &str,
        used_at: UnixTime,
    ) -> StoreResult<bool> {
        let serialised = passkey.to_owned();
        update(self, principal, credential_id, move |passkey| {
            passkey.passkey = serialised;
            passkey.last_used_at = Some(used_at);
        })
        .await
    }

    async fn delete_passkey(
        &self,
        principal: &PrincipalId,
        credential_id: &str,
    ) -> StoreResult<Option<PasskeyCredential>> {
        let (principal, credential) = (id_to_sql(principal), credential_id.to_owned());
        self.write_tx(move |tx| {
            let body: Option<String> = tx
                .prepare_cached(
                    "DELETE FROM passkeys WHERE principal_id = ?1 AND credential_id = ?2 \
                     RETURNING body",
                )
                .and_then(|mut stmt| {
                    stmt.query_row(params![principal, credential], |row| row.get(0))
                        .optional()
                })
                .map_err(map_err)?;
            body.map(|body| from_json(&body)).transpose()
        })
        .await
    }

    async fn put_passkey_ceremony(&self, ceremony: &PasskeyCeremony) -> StoreResult<()> {
        let params = (
            ceremony.id_hash.to_hex(),
            ceremony.expires_at,
            to_json(ceremony)?,
        );
        self.execute(
            "INSERT INTO passkey_ceremonies (id_hash, expires_at, body) VALUES (?1, ?2, ?3)",
            params,
        )
        .await?;
        Ok(())
    }

    async fn take_passkey_ceremony(
        &self,
        id_hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<PasskeyCeremony>> {
        let hash = id_hash.to_hex();
        self.write_tx(move |tx| {
            let body: Option<String> = tx
                .prepare_cached(
                    "DELETE FROM passkey_ceremonies WHERE id_hash = ?1 AND expires_at > ?2 \
                     RETURNING body",
                )
                .and_then(|mut stmt| {
                    stmt.query_row(params![hash, now], |row| row.get(0))
                        .optional()
                })
                .map_err(map_err)?;
            body.map(|body| from_json(&body)).transpose()
        })
        .await
    }
}
