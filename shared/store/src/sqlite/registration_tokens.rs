//! Initial access tokens on SQLite: a row of `registration_tokens` per digest, swept after its
//! expiry.

use async_trait::async_trait;
use rusqlite::{params, OptionalExtension};

use super::{map_err, SqliteStore};
use crate::clock::UnixTime;
use crate::secrets::TokenHash;
use crate::{RegistrationTokenStore, StoreResult};

#[async_trait]
impl RegistrationTokenStore for SqliteStore {
    async fn put_registration_token(
        &self,
        hash: &TokenHash,
        expires_at: UnixTime,
    ) -> StoreResult<()> {
        let hash = hash.to_hex();
        self.write_tx(move |tx| {
            tx.prepare_cached(
                "INSERT OR REPLACE INTO registration_tokens (hash, expires_at) VALUES (?1, ?2)",
            )
            .and_then(|mut stmt| stmt.execute(params![hash, expires_at]))
            .map_err(map_err)?;
            Ok(())
        })
        .await
    }

    async fn registration_token_valid(&self, hash: &TokenHash, now: UnixTime) -> StoreResult<bool> {
        let hash = hash.to_hex();
        self.read(move |conn| {
            let found: Option<i64> = conn
                .prepare_cached(
                    "SELECT expires_at FROM registration_tokens WHERE hash = ?1 AND expires_at > ?2",
                )
                .and_then(|mut stmt| {
                    stmt.query_row(params![hash, now], |row| row.get(0))
                        .optional()
                })
                .map_err(map_err)?;
            Ok(found.is_some())
        })
        .await
    }
}
