//! Revocation beyond whole families: one access token (RFC 7009), and every family of one
//! principal with one client (Concur's `DELETE /app-mgmt/v0/connections`).

use async_trait::async_trait;

use super::StoreResult;
use crate::clock::UnixTime;
use crate::domain::{ClientId, PrincipalId, TokenId};

#[async_trait]
pub trait RevocationStore: Send + Sync {
    /// Marks one access token revoked; its family, if any, stays live. Returns `false` if there
    /// is no such unexpired token. Idempotent.
    async fn revoke_access_token(&self, jti: &TokenId, now: UnixTime) -> StoreResult<bool>;

    /// Revokes every family that `principal` holds with `client` (their refresh tokens and
    /// access tokens), whatever their state. Families of other clients or other principals are
    /// untouched. Idempotent.
    async fn revoke_connection(
        &self,
        principal: &PrincipalId,
        client: &ClientId,
        now: UnixTime,
    ) -> StoreResult<()>;
}
