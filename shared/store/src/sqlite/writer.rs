//! The write connection, shared by the runtime's threads, and group commit.
//!
//! A write is queued, and then whichever caller finds the connection free becomes the
//! *combiner*: it takes every write waiting in the queue (its own and those queued meanwhile by
//! other requests), runs them one after the other in one `BEGIN IMMEDIATE` transaction, each
//! inside its own savepoint, commits once, and only then answers them; it goes on until the
//! queue is empty. A caller that finds the connection taken just awaits its answer: the
//! combiner, which looks at the queue again after letting the connection go, takes its write.
//! A write that fails is rolled back to its savepoint and answered with its error at once; the
//! others still commit. So a write is answered only after the commit that made it durable,
//! while a busy server pays one commit for many writes, and no write crosses to another thread
//! and back: the earlier design's dedicated SQLite thread cost two wake-ups per write, which
//! were most of the kernel's share of a token request (docs/benchmarks.md).
//!
//! The combiner runs on a runtime thread, so it must not wait there for another process's
//! write lock (tokenctl's): the connection's busy timeout is zero, and a group that finds the
//! database locked is handed, unanswered, to the blocking pool, which waits for the lock up to
//! the store's busy timeout (then `Unavailable`, 503).
//!
//! Checkpoints do not run in the combiner's commits: a thread of their own copies the WAL
//! beside it, and the combiner only finishes a checkpoint between groups, rarely, so that the
//! WAL starts over (`checkpoints.rs`).
//!
//! Running the writes waiting in the queue in any order is correct: none of them has been
//! answered yet, so their requests are concurrent and any order is one they could have had.
//! One request never has two writes in the queue, since it awaits each answer.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, TryLockError};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, Transaction, TransactionBehavior};
use tokio::sync::oneshot;

use super::checkpoints::WalSize;
use super::{lock, map_err};
use crate::{StoreError, StoreResult};

/// The most writes one transaction takes: bounds how long the first of them waits.
const MAX_GROUP: usize = 256;

/// The most groups one combiner commits before it goes back to its own request.
const MAX_ROUNDS: usize = 4;

/// One write of a group: run inside the group's transaction, answered after its commit.
pub(super) trait GroupedWrite: Send {
    /// Runs the write; `false` when it failed (the group rolls it back to its savepoint).
    fn run(&mut self, tx: &Transaction<'_>) -> bool;
    /// Answers the caller: with the write's own error if it failed, else with `outcome`, the
    /// group's commit (an error also when the write never ran).
    fn answer(self: Box<Self>, outcome: StoreResult<()>);
}

/// A [`GroupedWrite`] whose result goes back over a oneshot channel.
pub(super) struct Write<F, T> {
    op: Option<F>,
    result: Option<StoreResult<T>>,
    reply: oneshot::Sender<StoreResult<T>>,
}

impl<F, T> Write<F, T> {
    pub(super) fn new(op: F, reply: oneshot::Sender<StoreResult<T>>) -> Self {
        Self {
            op: Some(op),
            result: None,
            reply,
        }
    }
}

impl<F, T> GroupedWrite for Write<F, T>
where
    F: FnOnce(&Transaction<'_>) -> StoreResult<T> + Send,
    T: Send,
{
    fn run(&mut self, tx: &Transaction<'_>) -> bool {
        let Some(op) = self.op.take() else {
            return false;
        };
        let result = op(tx);
        let succeeded = result.is_ok();
        self.result = Some(result);
        succeeded
    }

    fn answer(self: Box<Self>, outcome: StoreResult<()>) {
        let answer = match (self.result, outcome) {
            (Some(Err(own)), _) => Err(own),
            (_, Err(group)) => Err(group),
            (Some(Ok(value)), Ok(())) => Ok(value),
            (None, Ok(())) => Err(StoreError::Internal("SQLite write panicked".into())),
        };
        // The caller may have given up waiting (its request was dropped): nothing to answer.
        let _ = self.reply.send(answer);
    }
}

/// The write connection and its queue. Shared by every clone of the store.
pub(super) struct Writer {
    conn: Mutex<Connection>,
    queue: Mutex<Vec<Box<dyn GroupedWrite>>>,
    /// How long a group waits for another process's write lock, in the blocking pool.
    busy_timeout: Duration,
    /// The WAL's size as the checkpoint thread last saw it.
    wal: Arc<WalSize>,
}

impl Writer {
    /// Takes `conn` over (its busy timeout is set to zero: see the module's comment).
    pub(super) fn new(
        conn: Connection,
        busy_timeout: Duration,
        wal: Arc<WalSize>,
    ) -> StoreResult<Self> {
        conn.busy_timeout(Duration::ZERO).map_err(map_err)?;
        Ok(Self {
            conn: Mutex::new(conn),
            queue: Mutex::new(Vec::with_capacity(MAX_GROUP)),
            busy_timeout,
            wal,
        })
    }

    /// The WAL size this writer acts on, shared with the file's checkpoint thread.
    #[cfg(test)]
    pub(super) fn wal(&self) -> &Arc<WalSize> {
        &self.wal
    }

    /// Runs `op` in the next group transaction and answers once that has committed.
    pub(super) async fn write<T, F>(self: &Arc<Self>, op: F) -> StoreResult<T>
    where
        F: FnOnce(&Transaction<'_>) -> StoreResult<T> + Send + 'static,
        T: Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        lock(&self.queue).push(Box::new(Write::new(op, reply)));
        // Let the other requests ready on this thread reach their writes first, so that one
        // commit takes them all: a commit's cost is mostly the pages it writes to the WAL, and
        // concurrent writes dirty the same few pages.
        // Combines when dropped: also when the request is dropped during the yield, so that
        // its write (which may run all the same) is never left in the queue for a later one.
        let combine = Combine(self);
        tokio::task::yield_now().await;
        drop(combine);
        answer
            .await
            .map_err(|_| StoreError::Internal("SQLite write dropped unanswered".into()))?
    }

    /// Commits what is queued if the connection is free; returns at once if it is not (its
    /// holder will see the queue after letting it go). A combiner commits at most
    /// [`MAX_ROUNDS`] groups, since its own request waits meanwhile; writes still queued then
    /// are left to a task of their own.
    fn combine(self: &Arc<Self>) {
        let mut rounds = 0;
        loop {
            let mut conn = match self.conn.try_lock() {
                Ok(conn) => conn,
                Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
                Err(TryLockError::WouldBlock) => return,
            };
            while rounds < MAX_ROUNDS {
                let group: Vec<_> = {
                    let mut queue = lock(&self.queue);
                    let taken = queue.len().min(MAX_GROUP);
                    queue.drain(..taken).collect()
                };
                if group.is_empty() {
                    break;
                }
                rounds += 1;
                if let Err(Locked(group)) = commit_group(&mut conn, group, WhenLocked::HandBack) {
                    drop(conn);
                    self.wait_for_lock(group);
                    return;
                }
                self.wal.restart_if_large(&conn);
            }
            drop(conn);
            // A write queued after the last look, whose caller found the connection taken.
            if lock(&self.queue).is_empty() {
                return;
            }
            if rounds >= MAX_ROUNDS {
                if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                    let writer = Arc::clone(self);
                    drop(runtime.spawn(async move { writer.combine() }));
                    return;
                }
            }
        }
    }

    /// Commits `group`, which found the database locked by another connection, on the
    /// blocking pool: there it may wait for the lock without holding up a runtime thread.
    fn wait_for_lock(self: &Arc<Self>, group: Vec<Box<dyn GroupedWrite>>) {
        let writer = Arc::clone(self);
        let wait = move || {
            let mut conn = lock(&writer.conn);
            // Answered with `Unavailable` if the lock is still held after the busy timeout.
            if let Err(error) = conn.busy_timeout(writer.busy_timeout) {
                tracing::error!(%error, "cannot set the SQLite busy timeout");
            }
            let _answered = commit_group(&mut conn, group, WhenLocked::Answer);
            if let Err(error) = conn.busy_timeout(Duration::ZERO) {
                tracing::error!(%error, "cannot set the SQLite busy timeout");
            }
            drop(conn);
            writer.combine();
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn_blocking(wait)),
            Err(_) => wait(),
        }
    }
}

/// Runs [`Writer::combine`] when dropped.
struct Combine<'a>(&'a Arc<Writer>);

impl Drop for Combine<'_> {
    fn drop(&mut self) {
        self.0.combine();
    }
}

/// A group not started because another connection holds the write lock.
struct Locked(Vec<Box<dyn GroupedWrite>>);

/// What [`commit_group`] does when its first `BEGIN` finds another connection's write lock.
#[derive(Clone, Copy, PartialEq, Eq)]
enum WhenLocked {
    /// Gives the group back unanswered, to wait for the lock elsewhere.
    HandBack,
    /// Answers every write with the error (`Unavailable`).
    Answer,
}

/// Runs and commits `group`, answering each write; or, with [`WhenLocked::HandBack`], gives it
/// back unanswered when the first `BEGIN` finds another connection's write lock once the busy
/// timeout is spent (zero on a runtime thread).
fn commit_group(
    conn: &mut Connection,
    group: Vec<Box<dyn GroupedWrite>>,
    when_locked: WhenLocked,
) -> Result<(), Locked> {
    let mut writes = group.into_iter().peekable();
    let mut first = true;
    // Normally one transaction. Another begins only when SQLite rolled the whole transaction
    // back by itself (a full disk, an I/O error): the writes already run in it are answered
    // with that error and the rest go on in a fresh one.
    while writes.peek().is_some() {
        let tx = match conn.transaction_with_behavior(TransactionBehavior::Immediate) {
            Ok(tx) => tx,
            Err(error) if first && when_locked == WhenLocked::HandBack && is_locked(&error) => {
                return Err(Locked(writes.collect()));
            }
            Err(error) => {
                let error = map_err(error);
                writes.for_each(|write| write.answer(Err(error.clone())));
                return Ok(());
            }
        };
        first = false;
        let mut ran: Vec<Box<dyn GroupedWrite>> = Vec::new();
        let mut lost = None;
        for mut write in writes.by_ref() {
            match run_in_savepoint(&tx, write.as_mut()) {
                Ok(true) => ran.push(write),
                Ok(false) => write.answer(Ok(())),
                Err(error) => {
                    write.answer(Err(error.clone()));
                    lost = Some(error);
                    break;
                }
            }
        }
        let outcome = match lost {
            Some(error) => Err(error),
            None => tx.commit().map_err(map_err),
        };
        for write in ran {
            write.answer(outcome.as_ref().map(|_| ()).map_err(StoreError::clone));
        }
    }
    Ok(())
}

fn is_locked(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// Runs one write in a savepoint of `tx`, keeping it on success and undoing it on failure or
/// panic. `Err` when the group's transaction itself is gone or broken.
fn run_in_savepoint(tx: &Transaction<'_>, write: &mut dyn GroupedWrite) -> StoreResult<bool> {
    let statement = |sql: &str| {
        tx.prepare_cached(sql)
            .and_then(|mut stmt| stmt.execute([]))
            .map_err(map_err)
    };
    statement("SAVEPOINT grouped_write")?;
    let succeeded = catch_unwind(AssertUnwindSafe(|| write.run(tx))).unwrap_or(false);
    if tx.is_autocommit() {
        return Err(StoreError::Internal(
            "SQLite rolled back the transaction".into(),
        ));
    }
    if !succeeded {
        statement("ROLLBACK TO grouped_write")?;
    }
    statement("RELEASE grouped_write")?;
    Ok(succeeded)
}
