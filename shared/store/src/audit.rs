//! Audit events (docs/decisions.md, Audit events): written with the fact they record where the
//! fact is a store write (a new family, a rotation, a revocation: see [`super::WriteBatch`]), or on
//! their own; read by subject, newest first.

use async_trait::async_trait;

use super::StoreResult;
use crate::clock::UnixTime;
use crate::domain::audit::{AuditEvent, AuditSubject};

/// Which events to read: those filed under `subject`, at or after `since`, newest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuditQuery {
    pub subject: AuditSubject,
    pub since: Option<UnixTime>,
    /// Events past their retention (400 days) read as absent, as every expired item does.
    pub now: UnixTime,
}

#[async_trait]
pub trait AuditStore: Send + Sync {
    /// Writes one event on its own, filed under each of its subjects at once (on DynamoDB, under
    /// each subject it is [stored under](AuditEvent::stored_under)).
    async fn put_audit_event(&self, event: &AuditEvent) -> StoreResult<()>;

    /// Newest first (time, then the time-ordered event id): every event about the subject, also
    /// those stored under its families only.
    async fn audit_events(&self, query: AuditQuery) -> StoreResult<Vec<AuditEvent>>;
}
