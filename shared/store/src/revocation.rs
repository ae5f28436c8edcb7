//! Revocation beyond whole families: one access token (RFC 7009), and every family of one
//! principal with one client (Concur's `DELETE /app-mgmt/v0/connections`); the list of a user's
//! connections that the account page offers to disconnect.

use async_trait::async_trait;

use super::StoreResult;
use crate::clock::UnixTime;
use crate::domain::audit::AuditEvent;
use crate::domain::{ClientId, Family, FamilyId, PrincipalId, PrincipalType, Scopes, TokenId};

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

/// A client with which a user holds at least one live family.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Connection {
    pub client_id: ClientId,
    /// The union of the live families' scopes.
    pub scopes: Scopes,
}

impl Connection {
    /// The connections of `user` among `families`: those of the user's live families, one per
    /// client, ordered by client id.
    pub(crate) fn of_live<'a>(
        user: &PrincipalId,
        families: impl IntoIterator<Item = &'a Family>,
        now: UnixTime,
    ) -> Vec<Self> {
        let mut by_client = std::collections::BTreeMap::<ClientId, Scopes>::new();
        for family in families {
            if family.principal_type == PrincipalType::User
                && &family.principal_id == user
                && family.is_live(now)
            {
                let scopes = by_client.entry(family.client_id).or_default();
                *scopes = scopes.union(&family.scopes);
            }
        }
        by_client
            .into_iter()
            .map(|(client_id, scopes)| Self { client_id, scopes })
            .collect()
    }
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

    /// The clients with which the user `user` holds a live (unrevoked, unexpired) family,
    /// ordered by client id. Families of other principal types are not listed.
    async fn user_connections(
        &self,
        user: &PrincipalId,
        now: UnixTime,
    ) -> StoreResult<Vec<Connection>>;
}
