//! What a request answers when the server, not the caller, is at fault.

use crate::signing::SigningError;
use crate::store::StoreError;

/// The cause of a [`ServerError`], kept for the log.
pub type Cause = Box<dyn std::error::Error + Send + Sync>;

/// A failure on our side. Kept apart from [`StoreError`] so that flows can fail for reasons
/// other than the store (signing, a lost race, a failed task, a mail server) and every route
/// turns any of them into the same 503 / 500 bodies, whose message says which. Every variant
/// keeps its cause as its `source`.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The store failed: 503 when it did not answer (worth a retry), 500 otherwise.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A token could not be signed, or the key ring not read: KMS or the ring did not answer
    /// (503, worth a retry). Nothing is signed with another key instead.
    #[error(transparent)]
    Signing(#[from] SigningError),
    /// Worth a retry (503 with `Retry-After`): a concurrent request won a race, or a service
    /// other than the store (the mail server) did not answer.
    #[error("{what}")]
    Unavailable {
        what: &'static str,
        #[source]
        source: Option<Cause>,
    },
    /// Anything else (500).
    #[error("{what}")]
    Internal {
        what: &'static str,
        #[source]
        source: Option<Cause>,
    },
}

impl ServerError {
    /// A retryable failure with no underlying error (a lost race).
    pub fn unavailable(what: &'static str) -> Self {
        Self::Unavailable { what, source: None }
    }

    /// A retryable failure of a service we depend on.
    pub fn unavailable_because(what: &'static str, source: impl Into<Cause>) -> Self {
        Self::Unavailable {
            what,
            source: Some(source.into()),
        }
    }

    /// A failure that a retry will not mend, with no underlying error.
    pub fn internal(what: &'static str) -> Self {
        Self::Internal { what, source: None }
    }

    /// A failure that a retry will not mend.
    pub fn internal_because(what: &'static str, source: impl Into<Cause>) -> Self {
        Self::Internal {
            what,
            source: Some(source.into()),
        }
    }

    /// Whether the caller should retry (503) rather than give up (500).
    pub fn is_unavailable(&self) -> bool {
        match self {
            // Matched with braces so that either shape of the store's variants fits.
            Self::Store(StoreError::Unavailable { .. })
            | Self::Signing(SigningError::Unavailable(_))
            | Self::Unavailable { .. } => true,
            Self::Store(StoreError::Internal { .. }) | Self::Internal { .. } => false,
        }
    }

    /// What the caller is told (the detail goes to the log). A store that did not answer may
    /// have applied a write, so the 503 never claims that nothing changed; it promises what is
    /// true: every write is conditional or idempotent, so resending the same request is safe.
    pub fn public_message(&self) -> &'static str {
        match self {
            Self::Store(StoreError::Unavailable { .. }) => {
                "The token store did not answer in time; retrying the same request is safe."
            }
            Self::Signing(SigningError::Unavailable(_)) => {
                "Signing is temporarily unavailable: the signing keys (KMS or the key ring) did not answer in time; retrying the same request is safe."
            }
            // A mail server, or a concurrent request that won a race.
            Self::Unavailable { .. } => {
                "A service this request depends on did not answer in time; retrying the same request is safe."
            }
            Self::Store(StoreError::Internal { .. }) | Self::Internal { .. } => {
                "The server failed to process the request."
            }
        }
    }
}
