//! Telling a session's clients that it ended. Stand-in until back-channel logout delivery lands:
//! the clients are logged, nothing is sent.

use crate::domain::SignInSession;
use crate::errors::ServerError;
use crate::services::Services;

pub async fn announce_session_end(
    _services: &Services,
    ended: &SignInSession,
) -> Result<(), ServerError> {
    tracing::info!(clients = ended.clients.len(), "session ended");
    Ok(())
}
