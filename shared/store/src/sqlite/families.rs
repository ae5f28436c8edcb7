//! Token families, refresh tokens and access tokens on SQLite.

use async_trait::async_trait;
use rusqlite::{params, OptionalExtension};

use super::{from_json, hash_from_column, id_to_sql, map_err, to_json, SqliteStore};
use crate::clock::UnixTime;
use crate::domain::{AccessTokenRecord, Family, FamilyId, RefreshTokenRecord, TokenId};
use crate::secrets::TokenHash;
use crate::{
    FamilyOrigin, FamilyStore, FamilyWrite, NewFamily, RefreshTokenWithOrigin, Renewal, Rotation,
    StoreResult,
};

/// A family row: the body laid under the mutable columns.
pub(super) fn family_from_row(
    body: &str,
    current_token: &str,
    generation: u32,
    expires_at: UnixTime,
    revoked_at: Option<UnixTime>,
) -> StoreResult<Family> {
    let mut family: Family = from_json(body)?;
    family.current_token = hash_from_column(current_token)?;
    family.generation = generation;
    family.expires_at = expires_at;
    family.revoked_at = revoked_at;
    Ok(family)
}

/// A refresh token row: the mutable columns (renewed expiry, rotation time) override the body.
fn refresh_token_from_row(
    body: &str,
    expires_at: UnixTime,
    rotated_at: Option<UnixTime>,
) -> StoreResult<RefreshTokenRecord> {
    let mut record: RefreshTokenRecord = from_json(body)?;
    record.expires_at = expires_at;
    record.rotated_at = rotated_at;
    Ok(record)
}

fn insert_refresh_token(
    tx: &rusqlite::Transaction<'_>,
    record: &RefreshTokenRecord,
) -> StoreResult<()> {
    let body = to_json(record)?;
    // A plain INSERT: a hash collision is a bug, and must not overwrite an issued token.
    tx.prepare_cached(
        "INSERT INTO refresh_tokens (token_hash, family_id, expires_at, rotated_at, body)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )
    .and_then(|mut stmt| {
        stmt.execute(params![
            record.token_hash.to_hex(),
            id_to_sql(&record.family_id),
            record.expires_at,
            record.rotated_at,
            body,
        ])
    })
    .map_err(map_err)?;
    Ok(())
}

const UPSERT_ACCESS_TOKEN: &str =
    "INSERT OR REPLACE INTO access_tokens (jti, family_id, expires_at, revoked, body)
     VALUES (?1, ?2, ?3, ?4, ?5)";

fn access_token_params(
    record: &AccessTokenRecord,
) -> StoreResult<(String, Option<String>, UnixTime, bool, String)> {
    Ok((
        id_to_sql(&record.jti),
        record.family_id.as_ref().map(id_to_sql),
        record.expires_at,
        record.revoked,
        to_json(record)?,
    ))
}

fn insert_access_token(
    tx: &rusqlite::Transaction<'_>,
    record: &AccessTokenRecord,
) -> StoreResult<()> {
    let params = access_token_params(record)?;
    tx.prepare_cached(UPSERT_ACCESS_TOKEN)
        .and_then(|mut stmt| stmt.execute(params))
        .map_err(map_err)?;
    Ok(())
}

/// Runs a batch's family operation in its transaction: `false` when its condition failed (the
/// batch rolls back whatever it wrote).
pub(super) fn apply_in(tx: &rusqlite::Transaction<'_>, write: &FamilyWrite) -> StoreResult<bool> {
    match write {
        FamilyWrite::Start(new) => start_in(tx, new).map(|()| true),
        FamilyWrite::Renew(renewal) => renew_in(tx, renewal),
        FamilyWrite::Revoke { id, now } => {
            let revoked = tx
                .prepare_cached(
                    "UPDATE families SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL",
                )
                .and_then(|mut stmt| stmt.execute(params![id_to_sql(id), now]))
                .map_err(map_err)?;
            Ok(revoked > 0)
        }
        FamilyWrite::PutAccessToken(record) => insert_access_token(tx, record).map(|()| true),
    }
}

fn start_in(tx: &rusqlite::Transaction<'_>, new: &NewFamily) -> StoreResult<()> {
    let family = &new.family;
    let body = to_json(family)?;
    // A plain INSERT: an id collision is a bug, and must not overwrite a family.
    tx.prepare_cached(
        "INSERT INTO families (id, current_token, generation, expires_at, revoked_at, body)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )
    .and_then(|mut stmt| {
        stmt.execute(params![
            id_to_sql(&family.id),
            family.current_token.to_hex(),
            family.generation,
            family.expires_at,
            family.revoked_at,
            body,
        ])
    })
    .map_err(map_err)?;
    if let Some(record) = &new.refresh_token {
        insert_refresh_token(tx, record)?;
    }
    insert_access_token(tx, &new.access_token)
}

/// `rotation.origin` is not copied: the family's row has it, joined on read.
pub(super) fn rotate_in(tx: &rusqlite::Transaction<'_>, rotation: &Rotation) -> StoreResult<bool> {
    let successor = &rotation.successor;
    // The condition is the whole race protection: of concurrent rotations of one token only the
    // first sees it current, whichever process or connection it comes from. The family keeps
    // what its successor, which names it and has no record, needs: its binding, and from which
    // generation the family is bound.
    let changed = tx
        .prepare_cached(
            "UPDATE families SET current_token = ?1, generation = ?2, expires_at = ?3,
                 body = json_set(body, '$.rotated_at', ?6, '$.rotated_by', ?7,
                     '$.current_jkt', ?8,
                     '$.bound_from', CASE WHEN ?8 IS NULL THEN json_extract(body, '$.bound_from')
                         ELSE coalesce(json_extract(body, '$.bound_from'), ?2) END)
             WHERE id = ?4 AND current_token = ?5 AND revoked_at IS NULL AND expires_at > ?6",
        )
        .and_then(|mut stmt| {
            stmt.execute(params![
                successor.token_hash.to_hex(),
                successor.generation,
                successor.expires_at,
                id_to_sql(&rotation.family_id),
                rotation.presented.to_hex(),
                rotation.now,
                rotation.access_token.jti.to_string(),
                successor.jkt,
            ])
        })
        .map_err(map_err)?;
    if changed == 0 {
        return Ok(false);
    }
    insert_access_token(tx, &rotation.access_token)?;
    Ok(true)
}

fn renew_in(tx: &rusqlite::Transaction<'_>, renewal: &Renewal) -> StoreResult<bool> {
    let presented = renewal.presented.to_hex();
    let changed = tx
        .prepare_cached(
            "UPDATE families SET expires_at = ?1
             WHERE id = ?2 AND current_token = ?3 AND revoked_at IS NULL AND expires_at > ?4",
        )
        .and_then(|mut stmt| {
            stmt.execute(params![
                renewal.expires_at,
                id_to_sql(&renewal.family_id),
                presented,
                renewal.now
            ])
        })
        .map_err(map_err)?;
    if changed == 0 {
        return Ok(false);
    }
    if renewal.renews_record {
        tx.prepare_cached("UPDATE refresh_tokens SET expires_at = ?2 WHERE token_hash = ?1")
            .and_then(|mut stmt| stmt.execute(params![presented, renewal.expires_at]))
            .map_err(map_err)?;
    }
    insert_access_token(tx, &renewal.access_token)?;
    Ok(true)
}

#[async_trait]
impl FamilyStore for SqliteStore {
    async fn get_family(&self, id: &FamilyId, now: UnixTime) -> StoreResult<Option<Family>> {
        let id = id_to_sql(id);
        self.read(move |conn| {
            let row: Option<(String, String, u32, UnixTime, Option<UnixTime>)> = conn
                .prepare_cached(
                    "SELECT body, current_token, generation, expires_at, revoked_at
                     FROM families WHERE id = ?1 AND expires_at > ?2",
                )
                .and_then(|mut stmt| {
                    stmt.query_row(params![id, now], |row| {
                        Ok((
                            row.get(0)?,
                            row.get(1)?,
                            row.get(2)?,
                            row.get(3)?,
                            row.get(4)?,
                        ))
                    })
                    .optional()
                })
                .map_err(map_err)?;
            row.map(|(body, current, generation, expires_at, revoked_at)| {
                family_from_row(&body, &current, generation, expires_at, revoked_at)
            })
            .transpose()
        })
        .await
    }

    async fn get_refresh_token(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<RefreshTokenRecord>> {
        let hex = hash.to_hex();
        self.read(move |conn| {
            let row: Option<(String, UnixTime, Option<UnixTime>)> = conn
                .prepare_cached(
                    "SELECT body, expires_at, rotated_at FROM refresh_tokens
                     WHERE token_hash = ?1 AND expires_at > ?2",
                )
                .and_then(|mut stmt| {
                    stmt.query_row(params![hex, now], |row| {
                        Ok((row.get(0)?, row.get(1)?, row.get(2)?))
                    })
                    .optional()
                })
                .map_err(map_err)?;
            row.map(|(body, expires_at, rotated_at)| {
                refresh_token_from_row(&body, expires_at, rotated_at)
            })
            .transpose()
        })
        .await
    }

    async fn get_refresh_token_with_origin(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<RefreshTokenWithOrigin>> {
        let hex = hash.to_hex();
        self.read(move |conn| {
            // The family's body holds its origin, which no update touches.
            let row: Option<(String, UnixTime, Option<UnixTime>, String)> = conn
                .prepare_cached(
                    "SELECT r.body, r.expires_at, r.rotated_at, f.body
                     FROM refresh_tokens r JOIN families f ON f.id = r.family_id
                     WHERE r.token_hash = ?1 AND r.expires_at > ?2",
                )
                .and_then(|mut stmt| {
                    stmt.query_row(params![hex, now], |row| {
                        Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
                    })
                    .optional()
                })
                .map_err(map_err)?;
            row.map(|(body, expires_at, rotated_at, family_body)| {
                let family: Family = from_json(&family_body)?;
                Ok(RefreshTokenWithOrigin {
                    record: refresh_token_from_row(&body, expires_at, rotated_at)?,
                    origin: FamilyOrigin::from(&family),
                })
            })
            .transpose()
        })
        .await
    }

    async fn revoke_family(&self, id: &FamilyId, now: UnixTime) -> StoreResult<bool> {
        let id = id_to_sql(id);
        let changed = self
            .execute(
                "UPDATE families SET revoked_at = coalesce(revoked_at, ?2) WHERE id = ?1",
                (id, now),
            )
            .await?;
        Ok(changed > 0)
    }

    async fn put_access_token(&self, record: &AccessTokenRecord) -> StoreResult<()> {
        let params = access_token_params(record)?;
        self.execute(UPSERT_ACCESS_TOKEN, params).await?;
        Ok(())
    }

    async fn get_access_token(
        &self,
        jti: &TokenId,
        now: UnixTime,
    ) -> StoreResult<Option<AccessTokenRecord>> {
        let jti = id_to_sql(jti);
        self.read(move |conn| {
            // Revoked: its own mark, its family's, or any token it was exchanged from, marked
            // or gone (those outlive it, so a gone one was not merely swept).
            let row: Option<(String, bool)> = conn
                .prepare_cached(
                    "SELECT a.body, a.revoked OR f.revoked_at IS NOT NULL
                        OR coalesce(json_array_length(a.body, '$.exchanged_from'), 0) > (
                            SELECT count(*) FROM json_each(a.body, '$.exchanged_from') e
                            JOIN access_tokens s ON s.jti = e.value WHERE s.revoked = 0)
                     FROM access_tokens a LEFT JOIN families f ON f.id = a.family_id
                     WHERE a.jti = ?1 AND a.expires_at > ?2",
                )
                .and_then(|mut stmt| {
                    stmt.query_row(params![jti, now], |row| Ok((row.get(0)?, row.get(1)?)))
                        .optional()
                })
                .map_err(map_err)?;
            row.map(|(body, revoked)| {
                let mut record: AccessTokenRecord = from_json(&body)?;
                record.revoked = revoked;
                Ok(record)
            })
            .transpose()
        })
        .await
    }
}
