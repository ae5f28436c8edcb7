//! Audit events on DynamoDB, without a secondary index: an event is one item under each subject
//! it names (`AUDIT#PRINCIPAL#<id>`, `AUDIT#CLIENT#<id>`, `AUDIT#FAMILY#<id>`, or
//! `AUDIT#DEPLOYMENT` when it names none), sort key `<time>#<event id>`, so that every query
//! (by principal, client or family, newest first, from a time) is one `Query` of one partition.
//! The copies are written in one transaction, with the fact they record where there is one
//! (docs/decisions.md, Audit events).

use async_trait::async_trait;
use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem};

use super::codec::{keys, n, s, Item, PK, SK};
use super::requests::{query_items, Transaction};
use super::DynamoStore;
use crate::domain::audit::AuditEvent;
use crate::{AuditQuery, AuditStore, StoreError, StoreResult};

/// The event's JSON, the same document the SQLite store and `tokenctl audit --json` show.
const BODY: &str = "body";

pub(super) fn audit_items(event: &AuditEvent) -> Vec<Item> {
    let body = event.to_json();
    event
        .subjects()
        .iter()
        .map(|subject| {
            Item::from([
                (PK.to_owned(), s(keys::audit_partition(subject))),
                (SK.to_owned(), s(keys::audit_sort(event.time, &event.id))),
                (BODY.to_owned(), s(body.clone())),
                (super::TTL_ATTRIBUTE.to_owned(), n(event.expires_at())),
            ])
        })
        .collect()
}

impl DynamoStore {
    /// The puts of `events`, to ride in the transaction of the fact they record.
    pub(super) fn audit_puts(&self, events: &[AuditEvent]) -> StoreResult<Vec<TransactWriteItem>> {
        events
            .iter()
            .flat_map(audit_items)
            .map(|item| self.put_new(item))
            .collect()
    }
}

#[async_trait]
impl AuditStore for DynamoStore {
    async fn put_audit_event(&self, event: &AuditEvent) -> StoreResult<()> {
        let puts = self.audit_puts(std::slice::from_ref(event))?;
        match self.transact("PutAuditEvent", puts).await? {
            Transaction::Committed => Ok(()),
            Transaction::ConditionsFailed(_) => Err(StoreError::internal(
                "PutAuditEvent: the event id is already taken",
            )),
        }
    }

    async fn audit_events(&self, query: AuditQuery) -> StoreResult<Vec<AuditEvent>> {
        let since = keys::sortable_time(query.since.unwrap_or(0));
        let now = query.now;
        let query = self
            .client
            .query()
            .table_name(&self.table)
            .key_condition_expression("#pk = :pk AND #sk >= :since")
            .expression_attribute_names("#pk", PK)
            .expression_attribute_names("#sk", SK)
            .expression_attribute_values(":pk", s(keys::audit_partition(&query.subject)))
            .expression_attribute_values(":since", s(since))
            .scan_index_forward(false)
            .consistent_read(true);
        let mut events = Vec::new();
        for mut item in query_items("QueryAuditEvents", query).await? {
            let Some(AttributeValue::S(body)) = item.remove(BODY) else {
                return Err(StoreError::internal("malformed audit item: no body"));
            };
            let event: AuditEvent = serde_json::from_str(&body)
                .map_err(|_| StoreError::internal("malformed audit item body"))?;
            // DynamoDB's TTL deletes days late.
            if event.expires_at() > now {
                events.push(event);
            }
        }
        Ok(events)
    }
}
