//! Audit events: read by subject, newest first, from a time; written with the family writes
//! they record, and only when those writes happen.

use std::sync::atomic::{AtomicU64, Ordering};

use uuid::Uuid;

use super::fixtures::{exchange, listed_audit_events as read, stored_legacy_token};
use super::records::*;
use crate::clock::UnixTime;
use crate::domain::audit::{
    AuditEvent, AuditId, AuditKind, AuditSubject, RequestFacts, RevocationReason, StartedBy,
    AUDIT_RETENTION_SECONDS,
};
use crate::domain::{ClientId, FamilyId, PrincipalId, PrincipalType};
use crate::random::{OsRandom, RandomExt};
use crate::store::prelude::*;
use crate::store::{revoke_family_recorded, FamilyRevoked};
use crate::writes::{create_family, rotate_refresh_token, FamilyCreated, FamilyStart, Rotated};

/// Events made one after another in the same second get ids in that order.
pub(crate) fn event_at(at: UnixTime, kind: AuditKind) -> AuditEvent {
    static MADE: AtomicU64 = AtomicU64::new(0);
    let millis =
        u64::try_from(at).unwrap_or_default() * 1000 + MADE.fetch_add(1, Ordering::SeqCst) % 1000;
    AuditEvent::new(
        AuditId::new(OsRandom.time_ordered_uuid(millis)),
        at,
        kind,
        RequestFacts::default(),
    )
}

pub async fn audit_events_are_read_by_subject_newest_first(store: &dyn Store) {
    let now = now();
    let client = ClientId::new(Uuid::new_v4());
    let principal = PrincipalId::new(Uuid::new_v4());
    let family = FamilyId::new(Uuid::new_v4());
    let about = |event: AuditEvent| {
        event
            .client(client)
            .principal(PrincipalType::User, principal)
            .family(family)
    };
    let started = about(event_at(
        now - 10,
        AuditKind::FamilyStarted {
            grant: StartedBy::Password,
            issued_by: None,
        },
    ));
    let refreshed = about(event_at(
        now - 5,
        AuditKind::FamilyRefreshed { generation: 1 },
    ));
    // Two events in one second: the time-ordered id keeps them in order.
    let reuse = about(event_at(now, AuditKind::RefreshReuseDetected));
    let revoked = about(event_at(
        now,
        AuditKind::FamilyRevoked {
            reason: RevocationReason::ReuseDetected,
        },
    ));
    let other_client =
        event_at(now, AuditKind::ClientCreated).client(ClientId::new(Uuid::new_v4()));
    let expired = about(event_at(
        now - AUDIT_RETENTION_SECONDS - 1,
        AuditKind::FamilyRefreshed { generation: 0 },
    ));
    for event in [
        &revoked,
        &started,
        &other_client,
        &reuse,
        &expired,
        &refreshed,
    ] {
        store
            .audit()
            .put_audit_event(event)
            .await
            .expect("put_audit_event");
    }
    let newest_first = vec![
        revoked.clone(),
        reuse.clone(),
        refreshed.clone(),
        started.clone(),
    ];
    for subject in [
        AuditSubject::Principal(principal),
        AuditSubject::Client(client),
        AuditSubject::Family(family),
    ] {
        assert_eq!(
            read(store, subject, None, now).await,
            newest_first,
            "{subject:?}: its events, newest first, the expired one absent"
        );
    }
    assert_eq!(
        read(store, AuditSubject::Family(family), Some(now - 5), now).await,
        newest_first[..3],
        "since is inclusive"
    );
    assert!(
        read(
            store,
            AuditSubject::Family(FamilyId::new(Uuid::new_v4())),
            None,
            now
        )
        .await
        .is_empty(),
        "an unknown subject has no events"
    );
    let deployment = event_at(now, AuditKind::LoginLocked);
    store
        .audit()
        .put_audit_event(&deployment)
        .await
        .expect("put_audit_event");
    assert!(
        read(store, AuditSubject::Deployment, Some(now), now)
            .await
            .contains(&deployment),
        "an event about no subject is filed under the deployment"
    );
}

pub async fn audit_events_land_only_with_the_family_writes_they_record(store: &dyn Store) {
    let now = now();
    let bundle = Bundle::live(now);
    let family = AuditSubject::Family(bundle.family.id);
    let about = |event: AuditEvent| {
        event
            .client(bundle.family.client_id)
            .principal(PrincipalType::User, bundle.family.principal_id)
            .family(bundle.family.id)
    };
    let started = about(event_at(
        now,
        AuditKind::FamilyStarted {
            grant: StartedBy::Otp,
            issued_by: None,
        },
    ));
    create_family(
        store,
        FamilyStart {
            audit: vec![started.clone()],
            ..bundle.new_family()
        },
    )
    .await;
    assert_eq!(read(store, family, None, now).await, vec![started.clone()]);

    let (successor, access) = bundle.successor(now + 1, 1);
    let refreshed = about(event_at(
        now + 1,
        AuditKind::FamilyRefreshed { generation: 1 },
    ));
    let rotated = rotate_refresh_token(
        store,
        rotation(
            bundle.family.id,
            &bundle.refresh.token_hash,
            &successor,
            &access,
            now + 1,
        ),
        vec![refreshed.clone()],
    )
    .await;
    assert_eq!(rotated, Rotated::Rotated);
    let (late_successor, late_access) = bundle.successor(now + 2, 1);
    let lost = about(event_at(
        now + 2,
        AuditKind::FamilyRefreshed { generation: 1 },
    ));
    let outcome = rotate_refresh_token(
        store,
        rotation(
            bundle.family.id,
            &bundle.refresh.token_hash,
            &late_successor,
            &late_access,
            now + 2,
        ),
        vec![lost],
    )
    .await;
    assert_eq!(outcome, Rotated::NotCurrent);
    let rotated_family =
        crate::fixtures::present_family(store, &bundle.family.id, now + 2, "family").await;
    assert!(
        !store
            .writes()
            .complete_rotation(&rotated_family, std::slice::from_ref(&refreshed))
            .await
            .expect("complete_rotation"),
        "a rotation that landed and answered leaves nothing to complete"
    );
    assert_eq!(
        read(store, family, None, now + 2).await,
        vec![refreshed.clone(), started.clone()],
        "completing it writes no second event"
    );

    let revoked = about(event_at(
        now + 3,
        AuditKind::FamilyRevoked {
            reason: RevocationReason::Admin,
        },
    ));
    let again = about(event_at(
        now + 4,
        AuditKind::FamilyRevoked {
            reason: RevocationReason::Admin,
        },
    ));
    let family_id = bundle.family.id;
    let revoke = |events: &[AuditEvent], at| {
        let events = events.to_vec();
        async move {
            revoke_family_recorded(store, &family_id, at, events)
                .await
                .expect("revoke_family_recorded")
        }
    };
    assert_eq!(
        revoke(std::slice::from_ref(&revoked), now + 3).await,
        FamilyRevoked::Revoked
    );
    assert_eq!(
        revoke(&[again], now + 4).await,
        FamilyRevoked::AlreadyRevoked,
        "a repeat revokes nothing and records nothing"
    );
    assert_eq!(
        revoke_family_recorded(store, &FamilyId::new(Uuid::new_v4()), now, Vec::new())
            .await
            .expect("revoke_family_recorded"),
        FamilyRevoked::NotFound
    );
    let family_record = store
        .families()
        .get_family(&bundle.family.id, now + 4)
        .await
        .expect("get_family")
        .expect("the family");
    assert_eq!(
        family_record.revoked_at,
        Some(now + 3),
        "the first revocation time stays"
    );

    assert_eq!(
        read(store, family, None, now + 5).await,
        vec![revoked, refreshed, started],
        "the lost rotation's and the repeated revocation's events were never written"
    );

    // A connection's revocation: one event per family it revokes, none for one revoked before.
    let principal = PrincipalId::new(Uuid::new_v4());
    let client = ClientId::new(Uuid::new_v4());
    let first = Bundle::live_for(now, principal, client);
    let second = Bundle::live_for(now, principal, client);
    first.create(store).await;
    second.create(store).await;
    store
        .families()
        .revoke_family(&second.family.id, now)
        .await
        .expect("revoke_family");
    let make = |family_id| {
        event_at(
            now + 6,
            AuditKind::FamilyRevoked {
                reason: RevocationReason::Logout,
            },
        )
        .client(client)
        .principal(PrincipalType::User, principal)
        .family(family_id)
    };
    let revoked = store
        .revocation()
        .revoke_connection(&principal, &client, now + 6, Some(&make))
        .await
        .expect("revoke_connection");
    assert_eq!(revoked, vec![first.family.id]);
    let events = read(store, AuditSubject::Principal(principal), None, now + 6).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].family_id, Some(first.family.id));
}

pub async fn a_repeated_exchange_records_only_the_revocation_it_makes(store: &dyn Store) {
    let now = now();
    let legacy = stored_legacy_token(store).await;
    let revoked_event = |bundle: &Bundle, at| {
        event_at(
            at,
            AuditKind::FamilyRevoked {
                reason: RevocationReason::ExchangedAgain,
            },
        )
        .client(bundle.family.client_id)
        .principal(PrincipalType::User, bundle.family.principal_id)
        .family(bundle.family.id)
    };
    let exchange_again = |bundle, previous: &Bundle, event: &AuditEvent, at| {
        let mut new = exchange_of(bundle, &legacy.token_hash, Some(previous.family.id), at);
        if let Some((_, previous_revoked)) = new.legacy_exchange.as_mut() {
            *previous_revoked = vec![event.clone()];
        }
        create_family(store, new)
    };
    let first = Bundle::live(now);
    let created = exchange(store, &first, &legacy.token_hash, None, now).await;
    assert_eq!(created, FamilyCreated::Created);

    // The live previous family: revoked, with its event, in the exchange's write.
    let second = Bundle::live(now + 1);
    let event = revoked_event(&first, now + 1);
    assert_eq!(
        exchange_again(&second, &first, &event, now + 1).await,
        FamilyCreated::CreatedRevokingPrevious
    );
    let of_first = AuditSubject::Family(first.family.id);
    assert_eq!(read(store, of_first, None, now + 1).await, vec![event]);

    // A previous family revoked already (by its user, say): the exchange still happens, but
    // revokes nothing and records nothing.
    let revoked = store
        .families()
        .revoke_family(&second.family.id, now + 2)
        .await;
    assert!(revoked.expect("revoke_family"));
    let third = Bundle::live(now + 3);
    let event = revoked_event(&second, now + 3);
    assert_eq!(
        exchange_again(&third, &second, &event, now + 3).await,
        FamilyCreated::Created
    );
    let of_second = AuditSubject::Family(second.family.id);
    assert!(read(store, of_second, None, now + 3).await.is_empty());
    let second_now = store
        .families()
        .get_family(&second.family.id, now + 3)
        .await;
    assert_eq!(
        second_now
            .expect("get_family")
            .expect("the family")
            .revoked_at,
        Some(now + 2),
        "the first revocation's time stays"
    );
    let link = store.legacy().get_legacy_exchange(&legacy.token_hash).await;
    assert_eq!(
        link.expect("get_legacy_exchange")
            .map(|link| link.family_id),
        Some(third.family.id)
    );
}
