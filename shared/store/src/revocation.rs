//! Revocation beyond whole families: one access token (RFC 7009), and every family of one
//! principal with one client (Concur's `DELETE /app-mgmt/v0/connections`).

use async_trait::async_trait;

use super::StoreResult;
use crate::clock::UnixTime;
use crate::domain::audit::AuditEvent;
use crate::domain::{ClientId, FamilyId, PrincipalId, TokenId};

/// The audit event of one family's revocation, made for each family a revocation finds.
pub type AuditFor<'a> = &'a (dyn Fn(FamilyId) -> AuditEvent + Send + Sync);

/// What [`RevocationStore::revoke_access_token_recorded`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenRevoked {
    /// This call revoked the token, and wrote its audit events.
    Revoked,
    /// It was revoked before: nothing was written.
    AlreadyRevoked,
    /// No such unexpired token.
    NotFound,
}

#[async_trait]
pub trait RevocationStore: Send + Sync {
    /// Marks one access token revoked; its family, if any, stays live. Returns `false` if there
    /// is no such unexpired token. Idempotent.
    async fn revoke_access_token(&self, jti: &TokenId, now: UnixTime) -> StoreResult<bool> {
        let revoked = self.revoke_access_token_recorded(jti, now, &[]).await?;
        Ok(revoked != TokenRevoked::NotFound)
    }

    /// [`RevocationStore::revoke_access_token`] with audit events, written in the same write
    /// and only by the call that sets the token's own mark (not by a repeat).
    async fn revoke_access_token_recorded(
        &self,
        jti: &TokenId,
        now: UnixTime,
        audit: &[AuditEvent],
    ) -> StoreResult<TokenRevoked>;

    /// Revokes every family that `principal` holds with `client` (their refresh tokens and
    /// access tokens), whatever their state. Families of other clients or other principals are
    /// untouched. Idempotent. Returns the families this call revoked (not those already
    /// revoked); each gets the event `audit` makes for it, in the same write as its revocation.
    async fn revoke_connection(
        &self,
        principal: &PrincipalId,
        client: &ClientId,
        now: UnixTime,
        audit: Option<AuditFor<'_>>,
    ) -> StoreResult<Vec<FamilyId>> {
        self.revoke_connection_started_by(principal, client, UnixTime::MAX, now, audit)
            .await
    }

    /// [`RevocationStore::revoke_connection`] limited to the families created at or before
    /// `started_by`: one started later is untouched (a logout hint speaks only for the
    /// sign-ins it has seen).
    async fn revoke_connection_started_by(
        &self,
        principal: &PrincipalId,
        client: &ClientId,
        started_by: UnixTime,
        now: UnixTime,
        audit: Option<AuditFor<'_>>,
    ) -> StoreResult<Vec<FamilyId>>;
}
