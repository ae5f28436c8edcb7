//! Telling an ended session's clients, by back-channel logout (`flows::backchannel_logout`).

use crate::domain::SignInSession;
use crate::errors::ServerError;
use crate::flows::backchannel_logout::{self, EndedSession};
use crate::services::Services;

/// Hands a logout token for each of `ended`'s clients to the delivery queue; never waits for a
/// client.
pub async fn announce_session_end(
    services: &Services,
    ended: &SignInSession,
) -> Result<(), ServerError> {
    if ended.clients.is_empty() {
        return Ok(());
    }
    let ended = EndedSession {
        sid: ended.sid.to_string(),
        principal_id: ended.principal_id,
        clients: ended.clients.clone(),
    };
    backchannel_logout::announce_session_end(services, &ended).await
}
