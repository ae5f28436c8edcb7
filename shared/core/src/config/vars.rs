//! How a variable's text becomes a value: blank is unset, numbers and switches are parsed the
//! same way for every variable, and each failure names its variable.

use super::ConfigError;

/// The variables a configuration is read from, through a lookup (the process's snapshot, or a
/// test's pairs).
pub struct Vars<'a> {
    lookup: &'a dyn Fn(&str) -> Option<String>,
}

impl<'a> Vars<'a> {
    pub fn new(lookup: &'a dyn Fn(&str) -> Option<String>) -> Self {
        Self { lookup }
    }

    /// The value; unset, empty or blank: `None`.
    pub fn get(&self, name: &str) -> Option<String> {
        (self.lookup)(name).filter(|value| !value.trim().is_empty())
    }

    /// The value without its surrounding blanks.
    pub fn trimmed(&self, name: &str) -> Option<String> {
        self.get(name).map(|value| value.trim().to_owned())
    }

    /// `on` or `off` (surrounding blanks ignored); unset: `default`.
    pub fn switch(&self, name: &'static str, default: bool) -> Result<bool, ConfigError> {
        match self.trimmed(name).as_deref() {
            None => Ok(default),
            Some("on") => Ok(true),
            Some("off") => Ok(false),
            Some(other) => Err(ConfigError::Invalid {
                name,
                expected: "on or off",
                value: other.to_owned(),
            }),
        }
    }

    /// One of `choices` (surrounding blanks ignored), each with its value; unset: `default`.
    pub fn choice<T: Copy>(
        &self,
        name: &'static str,
        expected: &'static str,
        default: T,
        choices: &[(&str, T)],
    ) -> Result<T, ConfigError> {
        let Some(text) = self.trimmed(name) else {
            return Ok(default);
        };
        choices
            .iter()
            .find(|(choice, _)| *choice == text)
            .map(|(_, value)| *value)
            .ok_or(ConfigError::Invalid {
                name,
                expected,
                value: text,
            })
    }

    pub fn number<T: std::str::FromStr>(
        &self,
        name: &'static str,
        default: T,
    ) -> Result<T, ConfigError> {
        match self.get(name) {
            None => Ok(default),
            Some(value) => value.trim().parse().map_err(|_| ConfigError::Invalid {
                name,
                expected: "a non-negative whole number",
                value,
            }),
        }
    }
}
