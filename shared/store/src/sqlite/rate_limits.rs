//! Rate-limit counters on SQLite: one row per counter and window, incremented by one upsert
//! whose update only applies below the limit, in the group transaction (atomic across
//! connections and processes). A block is a row of `rate_blocks` whose `expires_at` is its end.

use async_trait::async_trait;
use rusqlite::{params, OptionalExtension, Transaction};

use super::{map_err, SqliteStore};
use crate::clock::UnixTime;
use crate::rate_limits::retry_after;
use crate::{Hit, RateKey, RateLimit, RateLimitStore, StoreResult};

#[async_trait]
impl RateLimitStore for SqliteStore {
    async fn count_hit(&self, key: &RateKey, limit: RateLimit, now: UnixTime) -> StoreResult<Hit> {
        let key = key.stored();
        self.write_tx(move |tx| count_hit_in(tx, &key, limit, now))
            .await
    }

    async fn refund_hit(&self, key: &RateKey, limit: RateLimit, at: UnixTime) -> StoreResult<()> {
        self.execute(
            "UPDATE rate_windows SET hits = hits - 1
             WHERE key = ?1 AND window_start = ?2 AND hits > 0",
            (key.stored(), limit.window_start(at)),
        )
        .await?;
        Ok(())
    }

    async fn block_until(&self, key: &RateKey, until: UnixTime) -> StoreResult<()> {
        self.execute(
            "INSERT INTO rate_blocks (key, expires_at) VALUES (?1, ?2)
             ON CONFLICT (key) DO UPDATE SET expires_at = max(expires_at, excluded.expires_at)",
            (key.stored(), until),
        )
        .await?;
        Ok(())
    }

    async fn blocked_until(&self, key: &RateKey, now: UnixTime) -> StoreResult<Option<UnixTime>> {
        let key = key.stored();
        self.read(move |conn| {
            conn.prepare_cached(
                "SELECT expires_at FROM rate_blocks WHERE key = ?1 AND expires_at > ?2",
            )
            .and_then(|mut stmt| {
                stmt.query_row(params![key, now], |row| row.get(0))
                    .optional()
            })
            .map_err(map_err)
        })
        .await
    }
}

/// Counts one hit on the counter stored as `key`, inside the write transaction `tx`.
pub(super) fn count_hit_in(
    tx: &Transaction<'_>,
    key: &str,
    limit: RateLimit,
    now: UnixTime,
) -> StoreResult<Hit> {
    let (start, end) = (limit.window_start(now), limit.window_end(now));
    let counted: Option<u32> = tx
        .prepare_cached(
            "INSERT INTO rate_windows (key, window_start, hits, expires_at)
             VALUES (?1, ?2, 1, ?3)
             ON CONFLICT (key, window_start) DO UPDATE SET hits = hits + 1
             WHERE hits < ?4
             RETURNING hits",
        )
        .and_then(|mut stmt| {
            stmt.query_row(params![key, start, end, limit.max], |row| row.get(0))
                .optional()
        })
        .map_err(map_err)?;
    Ok(match counted {
        Some(count) => Hit::Counted { count },
        None => Hit::Refused {
            retry_after: retry_after(end, now),
        },
    })
}
