//! What a request answers when the server, not the caller, is at fault.

use crate::store::StoreError;

/// A failure on our side; nothing was changed. Kept apart from [`StoreError`] so that flows can
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
