//! Where DynamoDB keeps `family.refreshed`: under its family only, and a refresh written before
//! that (a copy under the client and the principal as well) is listed once.

use crate::support::dynamodb::fresh_table;
use token_domain::audit::{AuditEvent, AuditId, AuditKind, AuditSubject, RequestFacts, StartedBy};
use token_domain::random::{OsRandom, RandomExt};
use token_domain::{ClientId, FamilyId, PrincipalId, PrincipalType};
use token_store::dynamodb::sdk::types::AttributeValue;
use token_store::dynamodb::{DynamoStore, TTL_ATTRIBUTE};
use token_store::prelude::*;
use token_store::AuditQuery;
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
        let listed = store
            .audit()
            .audit_events(AuditQuery {
                subject,
                since: None,
                now,
            })
            .await
            .expect("audit_events");
        assert_eq!(
            listed,
            [new.clone(), old.clone(), started.clone()],
            "{subject:?}"
        );
    }
}
