//! Users, companies and company-client enablement on SQLite.

use async_trait::async_trait;

use super::{id_to_sql, map_err, to_json, SqliteStore};
use crate::domain::{ClientId, Company, Login, PrincipalId, User};
use crate::store::{Inserted, PrincipalStore, StoreResult};

#[async_trait]
impl PrincipalStore for SqliteStore {
    async fn insert_user(&self, user: &User) -> StoreResult<Inserted> {
        let params = (
            id_to_sql(&user.id),
            user.login.as_str().to_owned(),
            to_json(user)?,
        );
        // OR IGNORE covers both the id's primary key and the login's unique constraint, in one
        // atomic statement.
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
        self.with_conn(move |conn| {
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
