//! Audit events on DynamoDB, without a secondary index: an event is one item under each subject
//! it is stored under (`AUDIT#PRINCIPAL#<id>`, `AUDIT#CLIENT#<id>`, `AUDIT#FAMILY#<id>`, or
//! `AUDIT#DEPLOYMENT` when it names none), sort key `<time>#<event id>`, so that a query by
//! family (or of the deployment) is one `Query` of one partition. The copies are written with
//! the fact they record where there is one (docs/decisions.md, Audit events).
//!
//! `family.refreshed` is stored under its family only
//! ([`AuditEvent::stored_under`]): a query by client or principal reads its own partition, and
//! then the refreshes of the families its events name, from each family's partition.
//!
//! Under its family, a `family.refreshed` is stored compact: not its JSON in `body` but
//! [`AuditEvent::to_compact_refresh`] in [`COMPACT`], without the time, id and family its keys
//! carry (docs/decisions.md, Audit events, "Compact refreshes"). A read rebuilds the same event;
//! items written before keep their `body` and read as they did.

use std::collections::{BTreeSet, HashSet};

use async_trait::async_trait;
use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem};
use futures::stream::{self, StreamExt, TryStreamExt};

use super::codec::{keys, n, s, Item, PK, SK};
use super::requests::{query_items, Transaction};
use super::DynamoStore;
use crate::clock::UnixTime;
use crate::domain::audit::{AuditEvent, AuditSubject};
use crate::domain::FamilyId;
use crate::{AuditQuery, AuditStore, StoreError, StoreResult};

/// The event's JSON, the same document the SQLite store and `tokenctl audit --json` show.
const BODY: &str = "body";
/// A `family.refreshed` under its family, in its compact binary form instead of `body`; one
/// letter, as an attribute's name is stored (and billed) in every item.
const COMPACT: &str = "c";
/// Family partitions read at once when a client's or principal's refreshes are derived: a
/// principal may have had hundreds of families, and one at a time would add their round trips.
const FAMILIES_IN_FLIGHT: usize = 8;

pub(super) fn audit_items(event: &AuditEvent) -> Vec<Item> {
    let compact = event.to_compact_refresh();
    // Made only for a subject that takes it: a refresh's one item is compact.
    let body = std::cell::OnceCell::new();
    event
        .stored_under()
        .iter()
        .map(|subject| {
            // The compact form leaves out the family: only its own partition's key names it.
            let (name, content) = match (&compact, subject) {
                (Some(compact), AuditSubject::Family(family))
                    if Some(*family) == event.family_id =>
                {
                    (COMPACT, AttributeValue::B(Blob::new(compact.clone())))
                }
                _ => (BODY, s(body.get_or_init(|| event.to_json()).clone())),
            };
            Item::from([
                (PK.to_owned(), s(keys::audit_partition(subject))),
                (SK.to_owned(), s(keys::audit_sort(event.time, &event.id))),
                (name.to_owned(), content),
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
        let AuditQuery {
            subject,
            since,
            now,
        } = query;
        let since = since.unwrap_or(0);
        if !matches!(
            subject,
            AuditSubject::Client(_) | AuditSubject::Principal(_)
        ) {
            return self.partition_events(subject, Some(since), now).await;
        }
        // The whole partition: a family started before `since` may be refreshed after it. One
        // query serves both, as the events from `since` need their bodies anyway.
        let own = self.partition_events(subject, None, now).await?;
        let families: BTreeSet<FamilyId> = own.iter().filter_map(|e| e.family_id).collect();
        let mut events: Vec<AuditEvent> = own.into_iter().filter(|e| e.time >= since).collect();
        let refreshes: Vec<Vec<AuditEvent>> = stream::iter(families)
            .map(|family| self.partition_events(AuditSubject::Family(family), Some(since), now))
            .buffer_unordered(FAMILIES_IN_FLIGHT)
            .try_collect()
            .await?;
        // Only what the owners' partitions lack, and only where the family is the subject's:
        // an event may name another client's family (`token.exchanged`).
        events.extend(
            refreshes
                .into_iter()
                .flatten()
                .filter(|e| e.kind.stored_under_family_only() && e.is_about(&subject)),
        );
        // Events written before `family.refreshed` was stored under its family only are in both.
        let mut seen = HashSet::new();
        events.retain(|e| seen.insert(e.id));
        // The sort key's order, newest first: time, then the time-ordered id.
        events.sort_unstable_by_key(|e| std::cmp::Reverse((e.time, e.id)));
        Ok(events)
    }
}

impl DynamoStore {
    /// The unexpired events stored under `subject`, from `since` (`None`: all), newest first.
    async fn partition_events(
        &self,
        subject: AuditSubject,
        since: Option<UnixTime>,
        now: UnixTime,
    ) -> StoreResult<Vec<AuditEvent>> {
        let mut query = self
            .client
            .query()
            .table_name(&self.table)
            .expression_attribute_names("#pk", PK)
            .expression_attribute_values(":pk", s(keys::audit_partition(&subject)))
            // The event alone is what is read (DynamoDB bills the whole item all the same): its
            // body, or its compact form and the sort key that completes it.
            .projection_expression("#sk, #body, #compact")
            .expression_attribute_names("#sk", SK)
            .expression_attribute_names("#body", BODY)
            .expression_attribute_names("#compact", COMPACT)
            .scan_index_forward(false)
            .consistent_read(true);
        query = match since {
            Some(since) => query
                .key_condition_expression("#pk = :pk AND #sk >= :since")
                .expression_attribute_values(":since", s(keys::sortable_time(since))),
            None => query.key_condition_expression("#pk = :pk"),
        };
        let mut events = Vec::new();
        for item in query_items("QueryAuditEvents", query).await? {
            let event = event_of(&subject, &item)?;
            // DynamoDB's TTL deletes days late.
            if event.expires_at() > now {
                events.push(event);
            }
        }
        Ok(events)
    }
}

/// The event an item of `subject`'s partition holds: its JSON `body`, or a compact
/// `family.refreshed` completed by its keys.
fn event_of(subject: &AuditSubject, item: &Item) -> StoreResult<AuditEvent> {
    match (item.get(BODY), item.get(COMPACT), subject) {
        (Some(AttributeValue::S(body)), _, _) => serde_json::from_str(body)
            .map_err(|_| StoreError::internal("malformed audit item body")),
        (None, Some(AttributeValue::B(compact)), AuditSubject::Family(family)) => {
            let Some(AttributeValue::S(sort)) = item.get(SK) else {
                return Err(StoreError::internal("malformed audit item: no sort key"));
            };
            keys::audit_sort_parts(sort)
                .and_then(|(time, id)| {
                    AuditEvent::from_compact_refresh(time, id, *family, compact.as_ref())
                })
                .ok_or_else(|| StoreError::internal("malformed compact audit item"))
        }
        _ => Err(StoreError::internal("malformed audit item: no body")),
    }
}
