//! Users, companies and company-client enablement on SQLite.

use async_trait::async_trait;

use rusqlite::{params, OptionalExtension};

use super::{from_json, id_to_sql, map_err, to_json, SqliteStore};
use crate::domain::{ChannelHandle, ClientId, Company, Login, PrincipalId, User};
use crate::{EmailUpdate, ExternalIdUpdate, Inserted, PrincipalStore, StoreResult};

/// The address column the unique index `users_by_email` is built on; queries must spell the
/// expression the same way for SQLite to use the index.
const EMAIL: &str = "lower(json_extract(body, '$.email'))";

#[async_trait]
impl PrincipalStore for SqliteStore {
    async fn insert_user(&self, user: &User) -> StoreResult<Inserted> {
        let params = (
            id_to_sql(&user.id),
            user.login.as_str().to_owned(),
            to_json(user)?,
        );
        // OR IGNORE covers the id's primary key and the unique login and address, in one atomic
        // statement.
        let changed = self
            .execute(
                "INSERT OR IGNORE INTO users (id, login, body) VALUES (?1, ?2, ?3)",
                params,
            )
            .await?;
        Ok(if changed == 1 {
            Inserted::Inserted
        } else {
            Inserted::AlreadyExists
        })
    }

    async fn put_user(&self, user: &User) -> StoreResult<()> {
        let params = (
            id_to_sql(&user.id),
            user.login.as_str().to_owned(),
            to_json(user)?,
        );
        // Not INSERT OR REPLACE: on a login taken by another user, REPLACE would delete that
        // user; an upsert on the id fails on the unique login instead.
        self.execute(
            "INSERT INTO users (id, login, body) VALUES (?1, ?2, ?3)
             ON CONFLICT (id) DO UPDATE SET login = excluded.login, body = excluded.body",
            params,
        )
        .await?;
        Ok(())
    }

    async fn get_user(&self, id: &PrincipalId) -> StoreResult<Option<User>> {
        self.get_body("SELECT body FROM users WHERE id = ?1", [id_to_sql(id)])
            .await
    }

    async fn get_user_by_login(&self, login: &Login) -> StoreResult<Option<User>> {
        self.get_body(
            "SELECT body FROM users WHERE login = ?1",
            [login.as_str().to_owned()],
        )
        .await
    }

    async fn get_user_by_email(&self, address: &ChannelHandle) -> StoreResult<Option<User>> {
        self.get_body(
            // The `EMAIL` expression, spelt out because `get_body` takes a static string.
            "SELECT body FROM users
             WHERE lower(json_extract(body, '$.email')) = lower(?1)
               AND json_extract(body, '$.email') IS NOT NULL",
            [address.as_str().to_owned()],
        )
        .await
    }

    async fn set_user_email(
        &self,
        id: &PrincipalId,
        address: &ChannelHandle,
    ) -> StoreResult<EmailUpdate> {
        let (id, address) = (id_to_sql(id), address.as_str().to_owned());
        self.write_tx(move |tx| {
            let body: Option<String> = tx
                .prepare_cached("SELECT body FROM users WHERE id = ?1")
                .and_then(|mut stmt| stmt.query_row([&id], |row| row.get(0)).optional())
                .map_err(map_err)?;
            let Some(body) = body else {
                return Ok(EmailUpdate::UnknownUser);
            };
            let taken: bool = tx
                .prepare_cached(&format!(
                    "SELECT EXISTS (SELECT 1 FROM users WHERE {EMAIL} = lower(?1) AND id != ?2)"
                ))
                .and_then(|mut stmt| stmt.query_row(params![address, id], |row| row.get(0)))
                .map_err(map_err)?;
            if taken {
                return Ok(EmailUpdate::Taken);
            }
            let mut user: User = from_json(&body)?;
            user.email = Some(address);
            let body = to_json(&user)?;
            tx.prepare_cached("UPDATE users SET body = ?2 WHERE id = ?1")
                .and_then(|mut stmt| stmt.execute(params![id, body]))
                .map_err(map_err)?;
            Ok(EmailUpdate::Updated)
        })
        .await
    }

    async fn get_user_by_external_id(
        &self,
        company: &PrincipalId,
        external_id: &str,
    ) -> StoreResult<Option<User>> {
        // Spelt as the unique index `users_by_external_id` is built, so SQLite uses it.
        self.get_body(
            "SELECT body FROM users
             WHERE json_extract(body, '$.company_id') = ?1
               AND json_extract(body, '$.external_id') = ?2",
            [company.to_string(), external_id.to_owned()],
        )
        .await
    }

    async fn set_user_external_id(
        &self,
        id: &PrincipalId,
        external_id: Option<&str>,
    ) -> StoreResult<ExternalIdUpdate> {
        let (id, external_id) = (id_to_sql(id), external_id.map(str::to_owned));
        self.write_tx(move |tx| {
            let body: Option<String> = tx
                .prepare_cached("SELECT body FROM users WHERE id = ?1")
                .and_then(|mut stmt| stmt.query_row([&id], |row| row.get(0)).optional())
                .map_err(map_err)?;
            let Some(body) = body else {
                return Ok(ExternalIdUpdate::UnknownUser);
            };
            let mut user: User = from_json(&body)?;
            let Some(company) = user.company_id else {
                return Ok(ExternalIdUpdate::NoCompany);
            };
            if let Some(value) = &external_id {
                let taken: bool = tx
                    .prepare_cached(
                        "SELECT EXISTS (SELECT 1 FROM users
                                        WHERE json_extract(body, '$.company_id') = ?1
                                          AND json_extract(body, '$.external_id') = ?2
                                          AND id != ?3)",
                    )
                    .and_then(|mut stmt| {
                        stmt.query_row(params![company.to_string(), value, id], |row| row.get(0))
                    })
                    .map_err(map_err)?;
                if taken {
                    return Ok(ExternalIdUpdate::Taken);
                }
            }
            user.external_id = external_id;
            let body = to_json(&user)?;
            tx.prepare_cached("UPDATE users SET body = ?2 WHERE id = ?1")
                .and_then(|mut stmt| stmt.execute(params![id, body]))
                .map_err(map_err)?;
            Ok(ExternalIdUpdate::Updated)
        })
        .await
    }

    async fn put_company(&self, company: &Company) -> StoreResult<()> {
        let params = (id_to_sql(&company.id), to_json(company)?);
        self.execute(
            "INSERT OR REPLACE INTO companies (id, body) VALUES (?1, ?2)",
            params,
        )
        .await?;
        Ok(())
    }

    async fn get_company(&self, id: &PrincipalId) -> StoreResult<Option<Company>> {
        self.get_body("SELECT body FROM companies WHERE id = ?1", [id_to_sql(id)])
            .await
    }

    async fn enable_company_for_client(
        &self,
        company: &PrincipalId,
        client: &ClientId,
    ) -> StoreResult<()> {
        self.execute(
            "INSERT OR IGNORE INTO company_clients (company_id, client_id) VALUES (?1, ?2)",
            [id_to_sql(company), id_to_sql(client)],
        )
        .await?;
        Ok(())
    }

    async fn is_company_enabled_for_client(
        &self,
        company: &PrincipalId,
        client: &ClientId,
    ) -> StoreResult<bool> {
        let params = [id_to_sql(company), id_to_sql(client)];
        self.read(move |conn| {
            conn.prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM company_clients
                                WHERE company_id = ?1 AND client_id = ?2)",
            )
            .and_then(|mut stmt| stmt.query_row(params, |row| row.get(0)))
            .map_err(map_err)
        })
        .await
    }
}
