//! The one read of the process environment: every binary takes a snapshot at start and builds
//! its [`super::Config`] from it; nothing else in the service calls `std::env::var`
//! (`infra/check-env-reads.sh`). The AWS SDK and the OTLP exporter read their own standard
//! variables (`AWS_*`, `OTEL_*`), as they must to follow those standards.

use std::collections::HashMap;

/// The variables of the process at the moment of [`Environment::of_process`]. A value that is
/// not UTF-8 is left out, as `std::env::var` would have answered it: unset.
#[derive(Debug, Clone, Default)]
pub struct Environment {
    variables: HashMap<String, String>,
}

impl Environment {
    pub fn of_process() -> Self {
        let variables = std::env::vars_os()
            .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
            .collect();
        Self { variables }
    }

    /// An environment of these pairs only (tests, and tools that override variables).
    pub fn of_pairs<N: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (N, V)>,
    ) -> Self {
        Self {
            variables: pairs
                .into_iter()
                .map(|(name, value)| (name.into(), value.into()))
                .collect(),
        }
    }

    /// The value as set, blank or not.
    pub fn get(&self, name: &str) -> Option<String> {
        self.variables.get(name).cloned()
    }

    /// Sets `name` (tokenctl: a flag's value, which clap resolved against the variable).
    pub fn set(&mut self, name: &str, value: impl Into<String>) {
        self.variables.insert(name.to_owned(), value.into());
    }
}
