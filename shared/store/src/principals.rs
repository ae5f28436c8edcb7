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

/// The outcome of [`PrincipalStore::set_user_external_id`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExternalIdUpdate {
    Updated,
    /// Another user of the same company has this external id; nothing changed.
    Taken,
    UnknownUser,
    /// The user belongs to no company, so no external id is unique for it; nothing changed.
    NoCompany,
}

#[async_trait]
pub trait PrincipalStore: Send + Sync {
    /// Fails with `AlreadyExists` if the id, the login or the e-mail address (case-insensitively)
    /// is taken, or the external id within the user's company; logins and addresses are unique.
    async fn insert_user(&self, user: &User) -> StoreResult<Inserted>;
    /// Replaces an existing user (status changes). The login, the e-mail address and the
    /// external id must not change ([`PrincipalStore::set_user_email`] changes the address,
    /// [`PrincipalStore::set_user_external_id`] the external id).
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
    /// The user of `company` whose external id is `external_id` (compared exactly).
    async fn get_user_by_external_id(
        &self,
        company: &PrincipalId,
        external_id: &str,
    ) -> StoreResult<Option<User>>;
    /// Gives the user `external_id` (`None` clears it), unless another user of its company has
    /// it, releasing its previous one, atomically.
    async fn set_user_external_id(
        &self,
        id: &PrincipalId,
        external_id: Option<&str>,
    ) -> StoreResult<ExternalIdUpdate>;
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
