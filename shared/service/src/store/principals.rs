//! Principals: users, companies, and which clients a company has enabled.

use async_trait::async_trait;

use super::StoreResult;
use crate::domain::{ClientId, Company, Login, PrincipalId, User};

/// The outcome of an insert that must not overwrite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inserted {
    Inserted,
    AlreadyExists,
}

#[async_trait]
pub trait PrincipalStore: Send + Sync {
    /// Fails with `AlreadyExists` if the id or the login is taken; logins are unique.
    async fn insert_user(&self, user: &User) -> StoreResult<Inserted>;
    /// Replaces an existing user (status changes). The login must not change.
    async fn put_user(&self, user: &User) -> StoreResult<()>;
    async fn get_user(&self, id: &PrincipalId) -> StoreResult<Option<User>>;
    async fn get_user_by_login(&self, login: &Login) -> StoreResult<Option<User>>;
    /// Creates or replaces.
    async fn put_company(&self, company: &Company) -> StoreResult<()>;
    async fn get_company(&self, id: &PrincipalId) -> StoreResult<Option<Company>>;
    /// Idempotent.
    async fn enable_company_for_client(
        &self,
        company: &PrincipalId,
        client: &ClientId,
    ) -> StoreResult<()>;
    async fn is_company_enabled_for_client(
        &self,
        company: &PrincipalId,
        client: &ClientId,
    ) -> StoreResult<bool>;
}
