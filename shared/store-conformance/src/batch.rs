//! The unit of work: a batch's required parts stand or fall together, an optional part whose
//! condition fails is left out while the rest is written, and an integrity condition failing is
//! an error that writes nothing.

use uuid::Uuid;

use super::audit::event_at;
use super::fixtures::*;
use super::records::*;
use crate::domain::audit::{AuditKind, AuditSubject, RevocationReason};
use crate::domain::FamilyId;
use crate::store::prelude::*;
use crate::store::{AuditQuery, Committed, FamilyWrite, WriteBatch};
use crate::writes::commit;

pub(crate) fn revoked_event(now: i64, family: FamilyId) -> crate::domain::audit::AuditEvent {
    event_at(
        now,
        AuditKind::FamilyRevoked {
            reason: RevocationReason::Admin,
        },
    )
    .family(family)
}

pub(crate) async fn family_events(store: &dyn Store, family: FamilyId, now: i64) -> usize {
    store
        .audit()
        .audit_events(AuditQuery {
            subject: AuditSubject::Family(family),
            since: None,
            now,
        })
        .await
        .expect("audit_events")
        .len()
}

pub async fn a_refused_required_part_writes_nothing_of_its_batch(store: &dyn Store) {
    let now = now();
    let bundle = Bundle::live(now);
    let absent = FamilyId::new(Uuid::new_v4());
    let start = bundle.new_family();
    let mut batch = WriteBatch::new();
    batch.require([
        FamilyWrite::Start(start.new).into(),
        revoked_event(now, bundle.family.id).into(),
    ]);
    let revoke = batch.require([FamilyWrite::Revoke { id: absent, now }.into()]);
    assert_eq!(
        commit(store, batch).await,
        Committed::Refused(revoke),
        "revoking a family that does not exist fails its condition"
    );
    assert_bundle_absent(store, &bundle, now, "a refused batch's new family").await;
    assert_eq!(
        family_events(store, bundle.family.id, now).await,
        0,
        "a refused batch's audit event is not written"
    );
}

pub async fn an_optional_part_that_fails_is_skipped_and_the_rest_written(store: &dyn Store) {
    let now = now();
    let bundle = Bundle::live(now);
    let absent = FamilyId::new(Uuid::new_v4());
    let mut batch = WriteBatch::new();
    let started = batch.require([FamilyWrite::Start(bundle.new_family().new).into()]);
    let revoke = batch.if_possible([
        FamilyWrite::Revoke { id: absent, now }.into(),
        revoked_event(now, absent).into(),
    ]);
    let committed = commit(store, batch).await;
    assert_eq!(
        committed,
        Committed::Applied {
            skipped: vec![revoke],
            counted: None
        }
    );
    assert!(committed.applied(started) && !committed.applied(revoke));
    assert_bundle_present(store, &bundle, now, "beside a skipped part, the family").await;
    assert_eq!(
        family_events(store, absent, now).await,
        0,
        "a skipped part's audit event is not written"
    );
}

pub async fn an_integrity_condition_failing_is_an_error_that_writes_nothing(store: &dyn Store) {
    let now = now();
    let bundle = stored_bundle(store, now).await;
    let other = Bundle::live(now);
    let mut batch = WriteBatch::new();
    batch.require([FamilyWrite::Start(other.new_family().new).into()]);
    // The same family again: its ids are taken, which is a bug, not an outcome.
    batch.require([FamilyWrite::Start(bundle.new_family().new).into()]);
    let committed = store.writes().commit(batch).await;
    assert!(
        committed.is_err(),
        "a new family whose ids are taken is an error: {committed:?}"
    );
    assert_bundle_absent(store, &other, now, "beside a taken id, the new family").await;
}
