//! Legacy apps, imported legacy tokens and their exchanges on SQLite.

use async_trait::async_trait;
use rusqlite::OptionalExtension;

use super::id_to_sql;
use super::{map_err, to_json, SqliteStore};
use crate::clock::UnixTime;
use crate::domain::{ConsumerKey, FamilyId, LegacyApp, LegacyExchange, LegacyToken};
use crate::secrets::TokenHash;
use crate::{LegacyLink, LegacyStore, StoreError, StoreResult};

/// Rows per transaction in a legacy import: large enough that a commit's fsync is amortised,
/// small enough that the other process never waits long for the write lock.
const IMPORT_BATCH: usize = 1_000;

/// Moves an exchange link inside a batch's transaction: `false` when the link is no longer
/// where the caller saw it (another exchange moved it first), checked before writing.
pub(super) fn move_link_in(tx: &rusqlite::Transaction<'_>, link: &LegacyLink) -> StoreResult<bool> {
    let exchange = &link.exchange;
    let linked: Option<String> = tx
        .prepare_cached("SELECT family_id FROM legacy_exchanges WHERE token_hash = ?1")
        .and_then(|mut stmt| {
            stmt.query_row([exchange.token_hash.to_hex()], |row| row.get(0))
                .optional()
        })
        .map_err(map_err)?;
    if linked != link.previous_family.as_ref().map(id_to_sql) {
        return Ok(false);
    }
    tx.prepare_cached(
        "INSERT OR REPLACE INTO legacy_exchanges (token_hash, family_id, exchanged_at)
         VALUES (?1, ?2, ?3)",
    )
    .and_then(|mut stmt| {
        stmt.execute(rusqlite::params![
            exchange.token_hash.to_hex(),
            id_to_sql(&exchange.family_id),
            exchange.exchanged_at,
        ])
    })
    .map_err(map_err)?;
    Ok(true)
}

#[async_trait]
impl LegacyStore for SqliteStore {
    async fn put_legacy_app(&self, app: &LegacyApp) -> StoreResult<()> {
        let params = (app.consumer_key.as_str().to_owned(), to_json(app)?);
        self.execute(
            "INSERT OR REPLACE INTO legacy_apps (consumer_key, body) VALUES (?1, ?2)",
            params,
        )
        .await?;
        Ok(())
    }

    async fn get_legacy_app(&self, key: &ConsumerKey) -> StoreResult<Option<LegacyApp>> {
        self.get_body(
            "SELECT body FROM legacy_apps WHERE consumer_key = ?1",
            [key.as_str().to_owned()],
        )
        .await
    }

    async fn put_legacy_tokens(&self, tokens: &[LegacyToken]) -> StoreResult<()> {
        for chunk in tokens.chunks(IMPORT_BATCH) {
            // Serialised before taking the lock, so the lock is held only for the inserts.
            let rows = chunk
                .iter()
                .map(|t| Ok((t.token_hash.to_hex(), t.expires_at, to_json(t)?)))
                .collect::<StoreResult<Vec<_>>>()?;
            // One transaction per chunk, the lock released in between, so the server keeps
            // answering while a large import runs.
            self.write_tx(move |tx| {
                let mut stmt = tx
                    .prepare_cached(
                        "INSERT OR REPLACE INTO legacy_tokens (token_hash, expires_at, body)
                         VALUES (?1, ?2, ?3)",
                    )
                    .map_err(map_err)?;
                for row in rows {
                    stmt.execute(row).map_err(map_err)?;
                }
                Ok(())
            })
            .await?;
        }
        Ok(())
    }

    async fn get_legacy_token(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<LegacyToken>> {
        self.get_body(
            "SELECT body FROM legacy_tokens
             WHERE token_hash = ?1 AND (expires_at IS NULL OR expires_at > ?2)",
            (hash.to_hex(), now),
        )
        .await
    }

    async fn get_legacy_exchange(&self, hash: &TokenHash) -> StoreResult<Option<LegacyExchange>> {
        let hex = hash.to_hex();
        let token_hash = hash.clone();
        let row: Option<(String, UnixTime)> = self
            .read(move |conn| {
                conn.prepare_cached(
                    "SELECT family_id, exchanged_at FROM legacy_exchanges WHERE token_hash = ?1",
                )
                .and_then(|mut stmt| {
                    stmt.query_row([hex], |row| Ok((row.get(0)?, row.get(1)?)))
                        .optional()
                })
                .map_err(map_err)
            })
            .await?;
        row.map(|(family_id, exchanged_at)| {
            Ok(LegacyExchange {
                token_hash,
                family_id: FamilyId::parse(&family_id)
                    .map_err(|_| StoreError::Internal("malformed stored family id".into()))?,
                exchanged_at,
            })
        })
        .transpose()
    }
}
