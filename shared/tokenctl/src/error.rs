//! Failures of a verb: a one-line reason for stderr and the process exit status.

use std::fmt;

use token_core::admin::AdminError;
use token_core::config::ConfigError;
use token_core::errors::ServerError;
use token_core::import::ImportError;
use token_core::signing::KeyError;
use token_store::StoreError;

/// The exit status tells scripts what kind of failure it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// Anything else: the store failed internally, a file could not be read or written.
    Other = 1,
    /// Bad arguments or configuration (also what clap uses for usage errors).
    Invalid = 2,
    NotFound = 3,
    /// The thing exists already (a taken login).
    Conflict = 4,
    /// The store is unreachable, timed out or throttled; retrying later may work.
    Unavailable = 5,
}

#[derive(Debug)]
pub struct CliError {
    pub failure: Failure,
    pub message: String,
}

impl CliError {
    pub fn new(failure: Failure, message: impl Into<String>) -> Self {
        Self {
            failure,
            message: message.into(),
        }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(Failure::Invalid, message)
    }

    pub fn other(message: impl Into<String>) -> Self {
        Self::new(Failure::Other, message)
    }

    pub fn exit_code(&self) -> i32 {
        self.failure as i32
    }

    /// One line, whatever the underlying error printed.
    pub fn one_line(&self) -> String {
        self.message
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<StoreError> for CliError {
    fn from(error: StoreError) -> Self {
        let failure = match error {
            StoreError::Unavailable(_) => Failure::Unavailable,
            StoreError::Internal(_) => Failure::Other,
        };
        Self::new(failure, error.to_string())
    }
}

impl From<AdminError> for CliError {
    fn from(error: AdminError) -> Self {
        match error {
            AdminError::NotFound { .. } => Self::new(Failure::NotFound, error.to_string()),
            AdminError::Conflict(_) => Self::new(Failure::Conflict, error.to_string()),
            AdminError::Invalid(_) => Self::invalid(error.to_string()),
            AdminError::Store(store) => store.into(),
            AdminError::Server(ref source) | AdminError::Unfinished { ref source, .. } => {
                Self::new(server_failure(source), error.to_string())
            }
        }
    }
}

/// A failure of ours: unavailable (5) when retrying later may work.
fn server_failure(source: &ServerError) -> Failure {
    match source {
        ServerError::Store(StoreError::Unavailable(_))
        | ServerError::Signing(_)
        | ServerError::Unavailable { .. } => Failure::Unavailable,
        ServerError::Store(StoreError::Internal(_)) | ServerError::Internal { .. } => {
            Failure::Other
        }
    }
}

impl From<ImportError> for CliError {
    fn from(error: ImportError) -> Self {
        let failure = match &error {
            ImportError::Store {
                source: StoreError::Unavailable(_),
                ..
            } => Failure::Unavailable,
            ImportError::Read { .. } | ImportError::Store { .. } => Failure::Other,
        };
        Self::new(failure, format!("import failed: {error}"))
    }
}

impl From<KeyError> for CliError {
    fn from(error: KeyError) -> Self {
        let failure = match &error {
            KeyError::UnknownKey(_) => Failure::NotFound,
            KeyError::Store(StoreError::Unavailable(_)) => Failure::Unavailable,
            _ => Failure::Other,
        };
        Self::new(failure, error.to_string())
    }
}

impl From<ConfigError> for CliError {
    fn from(error: ConfigError) -> Self {
        Self::invalid(format!("configuration: {error}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_map_to_exit_codes() {
        let not_found: CliError = AdminError::NotFound {
            what: "client",
            id: "x".into(),
        }
        .into();
        assert_eq!(not_found.exit_code(), 3);
        assert_eq!(not_found.one_line(), "client x not found");
        let down: CliError = AdminError::Store(StoreError::Unavailable("timeout".into())).into();
        assert_eq!(down.exit_code(), 5);
        assert_eq!(CliError::invalid("a\n  b").one_line(), "a b");
    }
}
