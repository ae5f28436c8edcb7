//! Login attempts on SQLite: one row per login, read and written in one `BEGIN IMMEDIATE`
//! transaction, so that the check and the increment are atomic across connections and
//! processes.

use async_trait::async_trait;
use rusqlite::{params, OptionalExtension};

use super::{map_err, SqliteStore};
use crate::clock::UnixTime;
use crate::domain::Login;
use crate::{AllowedAttempt, Attempt, AttemptLimit, LockoutStore, LoginRefund, StoreResult};

const REFUND: &str = "UPDATE login_attempts SET attempts = attempts - 1
     WHERE login = ?1 AND window_start = ?2 AND attempts > 0";

/// [`LockoutStore::refund_login_attempt`] inside a batch's transaction: `false` when there was
/// nothing to take back (the attempt's window ended).
pub(super) fn refund_in(tx: &rusqlite::Transaction<'_>, refund: &LoginRefund) -> StoreResult<bool> {
    let changed = tx
        .prepare_cached(REFUND)
        .and_then(|mut stmt| {
            stmt.execute(params![refund.login.as_str(), refund.attempt.window_start])
        })
        .map_err(map_err)?;
    Ok(changed > 0)
}

#[async_trait]
impl LockoutStore for SqliteStore {
    async fn register_login_attempt(
        &self,
        login: &Login,
        limit: AttemptLimit,
        now: UnixTime,
    ) -> StoreResult<Attempt> {
        let login = login.as_str().to_owned();
        self.write_tx(move |tx| {
            // SQLite has no TTL: counters whose window ended are dropped as attempts arrive.
            tx.prepare_cached("DELETE FROM login_attempts WHERE expires_at <= ?1")
                .and_then(|mut stmt| stmt.execute(params![now]))
                .map_err(map_err)?;
            let live: Option<(UnixTime, u32)> = tx
                .prepare_cached(
                    "SELECT window_start, attempts FROM login_attempts WHERE login = ?1",
                )
                .and_then(|mut stmt| {
                    stmt.query_row(params![login], |row| Ok((row.get(0)?, row.get(1)?)))
                        .optional()
                })
                .map_err(map_err)?;
            let allowed = match live {
                Some((_, attempts)) if attempts >= limit.threshold => return Ok(Attempt::Locked),
                Some((window_start, attempts)) => AllowedAttempt {
                    count: attempts + 1,
                    window_start,
                },
                None => AllowedAttempt {
                    count: 1,
                    window_start: now,
                },
            };
            tx.prepare_cached(
                "INSERT INTO login_attempts (login, window_start, attempts, expires_at)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (login) DO UPDATE SET attempts = excluded.attempts",
            )
            .and_then(|mut stmt| {
                stmt.execute(params![
                    login,
                    allowed.window_start,
                    allowed.count,
                    allowed.window_start + limit.window_seconds
                ])
            })
            .map_err(map_err)?;
            Ok(Attempt::Allowed(allowed))
        })
        .await
    }

    async fn is_login_locked(
        &self,
        login: &Login,
        limit: AttemptLimit,
        now: UnixTime,
    ) -> StoreResult<bool> {
        let login = login.as_str().to_owned();
        self.read(move |conn| {
            conn.prepare_cached(
                "SELECT 1 FROM login_attempts
                 WHERE login = ?1 AND expires_at > ?2 AND attempts >= ?3",
            )
            .and_then(|mut stmt| stmt.exists(params![login, now, limit.threshold]))
            .map_err(map_err)
        })
        .await
    }

    async fn refund_login_attempt(
        &self,
        login: &Login,
        attempt: &AllowedAttempt,
    ) -> StoreResult<()> {
        let params = (login.as_str().to_owned(), attempt.window_start);
        self.execute(REFUND, params).await?;
        Ok(())
    }
}
