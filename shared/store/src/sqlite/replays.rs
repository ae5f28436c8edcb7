//! Used `jti`s on SQLite: a row of `used_jtis` per key, inserted, or replaced when the stored
//! one has expired, by one upsert in the group transaction.

use async_trait::async_trait;
use rusqlite::{params, OptionalExtension, Transaction};

use super::{map_err, SqliteStore};
use crate::clock::UnixTime;
use crate::{FirstUse, ReplayKey, ReplayStore, StoreResult};

#[async_trait]
impl ReplayStore for SqliteStore {
    async fn first_use(
        &self,
        key: &ReplayKey,
        expires_at: UnixTime,
        now: UnixTime,
    ) -> StoreResult<bool> {
        let first_use = FirstUse {
            key: key.clone(),
            expires_at,
            now,
        };
        self.write_tx(move |tx| first_use_in(tx, &first_use)).await
    }
}

/// Marks the key used in `tx`: `false` if an unexpired use is stored.
pub(super) fn first_use_in(tx: &Transaction<'_>, first_use: &FirstUse) -> StoreResult<bool> {
    // `RETURNING` yields a row only when the insert or the update happened; an update whose
    // `WHERE` fails (the use has not expired) yields none.
    let key = first_use.key.stored();
    let marked: Option<i64> = tx
        .prepare_cached(
            "INSERT INTO used_jtis (key, expires_at) VALUES (?1, ?2)
             ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at
             WHERE used_jtis.expires_at <= ?3
             RETURNING expires_at",
        )
        .and_then(|mut stmt| {
            stmt.query_row(params![key, first_use.expires_at, first_use.now], |row| {
                row.get(0)
            })
            .optional()
        })
        .map_err(map_err)?;
    Ok(marked.is_some())
}
