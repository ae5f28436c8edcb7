//! Password lockout: failed logins, counted over a window.

use async_trait::async_trait;

use super::StoreResult;
use crate::clock::UnixTime;
use crate::domain::Login;

#[async_trait]
pub trait LockoutStore: Send + Sync {
    /// Records one failed password for `login` at `at`, kept until `expires_at`.
    async fn record_failed_login(
        &self,
        login: &Login,
        at: UnixTime,
        expires_at: UnixTime,
    ) -> StoreResult<()>;
    /// Failed passwords for `login` at or after `since`.
    async fn count_failed_logins(&self, login: &Login, since: UnixTime) -> StoreResult<u32>;
}
