//! A company's directory as its provisioning client keeps it: provisioning tokens, the
//! company's users listed without scanning the table, replacements conditional on what was
//! read, removals, and groups.

use async_trait::async_trait;

use super::StoreResult;
use crate::clock::UnixTime;
use crate::domain::{DirectoryGroup, PrincipalId, ProvisioningToken, User};
use crate::secrets::TokenHash;

/// The outcome of a write conditional on the revision that was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replaced {
    Replaced,
    /// The stored record is no longer the one read (or is gone): nothing changed.
    Changed,
    /// The new login, address or external id belongs to another user: nothing changed.
    Taken,
}

/// One page of a company's users, in a stable order (by id), and how many it has in all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserPage {
    pub users: Vec<User>,
    pub total: usize,
}

#[async_trait]
pub trait DirectoryStore: Send + Sync {
    async fn insert_provisioning_token(&self, token: &ProvisioningToken) -> StoreResult<()>;
    /// The live token with this digest (expiry checked).
    async fn get_provisioning_token(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<ProvisioningToken>>;
    /// The company's tokens, live or expired, oldest first.
    async fn list_provisioning_tokens(
        &self,
        company: &PrincipalId,
    ) -> StoreResult<Vec<ProvisioningToken>>;
    /// Whether a token of `company` with this id was removed.
    async fn delete_provisioning_token(
        &self,
        company: &PrincipalId,
        id: &uuid::Uuid,
    ) -> StoreResult<bool>;

    /// Replaces `previous` (as read) with `next`, the same user with its revision one more,
    /// moving its login, address and external id with it, in one write.
    async fn replace_user(&self, previous: &User, next: &User) -> StoreResult<Replaced>;
    /// Removes the user as read, with its login, address and external id, in one write:
    /// `Changed` when it changed since it was read or is gone.
    async fn delete_user(&self, user: &User) -> StoreResult<Replaced>;
    /// The company's users from the `skip`th (by id), at most `limit`, and their number.
    async fn company_users(
        &self,
        company: &PrincipalId,
        skip: usize,
        limit: usize,
    ) -> StoreResult<UserPage>;

    /// The company's users after `after` by id (from the first when `None`), at most `limit`:
    /// a scan of the company's directory, page by page, that reads each user once.
    async fn company_users_after(
        &self,
        company: &PrincipalId,
        after: Option<&PrincipalId>,
        limit: usize,
    ) -> StoreResult<Vec<User>>;

    /// Fails with `false` when the id is taken.
    async fn insert_group(&self, group: &DirectoryGroup) -> StoreResult<bool>;
    async fn get_group(
        &self,
        company: &PrincipalId,
        id: &uuid::Uuid,
    ) -> StoreResult<Option<DirectoryGroup>>;
    /// Replaces `previous` (as read) with `next`, whose revision is one more.
    async fn replace_group(
        &self,
        previous: &DirectoryGroup,
        next: &DirectoryGroup,
    ) -> StoreResult<Replaced>;
    async fn delete_group(&self, group: &DirectoryGroup) -> StoreResult<Replaced>;
    /// Every group of the company, by id.
    async fn company_groups(&self, company: &PrincipalId) -> StoreResult<Vec<DirectoryGroup>>;
}
