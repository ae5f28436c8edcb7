//! A company's directory on SQLite: provisioning tokens, users by company (the index
//! `users_by_company`), conditional replacements and removals, groups.

use async_trait::async_trait;
use rusqlite::{params, ErrorCode};

use super::{from_json, id_to_sql, map_err, to_json, SqliteStore};
use crate::clock::UnixTime;
use crate::domain::{DirectoryGroup, PrincipalId, ProvisioningToken, User};
use crate::secrets::TokenHash;
use crate::{DirectoryStore, Replaced, StoreResult, UserPage};

/// The stored user's revision, spelt for a condition (a revision of 0 is not serialized).
const REVISION: &str = "coalesce(json_extract(body, '$.revision'), 0)";

fn is_constraint(error: &rusqlite::Error) -> bool {
    error.sqlite_error_code() == Some(ErrorCode::ConstraintViolation)
}

#[async_trait]
impl DirectoryStore for SqliteStore {
    async fn insert_provisioning_token(&self, token: &ProvisioningToken) -> StoreResult<()> {
        let params = (
            token.token_hash.to_hex(),
            id_to_sql(&token.company_id),
            token.id.to_string(),
            token.created_at,
            to_json(token)?,
        );
        self.execute(
            "INSERT INTO provisioning_tokens (token_hash, company_id, id, created_at, body)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params,
        )
        .await?;
        Ok(())
    }

    async fn get_provisioning_token(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<ProvisioningToken>> {
        let token: Option<ProvisioningToken> = self
            .get_body(
                "SELECT body FROM provisioning_tokens WHERE token_hash = ?1",
                [hash.to_hex()],
            )
            .await?;
        Ok(token.filter(|token| token.is_live(now)))
    }

    async fn list_provisioning_tokens(
        &self,
        company: &PrincipalId,
    ) -> StoreResult<Vec<ProvisioningToken>> {
        let company = id_to_sql(company);
        self.read(move |conn| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT body FROM provisioning_tokens WHERE company_id = ?1
                     ORDER BY created_at, id",
                )
                .map_err(map_err)?;
            let bodies = stmt
                .query_map([company], |row| row.get::<_, String>(0))
                .and_then(Iterator::collect::<Result<Vec<_>, _>>)
                .map_err(map_err)?;
            bodies.iter().map(|body| from_json(body)).collect()
        })
        .await
    }

    async fn delete_provisioning_token(
        &self,
        company: &PrincipalId,
        id: &uuid::Uuid,
    ) -> StoreResult<bool> {
        let deleted = self
            .execute(
                "DELETE FROM provisioning_tokens WHERE company_id = ?1 AND id = ?2",
                [id_to_sql(company), id.to_string()],
            )
            .await?;
        Ok(deleted > 0)
    }

    async fn replace_user(&self, previous: &User, next: &User) -> StoreResult<Replaced> {
        let params = (
            id_to_sql(&next.id),
            next.login.as_str().to_owned(),
            to_json(next)?,
            previous.revision,
        );
        self.write_tx(move |tx| {
            // The unique login, address and external id indexes refuse a value another user
            // holds; the revision condition one that changed since it was read.
            let updated = tx
                .prepare_cached(&format!(
                    "UPDATE users SET login = ?2, body = ?3 WHERE id = ?1 AND {REVISION} = ?4"
                ))
                .and_then(|mut stmt| stmt.execute(params));
            match updated {
                Ok(1) => Ok(Replaced::Replaced),
                Ok(_) => Ok(Replaced::Changed),
                Err(error) if is_constraint(&error) => Ok(Replaced::Taken),
                Err(error) => Err(map_err(error)),
            }
        })
        .await
    }

    async fn delete_user(&self, user: &User) -> StoreResult<Replaced> {
        let deleted = self
            .write_tx({
                let (id, revision) = (id_to_sql(&user.id), user.revision);
                move |tx| {
                    tx.prepare_cached(&format!(
                        "DELETE FROM users WHERE id = ?1 AND {REVISION} = ?2"
                    ))
                    .and_then(|mut stmt| stmt.execute(params![id, revision]))
                    .map_err(map_err)
                }
            })
            .await?;
        Ok(if deleted == 1 {
            Replaced::Replaced
        } else {
            Replaced::Changed
        })
    }

    async fn company_users(
        &self,
        company: &PrincipalId,
        skip: usize,
        limit: usize,
    ) -> StoreResult<UserPage> {
        let company = company.to_string();
        self.read(move |conn| {
            // Spelt as the index `users_by_company` is built, so SQLite uses it.
            let total: i64 = conn
                .prepare_cached(
                    "SELECT count(*) FROM users WHERE json_extract(body, '$.company_id') = ?1",
                )
                .and_then(|mut stmt| stmt.query_row([&company], |row| row.get(0)))
                .map_err(map_err)?;
            let mut stmt = conn
                .prepare_cached(
                    "SELECT body FROM users WHERE json_extract(body, '$.company_id') = ?1
                     ORDER BY id LIMIT ?2 OFFSET ?3",
                )
                .map_err(map_err)?;
            let bodies = stmt
                .query_map(params![company, limit as i64, skip as i64], |row| {
                    row.get::<_, String>(0)
                })
                .and_then(Iterator::collect::<Result<Vec<_>, _>>)
                .map_err(map_err)?;
            let users = bodies
                .iter()
                .map(|body| from_json(body))
                .collect::<StoreResult<_>>()?;
            Ok(UserPage {
                users,
                total: usize::try_from(total).unwrap_or(0),
            })
        })
        .await
    }

    async fn company_users_after(
        &self,
        company: &PrincipalId,
        after: Option<&PrincipalId>,
        limit: usize,
    ) -> StoreResult<Vec<User>> {
        let params = (
            company.to_string(),
            after.map(ToString::to_string).unwrap_or_default(),
            limit as i64,
        );
        self.read(move |conn| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT body FROM users WHERE json_extract(body, '$.company_id') = ?1
                     AND id > ?2 ORDER BY id LIMIT ?3",
                )
                .map_err(map_err)?;
            let bodies = stmt
                .query_map(params, |row| row.get::<_, String>(0))
                .and_then(Iterator::collect::<Result<Vec<_>, _>>)
                .map_err(map_err)?;
            bodies.iter().map(|body| from_json(body)).collect()
        })
        .await
    }

    async fn insert_group(&self, group: &DirectoryGroup) -> StoreResult<bool> {
        let params = (
            id_to_sql(&group.company_id),
            group.id.to_string(),
            group.revision,
            to_json(group)?,
        );
        let inserted = self
            .execute(
                "INSERT OR IGNORE INTO directory_groups (company_id, id, revision, body)
                 VALUES (?1, ?2, ?3, ?4)",
                params,
            )
            .await?;
        Ok(inserted == 1)
    }

    async fn get_group(
        &self,
        company: &PrincipalId,
        id: &uuid::Uuid,
    ) -> StoreResult<Option<DirectoryGroup>> {
        self.get_body(
            "SELECT body FROM directory_groups WHERE company_id = ?1 AND id = ?2",
            [id_to_sql(company), id.to_string()],
        )
        .await
    }

    async fn replace_group(
        &self,
        previous: &DirectoryGroup,
        next: &DirectoryGroup,
    ) -> StoreResult<Replaced> {
        let params = (
            id_to_sql(&next.company_id),
            next.id.to_string(),
            next.revision,
            to_json(next)?,
            previous.revision,
        );
        let updated = self
            .execute(
                "UPDATE directory_groups SET revision = ?3, body = ?4
                 WHERE company_id = ?1 AND id = ?2 AND revision = ?5",
                params,
            )
            .await?;
        Ok(if updated == 1 {
            Replaced::Replaced
        } else {
            Replaced::Changed
        })
    }

    async fn delete_group(&self, group: &DirectoryGroup) -> StoreResult<Replaced> {
        let deleted = self
            .execute(
                "DELETE FROM directory_groups WHERE company_id = ?1 AND id = ?2 AND revision = ?3",
                (
                    id_to_sql(&group.company_id),
                    group.id.to_string(),
                    group.revision,
                ),
            )
            .await?;
        Ok(if deleted == 1 {
            Replaced::Replaced
        } else {
            Replaced::Changed
        })
    }

    async fn company_groups(&self, company: &PrincipalId) -> StoreResult<Vec<DirectoryGroup>> {
        let company = id_to_sql(company);
        self.read(move |conn| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT body FROM directory_groups WHERE company_id = ?1 ORDER BY id",
                )
                .map_err(map_err)?;
            let bodies = stmt
                .query_map([company], |row| row.get::<_, String>(0))
                .and_then(Iterator::collect::<Result<Vec<_>, _>>)
                .map_err(map_err)?;
            bodies.iter().map(|body| from_json(body)).collect()
        })
        .await
    }
}
