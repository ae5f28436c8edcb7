//! The thread that owns a store's connection, and group commit.
//!
//! Every operation is a job sent to this thread. Reads (and the few single statements that run
//! on their own, in autocommit) run as they arrive. Writes are grouped: the thread takes every
//! write waiting in the queue (at most [`MAX_GROUP`]), runs them one after the other in one
//! `BEGIN IMMEDIATE` transaction, each inside its own savepoint, commits once, and only then
//! answers them. A write that fails is rolled back to its savepoint and answered with its error
//! at once; the others still commit. So a write is answered only after the commit that made it
//! durable, as before, while a busy server pays one commit (one WAL append and lock round) for
//! many writes instead of one each.
//!
//! Running the jobs waiting in the queue in any order is correct: none of them has been
//! answered yet, so their requests are concurrent and any order is one they could have had.
//! One request never has two jobs in the queue, since it awaits each answer.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::thread::JoinHandle;

use rusqlite::{Connection, Transaction, TransactionBehavior};
use tokio::sync::oneshot;

use super::map_err;
use crate::store::{StoreError, StoreResult};

/// The most writes one transaction takes: bounds how long the first of them waits.
const MAX_GROUP: usize = 256;

/// What the connection's thread runs.
pub(super) enum Job {
    /// Runs on the connection as it comes, outside any group transaction.
    Direct(Box<dyn FnOnce(&mut Connection) + Send>),
    /// Runs inside the next group transaction.
    Grouped(Box<dyn GroupedWrite>),
}

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

/// The connection's thread; dropping the last handle lets it finish the queue, close the
/// connection and exit, and waits for that.
pub(super) struct Worker {
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

impl Worker {
    pub(super) fn spawn(conn: Connection) -> StoreResult<Self> {
        let (jobs, queue) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("sqlite".into())
            .spawn(move || serve(conn, &queue))
            .map_err(|e| StoreError::internal(format!("cannot start the SQLite thread: {e}")))?;
        Ok(Self {
            jobs: Some(jobs),
            thread: Some(thread),
        })
    }

    pub(super) fn submit(&self, job: Job) -> StoreResult<()> {
        self.jobs
            .as_ref()
            .and_then(|jobs| jobs.send(job).ok())
            .ok_or_else(thread_gone)
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        drop(self.jobs.take());
        if let Some(thread) = self.thread.take() {
            // A job holding the last handle would otherwise wait for its own thread.
            if thread.thread().id() != std::thread::current().id() {
                let _ = thread.join();
            }
        }
    }
}

/// What a caller sees when the thread died under its job (a panic) or is gone.
pub(super) fn thread_gone() -> StoreError {
    StoreError::Internal("the SQLite thread stopped".into())
}

fn serve(mut conn: Connection, queue: &mpsc::Receiver<Job>) {
    let mut group: Vec<Box<dyn GroupedWrite>> = Vec::with_capacity(MAX_GROUP);
    while let Ok(first) = queue.recv() {
        let mut next = Some(first);
        while let Some(job) = next {
            match job {
                // A panic drops the job's reply sender: its caller gets `thread_gone`. A
                // transaction the job opened is rolled back when rusqlite drops it.
                Job::Direct(op) => drop(catch_unwind(AssertUnwindSafe(|| op(&mut conn)))),
                Job::Grouped(write) => group.push(write),
            }
            next = if group.len() < MAX_GROUP {
                queue.try_recv().ok()
            } else {
                None
            };
        }
        if !group.is_empty() {
            commit_group(&mut conn, &mut group);
        }
    }
}

/// Runs and commits `group`, answering each write; leaves `group` empty.
fn commit_group(conn: &mut Connection, group: &mut Vec<Box<dyn GroupedWrite>>) {
    let mut writes = group.drain(..).peekable();
    // Normally one transaction. Another begins only when SQLite rolled the whole transaction
    // back by itself (a full disk, an I/O error): the writes already run in it are answered
    // with that error and the rest go on in a fresh one.
    while writes.peek().is_some() {
        let tx = match conn.transaction_with_behavior(TransactionBehavior::Immediate) {
            Ok(tx) => tx,
            Err(error) => {
                let error = map_err(error);
                writes.for_each(|write| write.answer(Err(error.clone())));
                return;
            }
        };
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
