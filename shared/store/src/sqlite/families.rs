//! Token families, refresh tokens and access tokens on SQLite.

use async_trait::async_trait;
use rusqlite::{params, OptionalExtension};

use super::audit::insert_audit_events;
use super::rate_limits::count_hit_in;
use super::{from_json, hash_from_column, id_to_sql, map_err, to_json, SqliteStore};
use crate::clock::UnixTime;
use crate::domain::audit::AuditEvent;
use crate::domain::{AccessTokenRecord, Family, FamilyId, RefreshTokenRecord, TokenId};
use crate::secrets::TokenHash;
use crate::{
    FamilyCreated, FamilyOrigin, FamilyRevoked, FamilyStore, Hit, NewFamily, RateKey, RateLimit,
    RefreshTokenWithOrigin, Renewal, Renewed, Rotated, Rotation, StoreResult,
};

/// A family row: the body laid under the mutable columns.
fn family_from_row(
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
    upsert_access_token(tx, access_token_params(record)?)
}

/// Writes an access token's row from its [`access_token_params`] (made before the write, off
/// the connection, where the caller can).
fn upsert_access_token(
    tx: &rusqlite::Transaction<'_>,
    params: impl rusqlite::Params,
) -> StoreResult<()> {
    tx.prepare_cached(UPSERT_ACCESS_TOKEN)
        .and_then(|mut stmt| stmt.execute(params))
        .map_err(map_err)?;
    Ok(())
}

#[async_trait]
impl FamilyStore for SqliteStore {
    async fn create_family(&self, new: NewFamily<'_>) -> StoreResult<FamilyCreated> {
        let family = new.family.clone();
        let family_body = to_json(&family)?;
        let refresh = new.refresh_token.clone();
        let access = new.access_token.clone();
        let exchange = new.legacy_exchange.clone();
        let refund = new.login_refund.clone();
        let audit = new.audit.to_vec();
        self.write_tx(move |tx| {
            if let Some(update) = &exchange {
                let linked: Option<String> = tx
                    .prepare_cached("SELECT family_id FROM legacy_exchanges WHERE token_hash = ?1")
                    .and_then(|mut stmt| {
                        stmt.query_row([update.exchange.token_hash.to_hex()], |row| row.get(0))
                            .optional()
                    })
                    .map_err(map_err)?;
                let seen = update.previous_family.as_ref().map(id_to_sql);
                if linked != seen {
                    // Checked before any write, so losing leaves nothing behind.
                    return Ok(FamilyCreated::LegacyExchangeRaced);
                }
            }

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
                    family_body,
                ])
            })
            .map_err(map_err)?;
            insert_refresh_token(tx, &refresh)?;
            insert_access_token(tx, &access)?;
            if let Some(refund) = &refund {
                super::lockout::refund_in(tx, refund)?;
            }

            if let Some(update) = &exchange {
                tx.prepare_cached(
                    "INSERT OR REPLACE INTO legacy_exchanges (token_hash, family_id, exchanged_at)
                     VALUES (?1, ?2, ?3)",
                )
                .and_then(|mut stmt| {
                    stmt.execute(params![
                        update.exchange.token_hash.to_hex(),
                        id_to_sql(&update.exchange.family_id),
                        update.exchange.exchanged_at,
                    ])
                })
                .map_err(map_err)?;
                if let Some(previous) = &update.previous_family {
                    // Only a live family is revoked here, and only then is its event written.
                    let revoked = tx
                        .execute(
                            "UPDATE families SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL",
                            params![id_to_sql(previous), update.exchange.exchanged_at],
                        )
                        .map_err(map_err)?;
                    if revoked > 0 {
                        insert_audit_events(tx, &audit)?;
                        insert_audit_events(tx, &update.previous_revoked)?;
                        return Ok(FamilyCreated::CreatedRevokingPrevious);
                    }
                }
            }
            insert_audit_events(tx, &audit)?;
            Ok(FamilyCreated::Created)
        })
        .await
    }

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

    async fn rotate_refresh_token(&self, rotation: Rotation<'_>) -> StoreResult<Rotated> {
        // `rotation.origin` is not copied: the family's row has it, joined on read.
        let family_id = id_to_sql(&rotation.family_id);
        let presented = rotation.presented.to_hex();
        let successor = rotation.successor.clone();
        let access = rotation.access_token.clone();
        let now = rotation.now;
        let audit = rotation.audit.to_vec();
        self.write_tx(move |tx| {
            // The condition is the whole race protection: of concurrent rotations of one token
            // only the first sees it current, whichever process or connection it comes from.
            let changed = tx
                .prepare_cached(
                    "UPDATE families SET current_token = ?1, generation = ?2, expires_at = ?3
                     WHERE id = ?4 AND current_token = ?5 AND revoked_at IS NULL
                       AND expires_at > ?6",
                )
                .and_then(|mut stmt| {
                    stmt.execute(params![
                        successor.token_hash.to_hex(),
                        successor.generation,
                        successor.expires_at,
                        family_id,
                        presented,
                        now,
                    ])
                })
                .map_err(map_err)?;
            if changed == 0 {
                return Ok(Rotated::NotCurrent);
            }
            tx.prepare_cached("UPDATE refresh_tokens SET rotated_at = ?2 WHERE token_hash = ?1")
                .and_then(|mut stmt| stmt.execute(params![presented, now]))
                .map_err(map_err)?;
            insert_refresh_token(tx, &successor)?;
            insert_access_token(tx, &access)?;
            insert_audit_events(tx, &audit)?;
            Ok(Rotated::Rotated)
        })
        .await
    }

    async fn renew_refresh_token(&self, renewal: Renewal<'_>) -> StoreResult<Renewed> {
        let family_id = id_to_sql(&renewal.family_id);
        let presented = renewal.presented.to_hex();
        let access = renewal.access_token.clone();
        let (expires_at, now) = (renewal.expires_at, renewal.now);
        let audit = renewal.audit.to_vec();
        self.write_tx(move |tx| {
            let changed = tx
                .prepare_cached(
                    "UPDATE families SET expires_at = ?1
                     WHERE id = ?2 AND current_token = ?3 AND revoked_at IS NULL
                       AND expires_at > ?4",
                )
                .and_then(|mut stmt| stmt.execute(params![expires_at, family_id, presented, now]))
                .map_err(map_err)?;
            if changed == 0 {
                return Ok(Renewed::NotCurrent);
            }
            tx.prepare_cached("UPDATE refresh_tokens SET expires_at = ?2 WHERE token_hash = ?1")
                .and_then(|mut stmt| stmt.execute(params![presented, expires_at]))
                .map_err(map_err)?;
            insert_access_token(tx, &access)?;
            insert_audit_events(tx, &audit)?;
            Ok(Renewed::Renewed)
        })
        .await
    }

    async fn revoke_family_recorded(
        &self,
        id: &FamilyId,
        now: UnixTime,
        audit: &[AuditEvent],
    ) -> StoreResult<FamilyRevoked> {
        let id = id_to_sql(id);
        let audit = audit.to_vec();
        self.write_tx(move |tx| {
            let revoked = tx
                .prepare_cached(
                    "UPDATE families SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL",
                )
                .and_then(|mut stmt| stmt.execute(params![id, now]))
                .map_err(map_err)?;
            if revoked > 0 {
                insert_audit_events(tx, &audit)?;
                return Ok(FamilyRevoked::Revoked);
            }
            // Already revoked (the first revocation time stays), or no such family.
            let exists = tx
                .prepare_cached("SELECT 1 FROM families WHERE id = ?1")
                .and_then(|mut stmt| stmt.exists([&id]))
                .map_err(map_err)?;
            Ok(if exists {
                FamilyRevoked::AlreadyRevoked
            } else {
                FamilyRevoked::NotFound
            })
        })
        .await
    }

    async fn put_access_token(&self, record: &AccessTokenRecord) -> StoreResult<()> {
        let params = access_token_params(record)?;
        self.execute(UPSERT_ACCESS_TOKEN, params).await?;
        Ok(())
    }

    /// One write instead of two: a write's queueing, savepoint and share of a commit cost more
    /// than its statement (docs/benchmarks.md, "Where a client_credentials request's CPU goes").
    async fn put_counted_access_token(
        &self,
        record: &AccessTokenRecord,
        key: &RateKey,
        limit: RateLimit,
        now: UnixTime,
    ) -> StoreResult<Hit> {
        let params = access_token_params(record)?;
        let key = key.stored();
        self.write_tx(move |tx| {
            let hit = count_hit_in(tx, &key, limit, now)?;
            if let Hit::Counted { .. } = hit {
                upsert_access_token(tx, params)?;
            }
            Ok(hit)
        })
        .await
    }

    async fn get_access_token(
        &self,
        jti: &TokenId,
        now: UnixTime,
    ) -> StoreResult<Option<AccessTokenRecord>> {
        let jti = id_to_sql(jti);
        self.read(move |conn| {
            let row: Option<(String, bool)> = conn
                .prepare_cached(
                    "SELECT a.body, a.revoked OR f.revoked_at IS NOT NULL
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
