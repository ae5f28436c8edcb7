//! WAL checkpoints beside the writer, not in its commits.
//!
//! SQLite's automatic checkpoint runs inside the `COMMIT` that takes the WAL past 1,000 pages:
//! it syncs the WAL, copies the pages into the database file and syncs that, with the write
//! connection held, so the group that committed and every write queued behind it waited for two
//! `fdatasync`s and the copy. Under load that was every few hundred requests, for milliseconds:
//! the stall that put one request in ten above 10 ms (docs/benchmarks.md, "Latency at half the
//! maximum").
//!
//! So the write connection never checkpoints by itself (`wal_autocheckpoint = 0`). A thread with
//! a connection of its own runs a passive checkpoint every [`INTERVAL`] while writes come
//! ([`IDLE_INTERVAL`] while none do): it copies and syncs
//! while the writer goes on committing and readers go on reading. A passive checkpoint alone
//! cannot bound the WAL under a steady load (an earlier design tried it, and the WAL grew by
//! tens of megabytes a second): SQLite starts the WAL file over only when a write transaction
//! begins on a WAL that is entirely copied, and new frames arrive while the thread copies. So
//! once the WAL has passed [`RESTART_FRAMES`], the writer itself checkpoints what the thread has
//! not copied yet (the last moments' frames), after answering its group, and its next
//! transaction starts the WAL over: one short wait every few thousand frames instead of a long
//! one every thousand.
//!
//! Durability is unchanged: the same checkpoints run with the same syncs (the connection's
//! `synchronous = NORMAL`), only on another connection and at other moments.

use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use rusqlite::Connection;

use super::map_err;
use crate::StoreResult;

/// How often the thread checkpoints while the WAL grows. Each pass copies what was committed
/// since the last one and syncs the database file; a pass every 100 ms copied about 2,000 pages
/// at a time under load and took a core for milliseconds, long enough to put the refresh's p99
/// at half its maximum throughput near 9 ms. Every 5 ms the passes are small and the p99 was
/// 4.5 to 5.6 ms (docs/benchmarks.md, "Checkpoints every 5 ms").
pub(super) const INTERVAL: Duration = Duration::from_millis(5);

/// How often it looks while nothing is written: an idle local server need not wake 200 times a
/// second. The first pass after writes resume copies at most this long's commits.
pub(super) const IDLE_INTERVAL: Duration = Duration::from_millis(100);

/// WAL frames (pages) past which the writer finishes the checkpoint itself, so that the WAL
/// starts over: 64 MiB of WAL at the default 4 KiB page. Each restart holds the write
/// connection for about 1.5 ms (its last copy and two syncs); under the code grant at half its
/// maximum, 4,096 frames meant one every 60 ms, and the p99 was 4.4 to 6.1 ms against 3.0 to
/// 3.9 ms with 16,384 (docs/benchmarks.md, "The WAL's restart"). 65,536 did a little better
/// still, for a 256 MiB file on every local server that was ever busy.
pub(super) const RESTART_FRAMES: u32 = 16_384;

/// What the checkpoint thread and the writer share: the WAL's size at the thread's last pass.
pub(super) struct WalSize {
    frames: AtomicU32,
    /// How many times the thread has synced the database file ([`DatabaseFile`]).
    database_syncs: AtomicU32,
    /// [`RESTART_FRAMES`], less in tests.
    restart_frames: u32,
}

impl WalSize {
    pub(super) fn new(restart_frames: u32) -> Self {
        Self {
            frames: AtomicU32::new(0),
            database_syncs: AtomicU32::new(0),
            restart_frames,
        }
    }

    #[cfg(test)]
    pub(super) fn database_syncs(&self) -> u32 {
        self.database_syncs.load(Ordering::Relaxed)
    }

    /// Called by the writer between groups: when the WAL has grown past [`RESTART_FRAMES`],
    /// checkpoints what is left on the write connection, so that its next transaction restarts
    /// the WAL. A reader still on an older snapshot may keep the checkpoint from finishing; the
    /// next pass of the thread then finds the WAL large again, and the writer tries again.
    pub(super) fn restart_if_large(&self, conn: &Connection) {
        if self.frames.load(Ordering::Relaxed) < self.restart_frames {
            return;
        }
        self.frames.store(0, Ordering::Relaxed);
        if let Err(error) = checkpoint(conn) {
            tracing::warn!(%error, "SQLite checkpoint by the writer failed");
        }
    }
}

/// The write connection's part: no checkpoint inside its commits.
pub(super) fn leave_to_the_thread(conn: &Connection) -> StoreResult<()> {
    conn.pragma_update(None, "wal_autocheckpoint", 0)
        .map_err(map_err)
}

/// The WAL size of the database at `path`, its checkpoint thread started. Called once per file
/// in a process: only by the file's writer, of which there is one (`open_files.rs`), so one
/// thread checkpoints each WAL (more would copy the same frames, syncing for nothing).
pub(super) fn start(path: &Path, restart_frames: u32) -> StoreResult<Arc<WalSize>> {
    let wal = Arc::new(WalSize::new(restart_frames));
    spawn(path, &wal)?;
    Ok(wal)
}

/// Starts the checkpoint thread of the database at `path`; it stops once `wal` is dropped (the
/// stores on the file and their clones are gone).
fn spawn(path: &Path, wal: &Arc<WalSize>) -> StoreResult<()> {
    let conn = Connection::open(path).map_err(map_err)?;
    // The checkpoint syncs as the writer's own did.
    conn.pragma_update(None, "synchronous", "NORMAL")
        .map_err(map_err)?;
    let database = DatabaseFile::open(path)?;
    let wal: Weak<WalSize> = Arc::downgrade(wal);
    std::thread::Builder::new()
        .name("sqlite-checkpoint".into())
        .spawn(move || {
            let mut last = Checkpointed::default();
            let mut interval = IDLE_INTERVAL;
            loop {
                std::thread::sleep(interval);
                let Some(wal) = wal.upgrade() else {
                    return;
                };
                match checkpoint(&conn) {
                    Ok(now) => {
                        wal.frames.store(now.frames, Ordering::Relaxed);
                        if now.copied != last.copied && now.copied > 0 && database.sync() {
                            wal.database_syncs.fetch_add(1, Ordering::Relaxed);
                        }
                        // The WAL's size moves (grows, or starts over) only with writes.
                        interval = if now.frames == last.frames {
                            IDLE_INTERVAL
                        } else {
                            INTERVAL
                        };
                        last = now;
                    }
                    Err(error) => tracing::warn!(%error, "SQLite checkpoint failed"),
                }
            }
        })
        .map_err(|e| {
            crate::StoreError::internal(format!("cannot start the checkpoint thread: {e}"))
        })?;
    Ok(())
}

/// The database file, synced by the checkpoint thread after each pass that copied frames.
///
/// SQLite syncs the database file only when a checkpoint copies the whole WAL, which under load
/// is only the writer's pass before the WAL starts over ([`WalSize::restart_if_large`]). So
/// every page the thread's passes had copied since the last start was still dirty then, and
/// the writer's sync wrote them all, with the connection held: 1 to 3 ms every 4,096 frames,
/// 8 to 15 ms every 65,536, growing with the database (docs/benchmarks.md, "The WAL's
/// restart"). Synced here, a few pages at a time, they are clean by then, and the writer's sync
/// has only its own pass's pages left (1.1 to 1.8 ms every 65,536 frames). An extra sync never
/// weakens durability.
struct DatabaseFile(std::fs::File);

impl DatabaseFile {
    fn open(path: &Path) -> StoreResult<Self> {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map(Self)
            .map_err(|e| crate::StoreError::internal(format!("cannot open the database file: {e}")))
    }

    /// `false` when the sync failed (logged; the writer's own sync before the restart still
    /// makes the copied pages durable).
    fn sync(&self) -> bool {
        self.0
            .sync_data()
            .inspect_err(|error| tracing::warn!(%error, "syncing the SQLite database file failed"))
            .is_ok()
    }
}

/// What a checkpoint pass reports, in frames.
#[derive(Clone, Copy, Default)]
struct Checkpointed {
    /// The WAL's size.
    frames: u32,
    /// How many of them are copied into the database file (by this pass or earlier ones).
    copied: u32,
}

/// A passive checkpoint (never waits for a lock). Busy (another checkpoint running) counts as
/// done: that one copies the same frames.
fn checkpoint(conn: &Connection) -> StoreResult<Checkpointed> {
    let frames = |value: i64| u32::try_from(value.max(0)).unwrap_or(u32::MAX);
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| {
        Ok(Checkpointed {
            frames: frames(row.get(1)?),
            copied: frames(row.get(2)?),
        })
    })
    .map_err(map_err)
}
