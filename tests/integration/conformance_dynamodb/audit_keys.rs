//! Where DynamoDB keeps `family.refreshed`: under its family only, and a refresh written before
//! that (a copy under the client and the principal as well) is listed once; in its compact form,
//! and a family's partition of refreshes written before it (their JSON `body`) and after reads
//! whole.

use crate::support::dynamodb::fresh_table;
use token_domain::audit::{
    AuditEvent, AuditId, AuditKind, AuditSubject, CorrelationId, RequestFacts, StartedBy, UserAgent,
};
use token_domain::random::{OsRandom, RandomExt};
use token_domain::{ClientId, FamilyId, PrincipalId, PrincipalType};
use token_store::dynamodb::sdk::types::AttributeValue;
use token_store::dynamodb::{DynamoStore, TTL_ATTRIBUTE};
use token_store::prelude::*;
use token_store_conformance::fixtures::listed_audit_events;
use token_store_conformance::records::now;
use uuid::Uuid;

fn time_ordered(at: i64) -> Uuid {
    OsRandom.time_ordered_uuid(u64::try_from(at).unwrap() * 1000)
}

/// The items stored in `partition`.
async fn items_in(store: &DynamoStore, partition: &str) -> usize {
    let found = store
        .client()
        .query()
        .table_name(store.table_name())
        .key_condition_expression("pk = :pk")
        .expression_attribute_values(":pk", AttributeValue::S(partition.to_owned()))
        .consistent_read(true)
        .send()
        .await
        .expect("query a partition");
    found.items().len()
}

/// `event` as the store wrote it under `partition` before `family.refreshed` was stored under
/// its family only.
async fn put_old_copy(store: &DynamoStore, partition: String, event: &AuditEvent) {
    let sort = format!("{:020}#{}", event.time, event.id);
    store
        .client()
        .put_item()
        .table_name(store.table_name())
        .item("pk", AttributeValue::S(partition))
        .item("sk", AttributeValue::S(sort))
        .item("body", AttributeValue::S(event.to_json()))
        .item(
            TTL_ATTRIBUTE,
            AttributeValue::N(event.expires_at().to_string()),
        )
        .send()
        .await
        .expect("put an old copy");
}

#[tokio::test]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn a_refresh_is_one_item_and_an_old_copy_is_listed_once() {
    let Some(store) = fresh_table().await else {
        return;
    };
    let now = now();
    let (client, principal, family) = (
        ClientId::new(Uuid::new_v4()),
        PrincipalId::new(Uuid::new_v4()),
        FamilyId::new(Uuid::new_v4()),
    );
    let about = |kind, at: i64, id| {
        AuditEvent::new(AuditId::new(id), at, kind, RequestFacts::default())
            .client(client)
            .principal(PrincipalType::User, principal)
            .family(family)
    };
    let started = about(
        AuditKind::FamilyStarted {
            grant: StartedBy::Password,
            issued_by: None,
        },
        now - 2,
        time_ordered(now - 2),
    );
    let old = about(
        AuditKind::FamilyRefreshed { generation: 1 },
        now - 1,
        time_ordered(now - 1),
    );
    let new = AuditEvent {
        id: AuditId::of_rotation(&family, 2, now),
        ..about(
            AuditKind::FamilyRefreshed { generation: 2 },
            now,
            Uuid::nil(),
        )
    };
    for event in [&started, &old, &new] {
        store.audit().put_audit_event(event).await.expect("put");
    }
    assert_eq!(items_in(&store, &format!("AUDIT#CLIENT#{client}")).await, 1);
    assert_eq!(
        items_in(&store, &format!("AUDIT#PRINCIPAL#{principal}")).await,
        1,
        "the start only: the refreshes are under the family"
    );
    assert_eq!(items_in(&store, &format!("AUDIT#FAMILY#{family}")).await, 3);

    put_old_copy(&store, format!("AUDIT#CLIENT#{client}"), &old).await;
    put_old_copy(&store, format!("AUDIT#PRINCIPAL#{principal}"), &old).await;
    for subject in [
        AuditSubject::Client(client),
        AuditSubject::Principal(principal),
        AuditSubject::Family(family),
    ] {
        let listed = listed_audit_events(&store, subject, None, now).await;
        assert_eq!(
            listed,
            [new.clone(), old.clone(), started.clone()],
            "{subject:?}"
        );
    }
}

/// The items stored in `partition`, by sort key.
async fn raw_items(
    store: &DynamoStore,
    partition: &str,
) -> Vec<std::collections::HashMap<String, AttributeValue>> {
    store
        .client()
        .query()
        .table_name(store.table_name())
        .key_condition_expression("pk = :pk")
        .expression_attribute_values(":pk", AttributeValue::S(partition.to_owned()))
        .consistent_read(true)
        .send()
        .await
        .expect("query a partition")
        .items
        .unwrap_or_default()
}

#[tokio::test]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn a_partition_of_full_and_compact_refreshes_reads_whole_for_each_subject() {
    let Some(store) = fresh_table().await else {
        return;
    };
    let now = now();
    let (client, principal, family) = (
        ClientId::new(Uuid::new_v4()),
        PrincipalId::new(Uuid::new_v4()),
        FamilyId::new(Uuid::new_v4()),
    );
    let refreshed = |generation: u32, at: i64| {
        let request = RequestFacts {
            source_address: Some(std::net::IpAddr::from([198, 51, 100, 4])),
            user_agent: UserAgent::from_header(b"okhttp/4.12.0"),
            correlation_id: CorrelationId::parse(&Uuid::new_v4().to_string()),
        };
        AuditEvent::new(
            AuditId::of_rotation(&family, generation, at),
            at,
            AuditKind::FamilyRefreshed { generation },
            request,
        )
        .client(client)
        .principal(PrincipalType::Company, principal)
        .family(family)
    };
    let started = AuditEvent::new(
        AuditId::new(time_ordered(now - 10)),
        now - 10,
        AuditKind::FamilyStarted {
            grant: StartedBy::CompanyAuthToken,
            issued_by: Some(PrincipalId::new(Uuid::new_v4())),
        },
        RequestFacts::default(),
    )
    .client(client)
    .principal(PrincipalType::Company, principal)
    .family(family);
    store.audit().put_audit_event(&started).await.expect("put");
    // Generations 1 and 2 as the previous release wrote them, 3 and 4 now, 5 in the same second
    // as 4: old and new interleave in the partition's order.
    let events = [
        refreshed(1, now - 8),
        refreshed(2, now - 6),
        refreshed(3, now - 4),
        refreshed(4, now - 2),
        refreshed(5, now - 2),
    ];
    for event in &events[..2] {
        put_old_copy(&store, format!("AUDIT#FAMILY#{family}"), event).await;
    }
    for event in &events[2..] {
        store.audit().put_audit_event(event).await.expect("put");
    }

    let stored = raw_items(&store, &format!("AUDIT#FAMILY#{family}")).await;
    let compact = stored.iter().filter(|item| item.contains_key("c")).count();
    let full = stored
        .iter()
        .filter(|item| item.contains_key("body"))
        .count();
    assert_eq!(
        (compact, full),
        (3, 3),
        "the new refreshes compact; the start and the old refreshes whole: {stored:?}"
    );
    assert!(
        stored
            .iter()
            .all(|item| item.contains_key("c") != item.contains_key("body")),
        "an item holds one form"
    );

    let mut expected: Vec<AuditEvent> = events.iter().cloned().chain([started]).collect();
    expected.sort_by_key(|e| std::cmp::Reverse((e.time, e.id)));
    for subject in [
        AuditSubject::Family(family),
        AuditSubject::Client(client),
        AuditSubject::Principal(principal),
    ] {
        let listed = listed_audit_events(&store, subject, None, now).await;
        assert_eq!(listed, expected, "{subject:?}");
        let json: Vec<String> = listed.iter().map(AuditEvent::to_json).collect();
        let expected_json: Vec<String> = expected.iter().map(AuditEvent::to_json).collect();
        assert_eq!(
            json, expected_json,
            "{subject:?}: what tokenctl audit --json prints"
        );
        let since = listed_audit_events(&store, subject, Some(now - 6), now).await;
        assert_eq!(since, expected[..4], "{subject:?} from since, old and new");
    }
}
