//! What back-channel logout deliveries record: why one failed.

use serde::{Deserialize, Serialize};

/// Why a logout token did not reach a client's back-channel logout URI (on the last attempt,
/// or at once when retrying cannot help).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogoutFailure {
    /// The address is one the server never calls (loopback, private, link-local, ...) and its
    /// `host:port` is not allowed, or the scheme is not https there: never attempted.
    AddressRefused,
    /// The name did not resolve, or no connection (or TLS session) could be opened.
    Unreachable,
    /// No complete answer within the timeout.
    Timeout,
    /// The client answered with a redirect, which is never followed.
    Redirected,
    /// The client answered with another status than 2xx.
    Rejected,
    /// The delivery could not be handed to the queue that retries it.
    NotQueued,
}

impl LogoutFailure {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AddressRefused => "address_refused",
            Self::Unreachable => "unreachable",
            Self::Timeout => "timeout",
            Self::Redirected => "redirected",
            Self::Rejected => "rejected",
            Self::NotQueued => "not_queued",
        }
    }

    /// Whether another attempt may succeed: a refused address stays refused.
    pub fn is_retryable(self) -> bool {
        !matches!(self, Self::AddressRefused)
    }
}
