//! Bounded storage: rows that have expired are deleted in the background, in small batches.
//!
//! Readers already treat a row whose `expires_at` has passed as absent (see `store`), so
//! deleting it changes no answer; it only keeps the file from growing with every token ever
//! issued. (On DynamoDB the table's TTL on `expires_at` does the same, days late, which is
//! why reads check expiry themselves.)
//!
//! Each batch is one short `DELETE … LIMIT`-style statement, one write of the file's group
//! commit (the sweeper's store shares the server's writer, `open_files.rs`), so a request's
//! write waits at most one batch, queued behind it like any other write, and never for a lock.

use std::sync::Arc;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension};

use super::{map_err, SqliteStore};
use crate::clock::{Clock, UnixTime};
use crate::StoreResult;

/// A table whose rows expire, and its expiry column (Unix seconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExpiringTable {
    pub table: &'static str,
    pub expires_at: &'static str,
}

const fn expiring(table: &'static str) -> ExpiringTable {
    ExpiringTable {
        table,
        expires_at: "expires_at",
    }
}

/// Every table with expiring rows. A new table of expiring items gets its line here; a test
/// checks that each listed table exists in the schema.
pub const EXPIRING_TABLES: &[ExpiringTable] = &[
    expiring("access_tokens"),
    expiring("refresh_tokens"),
    expiring("families"),
    expiring("auth_tokens"),
    expiring("login_attempts"),
    expiring("legacy_tokens"),
    expiring("otps"),
    expiring("rate_windows"),
    expiring("rate_blocks"),
    expiring("used_jtis"),
    expiring("registration_tokens"),
    expiring("authorization_codes"),
    expiring("device_authorizations"),
    expiring("pushed_authorizations"),
    expiring("passkey_ceremonies"),
    expiring("upstream_requests"),
    expiring("document_clients"),
    expiring("audit_events"),
    expiring("sessions"),
];

/// Rows deleted per write: small enough that the requests' writes committed in the same group
/// wait about a millisecond for it. Rows keyed by a random value (a DPoP proof's `jti`) sit one
/// to a page in the order they expire, so a batch of 500 rewrote about 500 pages and held the
/// group for 5 ms and more.
pub const BATCH_SIZE: u32 = 100;

/// How often the local server sweeps.
pub const SWEEP_INTERVAL: Duration = Duration::from_secs(60);

impl SqliteStore {
    /// Deletes every row that expired before `now` from [`EXPIRING_TABLES`], [`BATCH_SIZE`]
    /// rows per write, and returns how many. Tables this database does not have are left out
    /// (a file written by an older version).
    ///
    /// After each full batch the sweep pauses as long as the batch took, so that it takes at
    /// most about half of the writer's time. Back to back, the batches of a large sweep (93,000
    /// expired DPoP `jti`s, 1.3 s) left the requests' writes too little of it: they queued,
    /// and `client_credentials` with DPoP at half its maximum had a p99 of 540 to 650 ms during
    /// the sweep (docs/benchmarks.md, "The sweeper's pace"). Paced, a sweep takes about twice
    /// as long, and deletes tens of thousands of rows a second.
    pub async fn sweep_expired(&self, now: UnixTime) -> StoreResult<u64> {
        let mut deleted = 0;
        for table in EXPIRING_TABLES {
            loop {
                let started = std::time::Instant::now();
                // One batch per write: other writes are committed in between.
                let batch = self
                    .write_tx(move |tx| delete_batch(tx, table, now))
                    .await?;
                deleted += batch;
                if batch < u64::from(BATCH_SIZE) {
                    break;
                }
                tokio::time::sleep(started.elapsed()).await;
            }
        }
        Ok(deleted)
    }

    /// Sweeps now and then every `interval`, on the time `clock` tells, until the runtime
    /// stops. Creates the expiry indexes first, so a sweep finds its rows without a scan.
    pub fn spawn_sweeper(
        self,
        clock: Arc<dyn Clock>,
        interval: Duration,
    ) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            if let Err(error) = self.write_tx(|tx| create_expiry_indexes(tx)).await {
                tracing::warn!(%error, "cannot index expiry columns; sweeps will scan");
            }
            let mut ticks = tokio::time::interval(interval);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                match self.sweep_expired(clock.now()).await {
                    Ok(0) => {}
                    Ok(deleted) => tracing::debug!(deleted, "swept expired rows"),
                    Err(error) => tracing::warn!(%error, "sweeping expired rows failed"),
                }
            }
        })
    }
}

/// Strictly before `now`: a row expiring this very second still reads as absent, but a failed
/// login exactly at the lockout window's start is still counted, so it is kept one more sweep.
fn delete_batch(conn: &Connection, table: &ExpiringTable, now: UnixTime) -> StoreResult<u64> {
    if !table_exists(conn, table.table)? {
        return Ok(0);
    }
    // Names come from the constant list above, never from input.
    let sql = format!(
        "DELETE FROM {t} WHERE rowid IN (SELECT rowid FROM {t} WHERE {c} < ?1 LIMIT {BATCH_SIZE})",
        t = table.table,
        c = table.expires_at,
    );
    let deleted = conn
        .prepare_cached(&sql)
        .and_then(|mut stmt| stmt.execute([now]))
        .map_err(map_err)?;
    Ok(deleted as u64)
}

fn table_exists(conn: &Connection, table: &str) -> StoreResult<bool> {
    conn.prepare_cached("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1")
        .and_then(|mut stmt| stmt.query_row([table], |_| Ok(())).optional())
        .map(|found| found.is_some())
        .map_err(map_err)
}

fn create_expiry_indexes(conn: &Connection) -> StoreResult<()> {
    for table in EXPIRING_TABLES {
        if table_exists(conn, table.table)? {
            conn.execute_batch(&format!(
                "CREATE INDEX IF NOT EXISTS {t}_by_{c} ON {t} ({c})",
                t = table.table,
                c = table.expires_at,
            ))
            .map_err(map_err)?;
        }
    }
    Ok(())
}

// Its tests, which build their data with the conformance suite's records, are in
// `token-store-conformance` (src/backends/).
