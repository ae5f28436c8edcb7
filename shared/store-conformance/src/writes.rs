//! The suite's writes, each one [`WriteBatch`] composed as the service composes it (`token-core`'s
//! `Issuer`), answered with the outcome the tests assert: so that the suite checks what a batch
//! does on each backend, conditions and all, in the shapes the service relies on.

use crate::domain::audit::AuditEvent;
use crate::domain::FamilyId;
use crate::store::{
    Committed, FamilyWrite, LegacyLink, LoginRefund, NewFamily, Renewal, Rotation, Store,
    WriteBatch, WriteOp,
};

/// A family to start, and what is written with it.
#[derive(Debug, Clone)]
pub struct FamilyStart {
    pub new: NewFamily,
    /// The family's own events, written with it or not at all.
    pub audit: Vec<AuditEvent>,
    /// A correct password's login attempt to take back, if its window is still open.
    pub login_refund: Option<LoginRefund>,
    /// A legacy exchange's link to move to the family, and the family the previous exchange
    /// created with its `family.revoked` events, revoked if still live.
    pub legacy_exchange: Option<(LegacyLink, Vec<AuditEvent>)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FamilyCreated {
    Created,
    /// Created, and the same write revoked the previous exchange's family, with its events.
    CreatedRevokingPrevious,
    /// Another exchange of the same legacy token moved the link first; nothing was written.
    LegacyExchangeRaced,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rotated {
    Rotated,
    /// Not current, or the family is revoked or expired: nothing was written.
    NotCurrent,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Renewed {
    Renewed,
    NotCurrent,
}

pub async fn commit(store: &dyn Store, batch: WriteBatch) -> Committed {
    store.writes().commit(batch).await.expect("commit")
}

pub async fn create_family(store: &dyn Store, start: FamilyStart) -> FamilyCreated {
    let mut batch = WriteBatch::new();
    batch.require([FamilyWrite::Start(start.new).into(), start.audit.into()]);
    if let Some(refund) = start.login_refund {
        batch.if_possible([refund.into()]);
    }
    let mut link_part = None;
    let mut revoke_part = None;
    if let Some((link, previous_revoked)) = start.legacy_exchange {
        let revoke = link.previous_family.map(|id| FamilyWrite::Revoke {
            id,
            now: link.exchange.exchanged_at,
        });
        link_part = Some(batch.require([link.into()]));
        if let Some(revoke) = revoke {
            revoke_part = Some(batch.if_possible([revoke.into(), previous_revoked.into()]));
        }
    }
    match commit(store, batch).await {
        Committed::Refused(part) if Some(part) == link_part => FamilyCreated::LegacyExchangeRaced,
        committed @ Committed::Applied { .. } => match revoke_part {
            Some(part) if committed.applied(part) => FamilyCreated::CreatedRevokingPrevious,
            _ => FamilyCreated::Created,
        },
        other => panic!("a new family's write has no condition that can refuse it: {other:?}"),
    }
}

pub async fn rotate_refresh_token(
    store: &dyn Store,
    rotation: Rotation,
    audit: Vec<AuditEvent>,
) -> Rotated {
    if store
        .writes()
        .rotate(rotation, audit)
        .await
        .expect("rotate")
    {
        Rotated::Rotated
    } else {
        Rotated::NotCurrent
    }
}

pub async fn renew_refresh_token(
    store: &dyn Store,
    renewal: Renewal,
    audit: Vec<AuditEvent>,
) -> Renewed {
    match commit_with(store, FamilyWrite::Renew(renewal), audit).await {
        Committed::Applied { .. } => Renewed::Renewed,
        _ => Renewed::NotCurrent,
    }
}

async fn commit_with(store: &dyn Store, write: FamilyWrite, audit: Vec<AuditEvent>) -> Committed {
    let ops: Vec<WriteOp> = vec![write.into(), audit.into()];
    commit(store, WriteBatch::of(ops)).await
}

/// The family's revocation as one required part, with `audit`.
pub fn revocation(id: FamilyId, now: i64, audit: Vec<AuditEvent>) -> WriteBatch {
    WriteBatch::of([FamilyWrite::Revoke { id, now }.into(), audit.into()])
}
