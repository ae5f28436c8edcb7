//! OAuth scopes (RFC 6749 §3.3): a space-delimited, order-free set of tokens.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeSet;
use std::fmt;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scopes(BTreeSet<String>);

/// The OpenID Connect scope (OpenID Connect Core §3.1.2.1): it asks for an ID token and the
/// userinfo endpoint, not for an API permission, so clients that sign users in may request it
/// without having it among their registered scopes.
pub const OPENID: &str = "openid";

/// The scope of a token that manages its app's own secrets (`/app-mgmt/v4/apps/{id}/secrets`,
/// part 13): any confidential client may ask for it by name, none is given it by default, and
/// no other resource accepts a token that carries it.
pub const SECRETS_MANAGEMENT_SCOPE: &str = "app-mgmt.secrets";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("scope contains a character outside RFC 6749 §3.3 (%x21 / %x23-5B / %x5D-7E)")]
pub struct InvalidScope;

impl Scopes {
    pub fn empty() -> Self {
        Self::default()
    }

    /// Parses the space-separated wire form. Repeated spaces and duplicates are tolerated.
    pub fn parse(text: &str) -> Result<Self, InvalidScope> {
        text.split(' ')
            .filter(|s| !s.is_empty())
            .map(|token| {
                if token.bytes().all(is_scope_byte) {
                    Ok(token.to_owned())
                } else {
                    Err(InvalidScope)
                }
            })
            .collect::<Result<BTreeSet<_>, _>>()
            .map(Self)
    }

    pub fn from_list<I, S>(items: I) -> Result<Self, InvalidScope>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let joined: Vec<String> = items.into_iter().map(|s| s.as_ref().to_owned()).collect();
        if joined.iter().any(|s| s.contains(' ')) {
            return Err(InvalidScope);
        }
        Self::parse(&joined.join(" "))
    }

    pub fn is_subset_of(&self, other: &Scopes) -> bool {
        self.0.is_subset(&other.0)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(String::as_str)
    }

    pub fn contains(&self, scope: &str) -> bool {
        self.0.contains(scope)
    }

    /// The scopes in either set.
    pub fn union(&self, other: &Scopes) -> Self {
        Self(self.0.union(&other.0).cloned().collect())
    }

    /// The scopes in both sets.
    pub fn intersection(&self, other: &Scopes) -> Self {
        Self(self.0.intersection(&other.0).cloned().collect())
    }

    /// These scopes and `scope` (a valid scope token, e.g. [`OPENID`]).
    pub fn with(&self, scope: &str) -> Self {
        debug_assert!(scope.bytes().all(is_scope_byte));
        let mut scopes = self.clone();
        scopes.0.insert(scope.to_owned());
        scopes
    }
}

fn is_scope_byte(b: u8) -> bool {
    matches!(b, 0x21 | 0x23..=0x5B | 0x5D..=0x7E)
}

impl fmt::Display for Scopes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for scope in &self.0 {
            if !first {
                f.write_str(" ")?;
            }
            f.write_str(scope)?;
            first = false;
        }
        Ok(())
    }
}

/// Serialised as the wire form, a single space-separated string.
impl Serialize for Scopes {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Scopes {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Scopes::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_normalises_and_prints_sorted() {
        let s = Scopes::parse("write  read read").unwrap();
        assert_eq!(s.to_string(), "read write");
        assert!(Scopes::parse("").unwrap().is_empty());
    }

    #[test]
    fn rejects_forbidden_characters() {
        assert_eq!(Scopes::parse("a\"b"), Err(InvalidScope));
        assert_eq!(Scopes::parse("a\\b"), Err(InvalidScope));
    }

    #[test]
    fn subset() {
        let all = Scopes::parse("a b c").unwrap();
        assert!(Scopes::parse("a c").unwrap().is_subset_of(&all));
        assert!(Scopes::empty().is_subset_of(&all));
        assert!(!Scopes::parse("a d").unwrap().is_subset_of(&all));
    }

    #[test]
    fn with_adds_one_scope() {
        let s = Scopes::parse("read").unwrap().with(OPENID);
        assert_eq!(s.to_string(), "openid read");
        assert_eq!(s.with(OPENID), s);
    }

    #[test]
    fn from_list_rejects_embedded_spaces() {
        assert!(Scopes::from_list(["a b"]).is_err());
        assert_eq!(Scopes::from_list(["b", "a"]).unwrap().to_string(), "a b");
    }
}
