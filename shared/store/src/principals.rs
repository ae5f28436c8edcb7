//! Principals: users, companies, and which clients a company has enabled.

use async_trait::async_trait;

use super::StoreResult;
use crate::domain::{ChannelHandle, ClientId, Company, Login, PrincipalId, User};

/// The outcome of an insert that must not overwrite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inserted {
    Inserted,
    AlreadyExists,
}

/// The outcome of [`PrincipalStore::set_user_email`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmailUpdate {
    Updated,
    /// Another user has this address (in any case); nothing changed.
    Taken,
    UnknownUser,
}

#[async_trait]
pub trait PrincipalStore: Send + Sync {
    /// Fails with `AlreadyExists` if the id, the login or the e-mail address (case-insensitively)
    /// is taken; logins and addresses are unique.
    async fn insert_user(&self, user: &User) -> StoreResult<Inserted>;
    /// Replaces an existing user (status changes). The login and the e-mail address must not
    /// change ([`PrincipalStore::set_user_email`] changes the address).
    async fn put_user(&self, user: &User) -> StoreResult<()>;
    async fn get_user(&self, id: &PrincipalId) -> StoreResult<Option<User>>;
    async fn get_user_by_login(&self, login: &Login) -> StoreResult<Option<User>>;
    /// The user whose address equals `address` case-insensitively.
    async fn get_user_by_email(&self, address: &ChannelHandle) -> StoreResult<Option<User>>;
    /// Gives the user `address` (as spelt), releasing its previous one, atomically.
    async fn set_user_email(
        &self,
        id: &PrincipalId,
        address: &ChannelHandle,
    ) -> StoreResult<EmailUpdate>;
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
