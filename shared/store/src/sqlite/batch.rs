//! A [`WriteBatch`] on SQLite: one write of the group commit, each part in a savepoint of its
//! own inside one for the whole batch, so that a failed condition undoes just what it must.

use async_trait::async_trait;
use rusqlite::Transaction;

use super::audit::insert_audit_events;
use super::rate_limits::count_hit_in;
use super::{auth_tokens, families, legacy, lockout, map_err, replays, SqliteStore};
use crate::domain::audit::AuditEvent;
use crate::domain::Family;
use crate::{
    BatchWrites, Committed, Gate, Gated, Hit, Part, Rotation, StoreResult, WriteBatch, WriteOp,
};

#[async_trait]
impl BatchWrites for SqliteStore {
    async fn commit(&self, batch: WriteBatch) -> StoreResult<Committed> {
        if batch.is_empty() && batch.gate().is_none() {
            return Ok(Committed::Applied {
                skipped: Vec::new(),
                counted: None,
            });
        }
        self.write_tx(move |tx| commit_in(tx, &batch)).await
    }

    /// One transaction, as every batch here: a rotation is never left half-written.
    async fn rotate(&self, rotation: Rotation, events: Vec<AuditEvent>) -> StoreResult<bool> {
        // The rotation's first statement is its conditional update: refused, it wrote nothing.
        // An error after it is rolled back by the group commit.
        self.write_tx(move |tx| {
            let landed = families::rotate_in(tx, &rotation)?;
            if landed {
                insert_audit_events(tx, &events)?;
            }
            Ok(landed)
        })
        .await
    }

    async fn rotate_counted(
        &self,
        rotation: Rotation,
        events: Vec<AuditEvent>,
        gate: Gate,
    ) -> StoreResult<Gated<bool>> {
        self.write_tx(move |tx| {
            let count = match count_hit_in(tx, &gate.key.stored(), gate.limit, gate.now)? {
                Hit::Counted { count } => count,
                Hit::Refused { retry_after } => return Ok(Gated::Limited { retry_after }),
            };
            // A rotation refused by its condition wrote nothing, and the count stays.
            let landed = families::rotate_in(tx, &rotation)?;
            if landed {
                insert_audit_events(tx, &events)?;
            }
            Ok(Gated::Counted {
                count,
                outcome: landed,
            })
        })
        .await
    }

    /// Nothing is ever missing: see [`Self::rotate`].
    async fn complete_rotation(
        &self,
        _family: &Family,
        _events: &[AuditEvent],
    ) -> StoreResult<bool> {
        Ok(false)
    }
}

fn commit_in(tx: &Transaction<'_>, batch: &WriteBatch) -> StoreResult<Committed> {
    let counted = match batch.gate() {
        None => None,
        Some(gate) => match count_hit_in(tx, &gate.key.stored(), gate.limit, gate.now)? {
            Hit::Counted { count } => Some(count),
            Hit::Refused { retry_after } => return Ok(Committed::Limited { retry_after }),
        },
    };
    // An error returned from here is rolled back by the group commit (to its own savepoint,
    // which also cancels these).
    savepoint(tx, "SAVEPOINT batch")?;
    let mut skipped = Vec::new();
    for (id, part) in batch.parts() {
        savepoint(tx, "SAVEPOINT batch_part")?;
        if apply_part(tx, part)? {
            savepoint(tx, "RELEASE batch_part")?;
            continue;
        }
        savepoint(tx, "ROLLBACK TO batch_part")?;
        savepoint(tx, "RELEASE batch_part")?;
        if part.required {
            savepoint(tx, "ROLLBACK TO batch")?;
            savepoint(tx, "RELEASE batch")?;
            return Ok(Committed::Refused(id));
        }
        skipped.push(id);
    }
    savepoint(tx, "RELEASE batch")?;
    Ok(Committed::Applied { skipped, counted })
}

/// `false` as soon as one operation's condition fails.
fn apply_part(tx: &Transaction<'_>, part: &Part) -> StoreResult<bool> {
    for op in &part.ops {
        let held = match op {
            WriteOp::Family(write) => families::apply_in(tx, write)?,
            WriteOp::Audit(events) => insert_audit_events(tx, events).map(|()| true)?,
            WriteOp::LoginRefund(refund) => lockout::refund_in(tx, refund)?,
            WriteOp::LegacyLink(link) => legacy::move_link_in(tx, link)?,
            WriteOp::AuthToken(token) => auth_tokens::insert_in(tx, token).map(|()| true)?,
            WriteOp::FirstUse(first_use) => replays::first_use_in(tx, first_use)?,
        };
        if !held {
            return Ok(false);
        }
    }
    Ok(true)
}

fn savepoint(tx: &Transaction<'_>, statement: &str) -> StoreResult<()> {
    tx.prepare_cached(statement)
        .and_then(|mut stmt| stmt.execute([]))
        .map_err(map_err)?;
    Ok(())
}
