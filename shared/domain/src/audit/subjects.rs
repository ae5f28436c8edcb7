//! Whom an event is about, and under which of them a store that keeps a copy per subject
//! stores it (docs/decisions.md, Audit events, "Keys.").

use super::{AuditEvent, AuditKind};
use crate::{ClientId, FamilyId, PrincipalId};

/// Whose events a query reads. Every event is filed under each subject it names, and under
/// [`AuditSubject::Deployment`] when it names none (a key rotation, a lockout of an unknown
/// login).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditSubject {
    Principal(PrincipalId),
    Client(ClientId),
    Family(FamilyId),
    Deployment,
}

impl AuditKind {
    /// Whether an event of this kind is stored under its family alone, and listed for the
    /// family's client and principal through the family.
    ///
    /// Only `family.refreshed`: it is by far the most frequent event (one per refresh, for as
    /// long as a family lives), so each copy under the client and the principal would be a write
    /// unit on every refresh, while the queries by client or principal that show it are rare
    /// (`tokenctl audit`) and can find it from the families those subjects' own events name:
    /// every family's `family.started` names its client and principal.
    pub fn stored_under_family_only(&self) -> bool {
        matches!(self, Self::FamilyRefreshed { .. })
    }
}

impl AuditEvent {
    /// The subjects this event is filed under: what a query by any of them lists.
    pub fn subjects(&self) -> Vec<AuditSubject> {
        let mut subjects: Vec<AuditSubject> = [
            self.principal_id.map(AuditSubject::Principal),
            self.client_id.map(AuditSubject::Client),
            self.family_id.map(AuditSubject::Family),
        ]
        .into_iter()
        .flatten()
        .collect();
        if subjects.is_empty() {
            subjects.push(AuditSubject::Deployment);
        }
        subjects
    }

    /// Whether a query by `subject` lists this event.
    pub fn is_about(&self, subject: &AuditSubject) -> bool {
        self.subjects().contains(subject)
    }

    /// The subjects a store that keeps one copy per subject stores this event under: all of
    /// [`subjects`](Self::subjects), except for a kind [stored under its family
    /// only](AuditKind::stored_under_family_only). A query by one of the other subjects derives
    /// those events from the families its own events name.
    pub fn stored_under(&self) -> Vec<AuditSubject> {
        match self.family_id {
            Some(family) if self.kind.stored_under_family_only() => {
                vec![AuditSubject::Family(family)]
            }
            _ => self.subjects(),
        }
    }
}
