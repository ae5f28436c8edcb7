//! What a request answers when the server, not the caller, is at fault.

use crate::store::StoreError;

/// A failure on our side. Kept apart from [`StoreError`] so that flows can
/// fail for reasons other than the store (a lost race, a failed task) and every route turns
/// either into the same 503 / 500 bodies.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// Worth a retry (503 with `Retry-After`): the store timed out or throttled, or a
    /// concurrent request won a race.
    #[error("{0}")]
    Unavailable(String),
    /// Anything else (500).
    #[error("{0}")]
    Internal(String),
}

impl ServerError {
    /// What the caller is told (the detail goes to the log). A store that did not answer may
    /// have applied a write, so the 503 never claims that nothing changed; it promises what is
    /// true: every write is conditional or idempotent, so resending the same request is safe.
    pub fn public_message(&self) -> &'static str {
        match self {
            Self::Unavailable(_) => {
                "The token store did not answer in time; retrying the same request is safe."
            }
            Self::Internal(_) => "The server failed to process the request.",
        }
    }
}

impl From<StoreError> for ServerError {
    /// The message keeps the store's own wording for the log.
    fn from(error: StoreError) -> Self {
        let message = error.to_string();
        match error {
            StoreError::Unavailable(_) => Self::Unavailable(message),
            StoreError::Internal(_) => Self::Internal(message),
        }
    }
}
