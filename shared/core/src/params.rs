//! The parameters of a token request, whichever encoding carried them.
//!
//! The grants read a plain bag of named values and never see a body: decoding (content type,
//! form or JSON, size limit) is HTTP's and lives in `http::params`, which builds this bag with
//! [`TokenParams::from_pairs`]. The bag still enforces what RFC 6749 §3.1 says of parameters
//! whatever carried them, so every decoder refuses the same requests.

use std::collections::HashMap;

use crate::errors::ErrorCode;
use crate::secrets::Secret;

/// Request parameters by name. RFC 6749 §3.1: a parameter sent without a value is treated as
/// omitted, and none may appear twice.
#[derive(Default)]
pub struct TokenParams {
    values: HashMap<String, String>,
    /// The thumbprint of the key of the request's DPoP proof (RFC 9449), set by the token
    /// endpoint once the proof passed its checks; never read from the body.
    dpop_jkt: Option<String>,
}

impl std::fmt::Debug for TokenParams {
    /// Names only: values include passwords and tokens.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.values.keys()).finish()
    }
}

impl TokenParams {
    /// The decoded (name, value) pairs in the order sent: empty values are dropped, a repeated
    /// name is refused (code 135).
    pub fn from_pairs<N, V>(pairs: impl IntoIterator<Item = (N, V)>) -> Result<Self, ErrorCode>
    where
        N: Into<String>,
        V: Into<String>,
    {
        let mut map = HashMap::new();
        for (name, value) in pairs {
            let value = value.into();
            if value.is_empty() {
                continue;
            }
            if map.insert(name.into(), value).is_some() {
                return Err(ErrorCode::UnsupportedRequestFormat);
            }
        }
        Ok(Self {
            values: map,
            dpop_jkt: None,
        })
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    /// The request carried a valid DPoP proof by the key of this thumbprint.
    pub fn set_dpop_jkt(&mut self, jkt: Option<String>) {
        self.dpop_jkt = jkt;
    }

    /// The thumbprint of the request's verified DPoP proof key: what the issued tokens are
    /// bound to. `None`: no proof, bearer tokens.
    pub fn dpop_jkt(&self) -> Option<&str> {
        self.dpop_jkt.as_deref()
    }

    pub fn secret(&self, name: &str) -> Option<Secret> {
        self.get(name).map(Secret::new)
    }

    pub fn require(&self, name: &str, missing: ErrorCode) -> Result<&str, ErrorCode> {
        self.get(name).ok_or(missing)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_values_count_as_absent() {
        let p = TokenParams::from_pairs([("grant_type", ""), ("scope", "a b")]).unwrap();
        assert_eq!(p.get("grant_type"), None);
        assert_eq!(p.get("scope"), Some("a b"));
    }

    #[test]
    fn repeated_parameters_are_refused() {
        assert_eq!(
            TokenParams::from_pairs([("scope", "a"), ("scope", "b")]).unwrap_err(),
            ErrorCode::UnsupportedRequestFormat
        );
    }

    #[test]
    fn debug_shows_names_not_values() {
        let p = TokenParams::from_pairs([("password", "hunter2")]).unwrap();
        assert!(!format!("{p:?}").contains("hunter2"));
    }
}
