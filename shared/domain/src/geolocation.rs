//! A geolocation is the base URL of one regional deployment.

use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Geolocation(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("geolocation must be an absolute http(s) base URL without query or fragment")]
pub struct InvalidGeolocation;

impl Geolocation {
    /// Served over HTTPS: the one place that decides `Secure` cookies and HSTS.
    pub fn is_https(&self) -> bool {
        self.0.starts_with("https://")
    }

    /// Accepts `https://host[:port][/path]`; a trailing slash is dropped so that two spellings of
    /// one deployment compare equal.
    pub fn parse(text: &str) -> Result<Self, InvalidGeolocation> {
        let url = url::Url::parse(text.trim()).map_err(|_| InvalidGeolocation)?;
        if !matches!(url.scheme(), "http" | "https")
            || url.host().is_none()
            || url.query().is_some()
            || url.fragment().is_some()
            || !url.username().is_empty()
        {
            return Err(InvalidGeolocation);
        }
        Ok(Self(url.as_str().trim_end_matches('/').to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Geolocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for Geolocation {
    type Error = InvalidGeolocation;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<Geolocation> for String {
    fn from(value: Geolocation) -> Self {
        value.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_trailing_slash() {
        assert_eq!(
            Geolocation::parse("https://us.api.example.com/").unwrap(),
            Geolocation::parse("https://us.api.example.com").unwrap()
        );
        assert_eq!(
            Geolocation::parse("http://127.0.0.1:8080")
                .unwrap()
                .as_str(),
            "http://127.0.0.1:8080"
        );
    }

    #[test]
    fn rejects_non_base_urls() {
        for bad in ["ftp://x", "https://x/?a=b", "not a url", "https://u:p@x"] {
            assert!(Geolocation::parse(bad).is_err(), "{bad}");
        }
    }
}
