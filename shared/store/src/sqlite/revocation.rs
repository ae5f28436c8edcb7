//! Access-token and connection revocation on SQLite.

use async_trait::async_trait;

use super::audit::insert_audit_events;
use super::families::family_from_row;
use super::{id_to_sql, map_err, SqliteStore};
use crate::clock::UnixTime;
use crate::domain::audit::AuditEvent;
use crate::domain::{ClientId, FamilyId, PrincipalId, TokenId};
use crate::{AuditFor, Connection, RevocationStore, StoreError, StoreResult, TokenRevoked};

/// The live families of a connection. The owner and client live in the body only; a scan of
/// one user's families is cheap for the embedded store, which serves one developer's data.
const OF_THE_CONNECTION: &str = "json_extract(body, '$.principal_id') = ?1
    AND json_extract(body, '$.client_id') = ?2 AND revoked_at IS NULL
    AND json_extract(body, '$.created_at') <= ?3";

#[async_trait]
impl RevocationStore for SqliteStore {
    async fn revoke_access_token_recorded(
        &self,
        jti: &TokenId,
        now: UnixTime,
        audit: &[AuditEvent],
    ) -> StoreResult<TokenRevoked> {
        // The `revoked` column is what reads consult; the JSON body keeps its issue-time copy.
        let jti = id_to_sql(jti);
        let audit = audit.to_vec();
        self.write_tx(move |tx| {
            let marked = tx
                .prepare_cached(
                    "UPDATE access_tokens SET revoked = 1
                     WHERE jti = ?1 AND expires_at > ?2 AND revoked = 0",
                )
                .and_then(|mut stmt| stmt.execute(rusqlite::params![jti, now]))
                .map_err(map_err)?;
            if marked > 0 {
                insert_audit_events(tx, &audit)?;
                return Ok(TokenRevoked::Revoked);
            }
            let present = tx
                .prepare_cached("SELECT 1 FROM access_tokens WHERE jti = ?1 AND expires_at > ?2")
                .and_then(|mut stmt| stmt.exists(rusqlite::params![jti, now]))
                .map_err(map_err)?;
            Ok(if present {
                TokenRevoked::AlreadyRevoked
            } else {
                TokenRevoked::NotFound
            })
        })
        .await
    }

    async fn revoke_connection_started_by(
        &self,
        principal: &PrincipalId,
        client: &ClientId,
        started_by: UnixTime,
        now: UnixTime,
        audit: Option<AuditFor<'_>>,
    ) -> StoreResult<Vec<FamilyId>> {
        let (principal, client) = (id_to_sql(principal), id_to_sql(client));
        let live: Vec<String> = {
            let (principal, client) = (principal.clone(), client.clone());
            self.read(move |conn| {
                conn.prepare_cached(&format!(
                    "SELECT id FROM families WHERE {OF_THE_CONNECTION}"
                ))
                .and_then(|mut stmt| {
                    stmt.query_map(rusqlite::params![principal, client, started_by], |row| {
                        row.get(0)
                    })?
                    .collect::<Result<_, _>>()
                })
                .map_err(map_err)
            })
            .await?
        };
        // Each event is made before the write (the caller's closure cannot run on the
        // connection's thread) and written with its family's revocation.
        let mut revocations = Vec::with_capacity(live.len());
        for id in live {
            let family = FamilyId::parse(&id)
                .map_err(|_| StoreError::internal("malformed stored family id".to_owned()))?;
            revocations.push((id, family, audit.map(|audit| audit(family))));
        }
        self.write_tx(move |tx| {
            let mut revoked = Vec::new();
            for (id, family, event) in &revocations {
                let changed = tx
                    .prepare_cached(
                        "UPDATE families SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL",
                    )
                    .and_then(|mut stmt| stmt.execute(rusqlite::params![id, now]))
                    .map_err(map_err)?;
                if changed > 0 {
                    insert_audit_events(tx, event.as_slice())?;
                    revoked.push(*family);
                }
            }
            // A family started since the read above is revoked all the same (without an event:
            // a race this store, serving one developer, does not expect).
            tx.prepare_cached(&format!(
                "UPDATE families SET revoked_at = ?4 WHERE {OF_THE_CONNECTION}"
            ))
            .and_then(|mut stmt| {
                stmt.execute(rusqlite::params![principal, client, started_by, now])
            })
            .map_err(map_err)?;
            Ok(revoked)
        })
        .await
    }

    async fn user_connections(
        &self,
        user: &PrincipalId,
        now: UnixTime,
    ) -> StoreResult<Vec<Connection>> {
        let principal = id_to_sql(user);
        let families = self
            .read(move |conn| {
                conn.prepare_cached(
                    "SELECT body, current_token, generation, expires_at, revoked_at FROM families
                     WHERE json_extract(body, '$.principal_id') = ?1
                     AND revoked_at IS NULL AND expires_at > ?2",
                )
                .and_then(|mut stmt| {
                    stmt.query_map(rusqlite::params![principal, now], |row| {
                        Ok((
                            row.get::<_, String>(0)?,
                            row.get::<_, String>(1)?,
                            row.get(2)?,
                            row.get(3)?,
                            row.get(4)?,
                        ))
                    })?
                    .collect::<Result<Vec<_>, _>>()
                })
                .map_err(map_err)?
                .into_iter()
                .map(|(body, current, generation, expires_at, revoked_at)| {
                    family_from_row(&body, &current, generation, expires_at, revoked_at)
                })
                .collect::<StoreResult<Vec<_>>>()
            })
            .await?;
        Ok(Connection::of_live(user, &families, now))
    }
}
