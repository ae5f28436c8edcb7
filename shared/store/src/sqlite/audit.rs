//! Audit events on SQLite: one row per event, its subjects as indexed columns. Swept like the
//! other expiring tables once past their retention.

use async_trait::async_trait;
use rusqlite::params;

use super::{from_json, id_to_sql, map_err, to_json, SqliteStore};
use crate::domain::audit::{AuditEvent, AuditSubject};
use crate::{AuditQuery, AuditStore, StoreResult};

/// Writes `events` in the caller's transaction, so that they land with the fact they record.
pub(super) fn insert_audit_events(
    tx: &rusqlite::Transaction<'_>,
    events: &[AuditEvent],
) -> StoreResult<()> {
    for event in events {
        let body = to_json(event)?;
        tx.prepare_cached(
            "INSERT INTO audit_events
                 (id, at, principal_id, client_id, family_id, expires_at, body)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )
        .and_then(|mut stmt| {
            stmt.execute(params![
                id_to_sql(&event.id),
                event.time,
                event.principal_id.as_ref().map(id_to_sql),
                event.client_id.as_ref().map(id_to_sql),
                event.family_id.as_ref().map(id_to_sql),
                event.expires_at(),
                body,
            ])
        })
        .map_err(map_err)?;
    }
    Ok(())
}

#[async_trait]
impl AuditStore for SqliteStore {
    async fn put_audit_event(&self, event: &AuditEvent) -> StoreResult<()> {
        let event = event.clone();
        self.write_tx(move |tx| insert_audit_events(tx, std::slice::from_ref(&event)))
            .await
    }

    async fn audit_events(&self, query: AuditQuery) -> StoreResult<Vec<AuditEvent>> {
        // Column names come from this match, never from input.
        let (filter, id) = match query.subject {
            AuditSubject::Principal(id) => ("principal_id = ?1", Some(id_to_sql(&id))),
            AuditSubject::Client(id) => ("client_id = ?1", Some(id_to_sql(&id))),
            AuditSubject::Family(id) => ("family_id = ?1", Some(id_to_sql(&id))),
            AuditSubject::Deployment => (
                "?1 IS NULL AND principal_id IS NULL AND client_id IS NULL AND family_id IS NULL",
                None,
            ),
        };
        let sql = format!(
            "SELECT body FROM audit_events
             WHERE {filter} AND at >= ?2 AND expires_at > ?3
             ORDER BY at DESC, id DESC"
        );
        let since = query.since.unwrap_or(i64::MIN);
        let now = query.now;
        self.read(move |conn| {
            let bodies: Vec<String> = conn
                .prepare(&sql)
                .and_then(|mut stmt| {
                    stmt.query_map(params![id, since, now], |row| row.get(0))?
                        .collect::<Result<_, _>>()
                })
                .map_err(map_err)?;
            bodies.iter().map(|body| from_json(body)).collect()
        })
        .await
    }
}
