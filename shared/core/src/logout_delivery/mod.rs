//! Back-channel logout deliveries (OpenID Connect Back-Channel Logout 1.0 §2.5): a logout token
//! POSTed to a client's `backchannel_logout_uri`, off the request path of the user who signed
//! out, retried, each outcome audited.
//!
//! `flows::backchannel_logout` mints the tokens and hands them to a [`LogoutQueue`]: in a
//! long-lived process (the local server, tokenctl, tests) the [`InProcessLogoutQueue`]'s
//! background tasks deliver; in Lambda, where nothing runs after the answer, the token function
//! sends them to SQS (`token_adapters::sqs::SqsLogoutQueue`) and the `logout-delivery` function delivers
//! ([`sqs::handle_event`]). Either way the request goes out through [`crate::outbound`]'s
//! address rules: a logout URI is a client-supplied address.

mod in_process;
pub mod sqs;

use crate::audit;
use crate::context::Context;
use crate::domain::audit::{AuditKind, LogoutFailure};
use crate::domain::{ClientId, PrincipalId, PrincipalType, SessionId};
use crate::errors::ServerError;
use crate::outbound::{FetchError, Fetcher};

pub use in_process::{InProcessLogoutQueue, RetrySchedule};

/// One logout token for one client, and where it goes.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub struct LogoutDelivery {
    pub client_id: ClientId,
    pub principal_id: PrincipalId,
    pub sid: SessionId,
    /// The client's `backchannel_logout_uri` when the session ended.
    pub uri: String,
    pub logout_token: String,
}

/// Never prints the token: it would log the user out of the client if replayed in time.
impl std::fmt::Debug for LogoutDelivery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogoutDelivery")
            .field("client_id", &self.client_id)
            .field("sid", &self.sid)
            .field("uri", &self.uri)
            .finish_non_exhaustive()
    }
}

/// Where deliveries are handed over. `enqueue` returns as soon as they are handed over: it
/// never waits for a client to answer.
#[async_trait::async_trait]
pub trait LogoutQueue: Send + Sync + std::fmt::Debug {
    async fn enqueue(&self, deliveries: Vec<LogoutDelivery>) -> Result<(), ServerError>;

    /// Waits until every delivery handed over so far has ended (delivered or failed, audited):
    /// for a process about to exit (tokenctl) and for tests. A queue whose deliveries happen
    /// elsewhere returns at once.
    async fn drain(&self) {}
}

/// One attempt's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attempt {
    /// A 2xx answer.
    Delivered,
    Failed {
        reason: LogoutFailure,
        status: Option<u16>,
    },
}

/// Makes attempts and records their outcomes: shared by both queues.
#[derive(Debug, Clone)]
pub struct Deliverer {
    ctx: Context,
    fetcher: Fetcher,
}

impl Deliverer {
    /// Audit events go to `ctx`'s store; requests out through `fetcher`.
    pub fn new(ctx: Context, fetcher: Fetcher) -> Self {
        Self { ctx, fetcher }
    }

    /// One POST of `logout_token=<JWT>` (§2.5). Any 2xx is delivered; a redirect is not
    /// followed (§2.8: the client must answer the POST itself).
    pub async fn attempt(&self, delivery: &LogoutDelivery) -> Attempt {
        let form = [("logout_token", delivery.logout_token.as_str())];
        let outcome = match self.fetcher.post_form(&delivery.uri, &form).await {
            Ok(response) => by_status(response.status),
            // The answer was read far enough for its status.
            Err(FetchError::BodyTooLarge { status }) => by_status(status),
            Err(error) => {
                let reason = match error {
                    FetchError::InvalidUrl
                    | FetchError::SchemeNotAllowed
                    | FetchError::AddressNotAllowed { .. } => LogoutFailure::AddressRefused,
                    FetchError::Timeout => LogoutFailure::Timeout,
                    FetchError::Resolve(_)
                    | FetchError::Connect(_)
                    | FetchError::Tls(_)
                    | FetchError::Http(_)
                    | FetchError::BodyTooLarge { .. } => LogoutFailure::Unreachable,
                };
                tracing::info!(
                    client_id = %delivery.client_id,
                    sid = %delivery.sid,
                    %error,
                    "back-channel logout attempt failed"
                );
                Attempt::Failed {
                    reason,
                    status: None,
                }
            }
        };
        outcome
    }

    /// Records the delivery's final outcome after `attempts` attempts.
    pub async fn record(&self, delivery: &LogoutDelivery, attempts: u32, outcome: Attempt) {
        let sid = delivery.sid.clone();
        let kind = match outcome {
            Attempt::Delivered => AuditKind::LogoutDelivered { sid, attempts },
            Attempt::Failed { reason, status } => AuditKind::LogoutFailed {
                sid,
                attempts,
                reason,
                status,
            },
        };
        let event = audit::event(&self.ctx, kind)
            .client(delivery.client_id)
            .principal(PrincipalType::User, delivery.principal_id);
        audit::record(&self.ctx, event).await;
    }
}

fn by_status(status: http::StatusCode) -> Attempt {
    if status.is_success() {
        return Attempt::Delivered;
    }
    let reason = if status.is_redirection() {
        LogoutFailure::Redirected
    } else {
        LogoutFailure::Rejected
    };
    Attempt::Failed {
        reason,
        status: Some(status.as_u16()),
    }
}
