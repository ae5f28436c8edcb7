//! `family.refreshed` is listed for the family's client and principal as for the family itself,
//! newest first and once, whether a store files it under each subject (SQLite's columns) or
//! under the family only and derives it for the others (DynamoDB), and read back whole, the
//! request's facts included, whatever form the store keeps it in (DynamoDB's compact one).

use std::collections::HashSet;
use std::net::IpAddr;

use uuid::Uuid;

use super::audit::event_at;
use super::fixtures::listed_audit_events;
use super::records::*;
use crate::clock::UnixTime;
use crate::domain::audit::{
    AuditEvent, AuditKind, AuditSubject, CorrelationId, RequestFacts, StartedBy, UserAgent,
};
use crate::domain::{ClientId, PrincipalId, PrincipalType, TokenId};
use crate::secrets::TokenHash;
use crate::store::prelude::*;
use crate::store::Renewal;
use crate::writes::{
    create_family, renew_refresh_token, rotate_refresh_token, FamilyCreated, FamilyStart, Renewed,
    Rotated,
};

fn about(bundle: &Bundle, event: AuditEvent) -> AuditEvent {
    event
        .client(bundle.family.client_id)
        .principal(PrincipalType::User, bundle.family.principal_id)
        .family(bundle.family.id)
}

/// The facts of the request behind a refresh, each kind of value a store may keep apart from
/// the event's JSON (DynamoDB's compact refreshes), varied with the generation.
fn request(generation: u32) -> RequestFacts {
    let correlation = match generation % 3 {
        0 => Uuid::new_v4().hyphenated().to_string(),
        1 => Uuid::new_v4().hyphenated().to_string().to_uppercase(),
        _ => format!("caller-{generation}"),
    };
    let address: IpAddr = if generation % 2 == 0 {
        IpAddr::from([192, 0, 2, 7])
    } else {
        IpAddr::from([0x2001, 0xdb8, 0, 0, 0, 0, 0, generation as u16])
    };
    RequestFacts {
        source_address: (generation != 2).then_some(address),
        user_agent: UserAgent::from_header(format!("app/{generation} (conformance)").as_bytes()),
        correlation_id: CorrelationId::parse(&correlation),
    }
}

/// Starts the bundle's family at `at`, with its `family.started`.
async fn start(store: &dyn Store, bundle: &Bundle, at: UnixTime) -> AuditEvent {
    let started = about(
        bundle,
        event_at(
            at,
            AuditKind::FamilyStarted {
                grant: StartedBy::Password,
                issued_by: None,
            },
        ),
    );
    let created = create_family(
        store,
        FamilyStart {
            audit: vec![started.clone()],
            ..bundle.new_family()
        },
    )
    .await;
    assert_eq!(created, FamilyCreated::Created);
    started
}

/// Rotates the bundle's family once at each of `times`: its `family.refreshed` events, and its
/// current token.
async fn rotate(
    store: &dyn Store,
    bundle: &Bundle,
    times: &[UnixTime],
) -> (Vec<AuditEvent>, TokenHash) {
    let mut presented = bundle.refresh.token_hash.clone();
    let mut events = Vec::new();
    for (generation, at) in (1..).zip(times) {
        let (successor, access) = bundle.successor(*at, generation);
        let refreshed = AuditEvent {
            request: request(generation),
            ..about(
                bundle,
                event_at(*at, AuditKind::FamilyRefreshed { generation }),
            )
        };
        let rotated = rotate_refresh_token(
            store,
            rotation(bundle.family.id, &presented, &successor, &access, *at),
            vec![refreshed.clone()],
        )
        .await;
        assert_eq!(rotated, Rotated::Rotated, "rotation at {at}");
        presented = successor.token_hash;
        events.push(refreshed);
    }
    (events, presented)
}

async fn read(
    store: &dyn Store,
    subject: AuditSubject,
    since: Option<UnixTime>,
    now: UnixTime,
) -> Vec<AuditEvent> {
    let events = listed_audit_events(store, subject, since, now).await;
    let ids: HashSet<_> = events.iter().map(|e| e.id).collect();
    assert_eq!(
        ids.len(),
        events.len(),
        "{subject:?}: an event listed twice"
    );
    events
}

/// The events, newest first as the store lists them: by time, then by the time-ordered id.
fn newest_first<'a>(events: impl IntoIterator<Item = &'a AuditEvent>) -> Vec<AuditEvent> {
    let mut events: Vec<AuditEvent> = events.into_iter().cloned().collect();
    events.sort_by_key(|e| std::cmp::Reverse((e.time, e.id)));
    events
}

pub async fn refreshes_are_listed_for_the_familys_client_and_principal(store: &dyn Store) {
    let now = now();
    let principal = PrincipalId::new(Uuid::new_v4());
    let client = ClientId::new(Uuid::new_v4());
    // Started before `since`, refreshed after it: found although its start is not listed.
    let first = Bundle::live_for(now - 20, principal, client);
    let first_started = start(store, &first, now - 20).await;
    let since = now - 10;
    let (first_refreshed, _) = rotate(store, &first, &[now - 8, now - 5, now - 2, now]).await;
    // The same principal with another client, started after `since`; a refresh in the same
    // second as one of the first family's, and a sliding renewal (same generation).
    let other_client = ClientId::new(Uuid::new_v4());
    let second = Bundle::live_for(now - 6, principal, other_client);
    let second_started = start(store, &second, now - 6).await;
    let (mut second_refreshed, current) = rotate(store, &second, &[now - 5]).await;
    let renewed = about(
        &second,
        event_at(now - 1, AuditKind::FamilyRefreshed { generation: 1 }),
    );
    let renewal = Renewal {
        family_id: second.family.id,
        presented: current,
        expires_at: now + 180 * 86_400,
        access_token: second.successor(now - 1, 1).1,
        now: now - 1,
        // A rotated-to token names its family: it has no record of its own.
        renews_record: false,
    };
    let outcome = renew_refresh_token(store, renewal, vec![renewed.clone()]).await;
    assert_eq!(outcome, Renewed::Renewed);
    second_refreshed.push(renewed);
    // Someone else's family, refreshed meanwhile; `client` exchanges one of its tokens, so an
    // event under `client` names it: its refreshes must not leak into `client`'s.
    let stranger = Bundle::live(now - 9);
    start(store, &stranger, now - 9).await;
    rotate(store, &stranger, &[now - 7, now - 3]).await;
    let exchanged = event_at(
        now - 4,
        AuditKind::TokenExchanged {
            jti: TokenId::new(Uuid::new_v4()),
            subject_client_id: stranger.family.client_id,
            actor_sub: None,
            actor_client_id: None,
        },
    )
    .client(client)
    .principal(PrincipalType::User, stranger.family.principal_id)
    .family(stranger.family.id);
    store
        .audit()
        .put_audit_event(&exchanged)
        .await
        .expect("put_audit_event");

    assert_eq!(
        read(
            store,
            AuditSubject::Family(first.family.id),
            Some(since),
            now
        )
        .await,
        newest_first(&first_refreshed),
        "the family's own refreshes from since"
    );
    assert_eq!(
        read(store, AuditSubject::Client(client), Some(since), now).await,
        newest_first(first_refreshed.iter().chain([&exchanged])),
        "the client's: its family's refreshes and its exchange, no stranger's refresh"
    );
    let principals = newest_first(
        first_refreshed
            .iter()
            .chain(&second_refreshed)
            .chain([&second_started]),
    );
    assert_eq!(
        read(store, AuditSubject::Principal(principal), Some(since), now).await,
        principals,
        "the principal's: both families' refreshes, the second's start"
    );
    assert_eq!(
        read(store, AuditSubject::Client(client), None, now).await,
        newest_first(first_refreshed.iter().chain([&exchanged, &first_started])),
        "without since: the start too"
    );
    assert_eq!(
        read(
            store,
            AuditSubject::Client(other_client),
            Some(now - 5),
            now
        )
        .await,
        newest_first(&second_refreshed),
        "since is inclusive for derived refreshes too"
    );
}
