//! Authorization codes on SQLite. `redeemed_at` and `family_id` are columns, authoritative
//! over the JSON body, so redeeming is one conditional `UPDATE`.

use async_trait::async_trait;
use rusqlite::{params, OptionalExtension};

use super::{from_json, id_to_sql, map_err, to_json, SqliteStore};
use crate::clock::UnixTime;
use crate::domain::{AuthorizationCode, ClientId, FamilyId, REDEEMED_CODE_RETENTION_SECONDS};
use crate::secrets::TokenHash;
use crate::{AuthorizationCodeStore, CodeRedeemed, StoreError, StoreResult};

#[async_trait]
impl AuthorizationCodeStore for SqliteStore {
    async fn put_authorization_code(&self, code: &AuthorizationCode) -> StoreResult<()> {
        let params = (
            code.code_hash.to_hex(),
            id_to_sql(&code.client_id),
            code.expires_at,
            to_json(code)?,
        );
        self.execute(
            "INSERT INTO authorization_codes (code_hash, client_id, expires_at, body) \
             VALUES (?1, ?2, ?3, ?4)",
            params,
        )
        .await?;
        Ok(())
    }

    async fn get_authorization_code(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<AuthorizationCode>> {
        let hash = hash.to_hex();
        self.read(move |conn| {
            type Row = (String, Option<UnixTime>, Option<String>, UnixTime);
            let row: Option<Row> = conn
                .prepare_cached(
                    "SELECT body, redeemed_at, family_id, expires_at FROM authorization_codes \
                     WHERE code_hash = ?1 AND expires_at > ?2",
                )
                .and_then(|mut stmt| {
                    stmt.query_row(params![hash, now], |row| {
                        Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
                    })
                    .optional()
                })
                .map_err(map_err)?;
            let Some((body, redeemed_at, family_id, expires_at)) = row else {
                return Ok(None);
            };
            let mut code: AuthorizationCode = from_json(&body)?;
            code.redeemed_at = redeemed_at;
            code.expires_at = expires_at;
            code.family_id = family_id
                .map(|id| FamilyId::parse(&id))
                .transpose()
                .map_err(|_| StoreError::Internal("malformed stored family id".into()))?;
            Ok(Some(code))
        })
        .await
    }

    async fn redeem_authorization_code(
        &self,
        hash: &TokenHash,
        client_id: &ClientId,
        family_id: Option<&FamilyId>,
        now: UnixTime,
    ) -> StoreResult<CodeRedeemed> {
        // As on DynamoDB: a repeat of the same redemption (same family) lands again; a NULL
        // family (a refused code) never equals anything.
        let changed = self
            .execute(
                "UPDATE authorization_codes \
                 SET redeemed_at = COALESCE(redeemed_at, ?3), family_id = ?4, expires_at = ?5 \
                 WHERE code_hash = ?1 AND client_id = ?2 \
                 AND ((redeemed_at IS NULL AND expires_at > ?3) OR family_id = ?4)",
                (
                    hash.to_hex(),
                    id_to_sql(client_id),
                    now,
                    family_id.map(id_to_sql),
                    now + REDEEMED_CODE_RETENTION_SECONDS,
                ),
            )
            .await?;
        Ok(if changed == 1 {
            CodeRedeemed::Redeemed
        } else {
            CodeRedeemed::NotRedeemable
        })
    }
}
