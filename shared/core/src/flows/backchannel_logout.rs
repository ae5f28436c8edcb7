//! Telling clients that a sign-in session ended (OpenID Connect Back-Channel Logout 1.0): every
//! client that received tokens in the session and registered a `backchannel_logout_uri` gets a
//! logout token, delivered off the request path by `Services::logout_queue`
//! (`crate::logout_delivery`), which retries and audits each outcome.

use std::collections::BTreeSet;

use crate::audit;
use crate::domain::audit::{AuditKind, LogoutFailure};
use crate::domain::{ClientId, PrincipalId, PrincipalType, SessionId, TokenId};
use crate::errors::ServerError;
use crate::logout_delivery::LogoutDelivery;
use crate::random::RandomExt;
use crate::services::Services;

/// A session that has just ended, as its store answered it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndedSession {
    /// The session's `sid`, as ID tokens issued in it carry it.
    pub sid: String,
    pub principal_id: PrincipalId,
    /// The clients that received tokens in the session (repeats are told once).
    pub clients: Vec<ClientId>,
}

/// Mints one logout token per client of `ended` with a back-channel logout URI and hands them
/// to the queue. Returns once they are handed over, never waiting for a client: the user's
/// answer is not delayed by them. An error (the store, the signing keys, or the queue did not
/// answer) does not undo the session's end; a queue failure is also recorded as `logout.failed`
/// for each client it concerned.
pub async fn announce_session_end(
    services: &Services,
    ended: &EndedSession,
) -> Result<(), ServerError> {
    let sid = SessionId::parse(&ended.sid)
        .ok_or_else(|| ServerError::internal("an ended session's sid is not a session id"))?;
    let ctx = &services.ctx;
    let now = ctx.clock.now();
    let mut told = BTreeSet::new();
    let mut deliveries = Vec::new();
    for client_id in &ended.clients {
        if !told.insert(*client_id) {
            continue;
        }
        let Some(client) = ctx.store.clients().get_client(client_id).await? else {
            continue;
        };
        let Some(uri) = client.backchannel_logout_uri else {
            continue;
        };
        let jti = TokenId::new(ctx.random.uuid());
        let logout_token = services
            .codec
            .encode_logout_token(client_id, &ended.principal_id, &sid, jti, now)
            .await?;
        deliveries.push(LogoutDelivery {
            client_id: *client_id,
            principal_id: ended.principal_id,
            sid: sid.clone(),
            uri,
            logout_token,
        });
    }
    if deliveries.is_empty() {
        return Ok(());
    }
    let queued = services.logout_queue.enqueue(deliveries.clone()).await;
    if queued.is_err() {
        for delivery in &deliveries {
            let kind = AuditKind::LogoutFailed {
                sid: sid.clone(),
                attempts: 0,
                reason: LogoutFailure::NotQueued,
                status: None,
            };
            let event = audit::event(ctx, kind)
                .client(delivery.client_id)
                .principal(PrincipalType::User, delivery.principal_id);
            audit::record(ctx, event).await;
        }
    }
    queued
}

#[cfg(test)]
#[path = "backchannel_logout_tests.rs"]
mod tests;
