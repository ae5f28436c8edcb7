//! Failed logins on SQLite.

use async_trait::async_trait;
use rusqlite::params;

use super::{map_err, SqliteStore};
use crate::clock::UnixTime;
use crate::domain::Login;
use crate::store::{LockoutStore, StoreResult};

#[async_trait]
impl LockoutStore for SqliteStore {
    async fn record_failed_login(
        &self,
        login: &Login,
        at: UnixTime,
        expires_at: UnixTime,
    ) -> StoreResult<()> {
        let login = login.as_str().to_owned();
        self.write_tx(move |tx| {
            // SQLite has no TTL: drop this login's expired failures as new ones arrive, so the
            // table stays as small as the lockout window.
            tx.prepare_cached("DELETE FROM failed_logins WHERE login = ?1 AND expires_at <= ?2")
                .and_then(|mut stmt| stmt.execute(params![login, at]))
                .map_err(map_err)?;
            tx.prepare_cached(
                "INSERT INTO failed_logins (login, at, expires_at) VALUES (?1, ?2, ?3)",
            )
            .and_then(|mut stmt| stmt.execute(params![login, at, expires_at]))
            .map_err(map_err)?;
            Ok(())
        })
        .await
    }

    async fn count_failed_logins(&self, login: &Login, since: UnixTime) -> StoreResult<u32> {
        let login = login.as_str().to_owned();
        self.with_conn(move |conn| {
            conn.prepare_cached("SELECT COUNT(*) FROM failed_logins WHERE login = ?1 AND at >= ?2")
                .and_then(|mut stmt| stmt.query_row(params![login, since], |row| row.get(0)))
                .map_err(map_err)
        })
        .await
    }
}
