//! `sessions list` and `sessions revoke`.

use serde_json::{json, Value};
use token_core::config::Config;
use token_core::flows::sessions;
use token_domain::audit::{rfc3339, SessionEndReason};
use token_domain::SignInSession;

use crate::args::SessionsCommand;
use crate::error::CliError;
use crate::output::Output;

pub async fn run(command: SessionsCommand, config: &Config) -> Result<Output, CliError> {
    let services = crate::setup::services(config).await?;
    match command {
        SessionsCommand::List { principal } => {
            let now = services.ctx.clock.now();
            let listed = services
                .ctx
                .store
                .sessions()
                .list_sessions(&principal, now)
                .await?;
            let text = if listed.is_empty() {
                format!("User {principal} has no live sign-in session.")
            } else {
                listed.iter().map(line).collect::<Vec<_>>().join("\n")
            };
            let sessions: Vec<Value> = listed.iter().map(described).collect();
            Ok(Output::new(json!({ "sessions": sessions }), text))
        }
        SessionsCommand::Revoke { principal } => {
            let ended = sessions::end_all(&services, &principal, SessionEndReason::Administrator)
                .await
                .map_err(|error| CliError::other(format!("ending the sessions: {error}")))?;
            // Without a queue service (LOGOUT_QUEUE_URL), the logout tokens are delivered by this
            // process: it stays until each delivery has ended, its retries included.
            services.logout_queue.drain().await;
            Ok(Output::new(
                json!({ "principal_id": principal, "ended": ended }),
                format!(
                    "{ended} sign-in session(s) of {principal} ended: its browsers must sign in again."
                ),
            ))
        }
    }
}

fn described(session: &SignInSession) -> Value {
    json!({
        "sid": session.sid,
        "browser": session.user_agent,
        "source_address": session.source,
        "started": rfc3339::format(session.started_at),
        "signed_in": rfc3339::format(session.authenticated_at),
        "last_seen": rfc3339::format(session.last_seen),
        "expires": rfc3339::format(session.expires_at),
        "clients": session.clients,
    })
}

fn line(session: &SignInSession) -> String {
    format!(
        "{}  started {}  last seen {}  from {}  {}",
        session.sid,
        rfc3339::format(session.started_at),
        rfc3339::format(session.last_seen),
        session.source.as_deref().unwrap_or("-"),
        session.user_agent.as_deref().unwrap_or("-"),
    )
}
