//! Sign-in sessions and consents on SQLite: the whole record is the JSON body; every change is
//! a read and a write in one transaction of the serialised writer, so nothing interleaves.

use async_trait::async_trait;
use rusqlite::{params, OptionalExtension};

use super::{from_json, id_to_sql, map_err, to_json, SqliteStore};
use crate::clock::UnixTime;
use crate::domain::{ClientId, Consent, PrincipalId, SessionId, SignInSession};
use crate::{ConsentStore, SessionStore, StoreResult};

/// The live session's body within a write transaction.
fn live_session(
    tx: &rusqlite::Transaction<'_>,
    principal: &str,
    sid: &str,
    now: UnixTime,
) -> StoreResult<Option<SignInSession>> {
    let body: Option<String> = tx
        .prepare_cached(
            "SELECT body FROM sessions WHERE principal_id = ?1 AND sid = ?2 AND expires_at > ?3",
        )
        .and_then(|mut stmt| {
            stmt.query_row(params![principal, sid, now], |row| row.get(0))
                .optional()
        })
        .map_err(map_err)?;
    body.map(|body| from_json(&body)).transpose()
}

fn save_session(tx: &rusqlite::Transaction<'_>, session: &SignInSession) -> StoreResult<()> {
    let body = to_json(session)?;
    tx.prepare_cached(
        "INSERT INTO sessions (principal_id, sid, expires_at, body) VALUES (?1, ?2, ?3, ?4) \
         ON CONFLICT (principal_id, sid) DO UPDATE SET expires_at = ?3, body = ?4",
    )
    .and_then(|mut stmt| {
        stmt.execute(params![
            id_to_sql(&session.principal_id),
            session.sid.as_str(),
            session.expires_at,
            body,
        ])
    })
    .map_err(map_err)?;
    Ok(())
}

#[async_trait]
impl SessionStore for SqliteStore {
    async fn put_session(&self, session: &SignInSession) -> StoreResult<()> {
        let params = (
            id_to_sql(&session.principal_id),
            session.sid.to_string(),
            session.expires_at,
            to_json(session)?,
        );
        self.execute(
            "INSERT INTO sessions (principal_id, sid, expires_at, body) VALUES (?1, ?2, ?3, ?4)",
            params,
        )
        .await?;
        Ok(())
    }

    async fn get_session(
        &self,
        principal: &PrincipalId,
        sid: &SessionId,
        now: UnixTime,
    ) -> StoreResult<Option<SignInSession>> {
        self.get_body(
            "SELECT body FROM sessions WHERE principal_id = ?1 AND sid = ?2 AND expires_at > ?3",
            (id_to_sql(principal), sid.to_string(), now),
        )
        .await
    }

    async fn list_sessions(
        &self,
        principal: &PrincipalId,
        now: UnixTime,
    ) -> StoreResult<Vec<SignInSession>> {
        let principal = id_to_sql(principal);
        let mut sessions: Vec<SignInSession> = self
            .read(move |conn| {
                let bodies: Vec<String> = conn
                    .prepare_cached(
                        "SELECT body FROM sessions WHERE principal_id = ?1 AND expires_at > ?2",
                    )
                    .and_then(|mut stmt| {
                        stmt.query_map(params![principal, now], |row| row.get(0))?
                            .collect()
                    })
                    .map_err(map_err)?;
                bodies.iter().map(|body| from_json(body)).collect()
            })
            .await?;
        sessions.sort_by(|a, b| (a.started_at, &a.sid).cmp(&(b.started_at, &b.sid)));
        Ok(sessions)
    }

    async fn touch_session(
        &self,
        principal: &PrincipalId,
        sid: &SessionId,
        last_seen: UnixTime,
        expires_at: UnixTime,
    ) -> StoreResult<bool> {
        let (principal, sid) = (id_to_sql(principal), sid.to_string());
        self.write_tx(move |tx| {
            let Some(mut session) = live_session(tx, &principal, &sid, last_seen)? else {
                return Ok(false);
            };
            if session.last_seen >= last_seen {
                return Ok(false);
            }
            session.last_seen = last_seen;
            session.expires_at = expires_at;
            save_session(tx, &session)?;
            Ok(true)
        })
        .await
    }

    async fn reauthenticate_session(
        &self,
        session: &SignInSession,
        now: UnixTime,
    ) -> StoreResult<bool> {
        let new = session.clone();
        self.write_tx(move |tx| {
            let principal = id_to_sql(&new.principal_id);
            let Some(stored) = live_session(tx, &principal, new.sid.as_str(), now)? else {
                return Ok(false);
            };
            save_session(
                tx,
                &SignInSession {
                    cookie_hash: new.cookie_hash,
                    authenticated_at: new.authenticated_at,
                    amr: new.amr,
                    last_seen: new.last_seen,
                    expires_at: new.expires_at,
                    ..stored
                },
            )?;
            Ok(true)
        })
        .await
    }

    async fn add_session_client(
        &self,
        principal: &PrincipalId,
        sid: &SessionId,
        client: &ClientId,
        now: UnixTime,
    ) -> StoreResult<bool> {
        let (principal, sid, client) = (id_to_sql(principal), sid.to_string(), *client);
        self.write_tx(move |tx| {
            let Some(mut session) = live_session(tx, &principal, &sid, now)? else {
                return Ok(false);
            };
            if !session.clients.contains(&client) {
                session.clients.push(client);
                save_session(tx, &session)?;
            }
            Ok(true)
        })
        .await
    }

    async fn delete_session(
        &self,
        principal: &PrincipalId,
        sid: &SessionId,
        now: UnixTime,
    ) -> StoreResult<Option<SignInSession>> {
        let (principal, sid) = (id_to_sql(principal), sid.to_string());
        self.write_tx(move |tx| {
            let session = live_session(tx, &principal, &sid, now)?;
            tx.prepare_cached("DELETE FROM sessions WHERE principal_id = ?1 AND sid = ?2")
                .and_then(|mut stmt| stmt.execute(params![principal, sid]))
                .map_err(map_err)?;
            Ok(session)
        })
        .await
    }
}

#[async_trait]
impl ConsentStore for SqliteStore {
    async fn put_consent(&self, consent: &Consent) -> StoreResult<()> {
        let params = (
            id_to_sql(&consent.principal_id),
            id_to_sql(&consent.client_id),
            to_json(consent)?,
        );
        self.execute(
            "INSERT INTO consents (principal_id, client_id, body) VALUES (?1, ?2, ?3) \
             ON CONFLICT (principal_id, client_id) DO UPDATE SET body = ?3",
            params,
        )
        .await?;
        Ok(())
    }

    async fn get_consent(
        &self,
        principal: &PrincipalId,
        client: &ClientId,
    ) -> StoreResult<Option<Consent>> {
        self.get_body(
            "SELECT body FROM consents WHERE principal_id = ?1 AND client_id = ?2",
            (id_to_sql(principal), id_to_sql(client)),
        )
        .await
    }

    async fn list_consents(&self, principal: &PrincipalId) -> StoreResult<Vec<Consent>> {
        let principal = id_to_sql(principal);
        self.read(move |conn| {
            let bodies: Vec<String> = conn
                .prepare_cached(
                    "SELECT body FROM consents WHERE principal_id = ?1 ORDER BY client_id",
                )
                .and_then(|mut stmt| {
                    stmt.query_map(params![principal], |row| row.get(0))?
                        .collect()
                })
                .map_err(map_err)?;
            bodies.iter().map(|body| from_json(body)).collect()
        })
        .await
    }

    async fn delete_consent(
        &self,
        principal: &PrincipalId,
        client: &ClientId,
    ) -> StoreResult<bool> {
        let deleted = self
            .execute(
                "DELETE FROM consents WHERE principal_id = ?1 AND client_id = ?2",
                (id_to_sql(principal), id_to_sql(client)),
            )
            .await?;
        Ok(deleted > 0)
    }
}
