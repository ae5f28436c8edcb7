//! The audit events of families (docs/decisions.md, Audit events): each written in the same
//! store write as the fact it records, then logged.

use super::Issuer;
use std::sync::Mutex;

use crate::audit;
use crate::clock::UnixTime;
use crate::domain::audit::{AuditEvent, AuditKind, RevocationReason};
use crate::domain::{ClientId, Family, FamilyId, PrincipalId, PrincipalType};
use crate::store::{revoke_family_recorded, FamilyOrigin, FamilyRevoked, StoreError};

/// Whose a family is, as its audit events name it.
#[derive(Debug, Clone, Copy)]
pub struct FamilyOwner {
    pub client_id: ClientId,
    pub principal_type: PrincipalType,
    pub principal_id: PrincipalId,
}

impl From<&FamilyOrigin> for FamilyOwner {
    fn from(origin: &FamilyOrigin) -> Self {
        Self {
            client_id: origin.client_id,
            principal_type: origin.principal_type,
            principal_id: origin.principal_id,
        }
    }
}

impl From<&Family> for FamilyOwner {
    fn from(family: &Family) -> Self {
        Self {
            client_id: family.client_id,
            principal_type: family.principal_type,
            principal_id: family.principal_id,
        }
    }
}

impl Issuer<'_> {
    /// An audit event about a family, with its client and principal.
    pub(crate) fn family_event(
        &self,
        kind: AuditKind,
        family_id: FamilyId,
        owner: FamilyOwner,
    ) -> AuditEvent {
        audit::event(self.ctx, kind)
            .client(owner.client_id)
            .principal(owner.principal_type, owner.principal_id)
            .family(family_id)
    }

    /// Revokes a family for `reason`: its `family.revoked` event, and `also` (what was detected,
    /// if that is why), are written with the revocation. A family revoked before gets no second
    /// `family.revoked`, but what was detected is still recorded, on its own.
    pub(crate) async fn revoke_family_for(
        &self,
        family_id: FamilyId,
        owner: FamilyOwner,
        reason: RevocationReason,
        also: Option<AuditKind>,
    ) -> Result<FamilyRevoked, StoreError> {
        let detected = also.map(|kind| self.family_event(kind, family_id, owner));
        let revoked = self.family_event(AuditKind::FamilyRevoked { reason }, family_id, owner);
        let events: Vec<AuditEvent> = detected.iter().cloned().chain([revoked]).collect();
        let outcome = revoke_family_recorded(
            self.ctx.store.as_ref(),
            &family_id,
            self.ctx.clock.now(),
            events.clone(),
        )
        .await?;
        match (outcome, detected) {
            (FamilyRevoked::Revoked, _) => audit::logged(&events),
            (FamilyRevoked::AlreadyRevoked, Some(detected)) => {
                audit::record(self.ctx, detected).await;
            }
            _ => {}
        }
        Ok(outcome)
    }

    /// Revokes every family `owner`'s principal holds with its client and started at or before
    /// `started_by`, each with its `family.revoked` event for `reason` in the same write.
    /// Returns the families revoked.
    pub(crate) async fn revoke_connection_for(
        &self,
        owner: FamilyOwner,
        started_by: UnixTime,
        reason: RevocationReason,
    ) -> Result<Vec<FamilyId>, StoreError> {
        let made = Mutex::new(Vec::new());
        let make = |family_id| {
            let event = self.family_event(AuditKind::FamilyRevoked { reason }, family_id, owner);
            made.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(event.clone());
            event
        };
        let revoked = self
            .ctx
            .store
            .revocation()
            .revoke_connection_started_by(
                &owner.principal_id,
                &owner.client_id,
                started_by,
                self.ctx.clock.now(),
                Some(&make),
            )
            .await?;
        let made = made
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let written: Vec<AuditEvent> = made
            .into_iter()
            .filter(|event| event.family_id.is_some_and(|id| revoked.contains(&id)))
            .collect();
        audit::logged(&written);
        Ok(revoked)
    }
}
