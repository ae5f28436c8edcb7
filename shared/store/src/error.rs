//! What a store reports when it fails: two kinds (worth a retry or not), each with what failed in
//! words safe to log and, where it exists, the error it came from.

use std::borrow::Cow;
use std::error::Error;
use std::fmt;
use std::sync::Arc;

pub type StoreResult<T> = Result<T, StoreError>;

#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    /// Timed out, throttled after retries, or unreachable: the caller answers 503, and the
    /// request may succeed later.
    #[error("store temporarily unavailable: {0}")]
    Unavailable(#[source] Failure),
    /// Anything else (a malformed item, a schema mismatch): the caller answers 500.
    #[error("store failure: {0}")]
    Internal(#[source] Failure),
}

impl StoreError {
    /// [`StoreError::Unavailable`] described by `context`.
    pub fn unavailable(context: impl Into<Cow<'static, str>>) -> Self {
        Self::Unavailable(Failure::new(context))
    }

    /// [`StoreError::Internal`] described by `context`.
    pub fn internal(context: impl Into<Cow<'static, str>>) -> Self {
        Self::Internal(Failure::new(context))
    }

    /// The same error, with `source` as the error it came from.
    pub fn caused_by(self, source: impl Error + Send + Sync + 'static) -> Self {
        match self {
            Self::Unavailable(failure) => Self::Unavailable(failure.caused_by(source)),
            Self::Internal(failure) => Self::Internal(failure.caused_by(source)),
        }
    }

    /// Whether a later retry may succeed (503 rather than 500).
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Self::Unavailable(_))
    }

    pub fn failure(&self) -> &Failure {
        match self {
            Self::Unavailable(failure) | Self::Internal(failure) => failure,
        }
    }
}

/// What failed: `context` is written for logs and never holds a credential or a lookup key (the
/// backends cut hashes out of it); `source` is the error it came from, kept for code that
/// inspects it (its own text is left out of [`fmt::Debug`] as well). A source is attached only
/// where its text quotes no stored value: SQLite's and the AWS SDK's errors are, a decoder's
/// (which may quote the item) is not.
#[derive(Clone)]
pub struct Failure {
    context: Cow<'static, str>,
    source: Option<Arc<dyn Error + Send + Sync>>,
}

impl Failure {
    pub fn new(context: impl Into<Cow<'static, str>>) -> Self {
        Self {
            context: context.into(),
            source: None,
        }
    }

    pub fn caused_by(mut self, source: impl Error + Send + Sync + 'static) -> Self {
        self.source = Some(Arc::new(source));
        self
    }

    pub fn context(&self) -> &str {
        &self.context
    }
}

/// Lets tests and simple call sites write `StoreError::Internal("...".into())`.
impl From<&'static str> for Failure {
    fn from(context: &'static str) -> Self {
        Self::new(context)
    }
}

impl From<String> for Failure {
    fn from(context: String) -> Self {
        Self::new(context)
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.context)
    }
}

impl fmt::Debug for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Failure")
            .field("context", &self.context)
            .field("has_source", &self.source.is_some())
            .finish()
    }
}

impl Error for Failure {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.source
            .as_deref()
            .map(|source| source as &(dyn Error + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kind_the_context_and_the_source_are_kept() {
        let io = std::io::Error::new(std::io::ErrorKind::TimedOut, "timed out");
        let error = StoreError::unavailable("GetItem").caused_by(io);
        assert!(error.is_unavailable());
        assert_eq!(error.to_string(), "store temporarily unavailable: GetItem");
        let failure = error.source().expect("the failure");
        let io = failure.source().expect("the I/O error");
        assert_eq!(
            io.downcast_ref::<std::io::Error>().map(|e| e.kind()),
            Some(std::io::ErrorKind::TimedOut)
        );
        assert!(!StoreError::internal("malformed item").is_unavailable());
        assert!(!format!("{error:?}").contains("timed out"), "{error:?}");
    }
}
