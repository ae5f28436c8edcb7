//! A [`WriteBatch`] on DynamoDB: the gate's count as its own `UpdateItem` first, then every part
//! in one `TransactWriteItems`. An optional part whose condition fails is dropped and the
//! transaction made again without it; a required one refuses the batch.

use async_trait::async_trait;
use aws_sdk_dynamodb::types::TransactWriteItem;

use super::codec::{keys, to_item};
use super::families::BatchItem;
use super::requests::Transaction;
use super::DynamoStore;
use crate::domain::audit::AuditEvent;
use crate::domain::Family;
use crate::{
    BatchWrites, Committed, FamilyWrite, Gate, Gated, Hit, PartId, RateLimitStore, Rotation,
    StoreError, StoreResult, WriteBatch, WriteOp,
};

#[async_trait]
impl BatchWrites for DynamoStore {
    async fn commit(&self, batch: WriteBatch) -> StoreResult<Committed> {
        let counted = match batch.gate() {
            None => None,
            Some(gate) => match self.count_hit(&gate.key, gate.limit, gate.now).await? {
                Hit::Counted { count } => Some(count),
                Hit::Refused { retry_after } => return Ok(Committed::Limited { retry_after }),
            },
        };
        // One access token alone is a plain put: a transaction would cost twice the write units.
        if let Some(WriteOp::Family(write)) = batch.sole_op() {
            if let FamilyWrite::PutAccessToken(record) = &**write {
                crate::FamilyStore::put_access_token(self, record).await?;
                return Ok(Committed::Applied {
                    skipped: Vec::new(),
                    counted,
                });
            }
        }
        let mut skipped: Vec<PartId> = Vec::new();
        loop {
            let built = self.build(&batch, &skipped)?;
            if built.items.is_empty() {
                return Ok(Committed::Applied { skipped, counted });
            }
            let owners = built.owners.clone();
            match self.transact(batch.name(), built.items).await? {
                Transaction::Committed => return Ok(Committed::Applied { skipped, counted }),
                Transaction::ConditionsFailed(failed) => {
                    let failed_parts = decisive_parts(&batch, &owners, &failed)?;
                    if let Some(required) = failed_parts.iter().find(|id| batch.part(**id).required)
                    {
                        return Ok(Committed::Refused(*required));
                    }
                    skipped.extend(failed_parts);
                }
            }
        }
    }

    async fn rotate(&self, rotation: Rotation, events: Vec<AuditEvent>) -> StoreResult<bool> {
        self.rotate_family(&rotation, &events).await
    }

    async fn rotate_counted(
        &self,
        rotation: Rotation,
        events: Vec<AuditEvent>,
        gate: Gate,
    ) -> StoreResult<Gated<bool>> {
        Ok(
            match self.count_hit(&gate.key, gate.limit, gate.now).await? {
                Hit::Refused { retry_after } => Gated::Limited { retry_after },
                Hit::Counted { count } => Gated::Counted {
                    count,
                    outcome: self.rotate_family(&rotation, &events).await?,
                },
            },
        )
    }

    async fn complete_rotation(&self, family: &Family, events: &[AuditEvent]) -> StoreResult<bool> {
        self.complete_family_rotation(family, events).await
    }
}

/// A batch's transaction: its items, and for each the part it belongs to and whether its
/// condition decides an outcome.
struct Built {
    items: Vec<TransactWriteItem>,
    owners: Vec<(PartId, bool)>,
}

impl DynamoStore {
    /// The transaction of the parts not skipped.
    fn build(&self, batch: &WriteBatch, skipped: &[PartId]) -> StoreResult<Built> {
        let mut built = Built {
            items: Vec::new(),
            owners: Vec::new(),
        };
        for (id, part) in batch.parts().filter(|(id, _)| !skipped.contains(id)) {
            for op in &part.ops {
                for (item, decisive) in self.op_items(op)? {
                    built.items.push(item);
                    built.owners.push((id, decisive));
                }
            }
        }
        Ok(built)
    }

    fn op_items(&self, op: &WriteOp) -> StoreResult<Vec<BatchItem>> {
        Ok(match op {
            WriteOp::Family(write) => self.family_items(write)?,
            WriteOp::Audit(events) => self
                .audit_puts(events)?
                .into_iter()
                .map(|item| (item, false))
                .collect(),
            WriteOp::LoginRefund(refund) => vec![(self.refund_item(refund)?, true)],
            WriteOp::LegacyLink(link) => vec![(self.legacy_link_item(link)?, true)],
            WriteOp::AuthToken(token) => vec![(
                self.put_new(to_item(token, keys::auth_token(&token.token_hash))?)?,
                false,
            )],
            WriteOp::FirstUse(first_use) => vec![(self.first_use_item(first_use)?, true)],
        })
    }
}

/// The parts whose decisive conditions failed. A decisive failure explains the others of its
/// transaction (a token that is not current may not exist either); integrity conditions failing
/// alone are an error.
fn decisive_parts(
    batch: &WriteBatch,
    owners: &[(PartId, bool)],
    failed: &[usize],
) -> StoreResult<Vec<PartId>> {
    let mut failed_parts = Vec::new();
    for index in failed {
        if let Some((id, true)) = owners.get(*index) {
            if !failed_parts.contains(id) {
                failed_parts.push(*id);
            }
        }
    }
    if failed_parts.is_empty() {
        return Err(StoreError::internal(format!(
            "{}: integrity condition failed on item(s) {failed:?}",
            batch.name()
        )));
    }
    Ok(failed_parts)
}
