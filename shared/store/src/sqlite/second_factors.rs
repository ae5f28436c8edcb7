//! Authenticator apps on SQLite: the record is the JSON body; each use reads and writes it in
//! one transaction of the serialised writer, so two uses never both succeed.

use async_trait::async_trait;
use rusqlite::{params, OptionalExtension};

use super::{from_json, id_to_sql, map_err, to_json, SqliteStore};
use crate::domain::{PrincipalId, TotpFactor};
use crate::secrets::TokenHash;
use crate::{SecondFactorStore, StoreResult};

fn stored(tx: &rusqlite::Transaction<'_>, principal: &str) -> StoreResult<Option<TotpFactor>> {
    let body: Option<String> = tx
        .prepare_cached("SELECT body FROM totp_factors WHERE principal_id = ?1")
        .and_then(|mut stmt| {
            stmt.query_row(params![principal], |row| row.get(0))
                .optional()
        })
        .map_err(map_err)?;
    body.map(|body| from_json(&body)).transpose()
}

fn save(tx: &rusqlite::Transaction<'_>, factor: &TotpFactor) -> StoreResult<()> {
    let body = to_json(factor)?;
    tx.prepare_cached("UPDATE totp_factors SET body = ?2 WHERE principal_id = ?1")
        .and_then(|mut stmt| stmt.execute(params![id_to_sql(&factor.principal_id), body]))
        .map_err(map_err)?;
    Ok(())
}

#[async_trait]
impl SecondFactorStore for SqliteStore {
    async fn put_totp_factor(&self, factor: &TotpFactor) -> StoreResult<bool> {
        let inserted = self
            .execute(
                "INSERT INTO totp_factors (principal_id, body) VALUES (?1, ?2) \
                 ON CONFLICT (principal_id) DO NOTHING",
                (id_to_sql(&factor.principal_id), to_json(factor)?),
            )
            .await?;
        Ok(inserted > 0)
    }

    async fn get_totp_factor(&self, principal: &PrincipalId) -> StoreResult<Option<TotpFactor>> {
        self.get_body(
            "SELECT body FROM totp_factors WHERE principal_id = ?1",
            (id_to_sql(principal),),
        )
        .await
    }

    async fn use_totp_step(&self, principal: &PrincipalId, step: i64) -> StoreResult<bool> {
        let principal = id_to_sql(principal);
        self.write_tx(move |tx| {
            let Some(mut factor) = stored(tx, &principal)? else {
                return Ok(false);
            };
            if factor.last_used_step >= step {
                return Ok(false);
            }
            factor.last_used_step = step;
            save(tx, &factor)?;
            Ok(true)
        })
        .await
    }

    async fn release_totp_step(
        &self,
        principal: &PrincipalId,
        step: i64,
        previous: i64,
    ) -> StoreResult<bool> {
        let principal = id_to_sql(principal);
        self.write_tx(move |tx| {
            let Some(mut factor) = stored(tx, &principal)? else {
                return Ok(false);
            };
            if factor.last_used_step != step {
                return Ok(false);
            }
            factor.last_used_step = previous;
            save(tx, &factor)?;
            Ok(true)
        })
        .await
    }

    async fn use_recovery_code(
        &self,
        principal: &PrincipalId,
        hash: &TokenHash,
    ) -> StoreResult<bool> {
        let (principal, hash) = (id_to_sql(principal), hash.clone());
        self.write_tx(move |tx| {
            let Some(mut factor) = stored(tx, &principal)? else {
                return Ok(false);
            };
            let Some(index) = factor.recovery_codes.iter().position(|code| *code == hash) else {
                return Ok(false);
            };
            factor.recovery_codes.remove(index);
            save(tx, &factor)?;
            Ok(true)
        })
        .await
    }

    async fn delete_totp_factor(&self, principal: &PrincipalId) -> StoreResult<bool> {
        let deleted = self
            .execute(
                "DELETE FROM totp_factors WHERE principal_id = ?1",
                (id_to_sql(principal),),
            )
            .await?;
        Ok(deleted > 0)
    }
}
