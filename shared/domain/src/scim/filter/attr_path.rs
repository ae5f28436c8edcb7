//! Attribute paths in the notation of RFC 7644 §3.10.

use std::fmt;

/// `[URI ":"] ATTRNAME *1subAttr` (RFC 7644 §3.10): `name.givenName`,
/// `urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.value`.
///
/// A PATCH path or an attribute list may also name an extension schema's URN alone, the
/// extension's whole object (RFC 7644 §3.10: "the schema URI ... of the extension's complex
/// attribute container"): [`AttrPath::schema`], `urn` set and `name` empty. [`AttrPath::parse`]
/// reads such a URN as `urn` and `name` like any other; `path::parse` and
/// `projection::parse_attribute_list` turn it into this form once they know it names an
/// extension. Filters never do: a bare URN there names no attribute (`invalidFilter`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttrPath {
    pub urn: Option<String>,
    pub name: String,
    pub sub: Option<String>,
}

impl AttrPath {
    pub fn new(name: &str) -> Self {
        Self {
            urn: None,
            name: name.to_owned(),
            sub: None,
        }
    }

    /// The whole object of the extension with this URN.
    pub fn schema(urn: &str) -> Self {
        Self {
            urn: Some(urn.to_owned()),
            name: String::new(),
            sub: None,
        }
    }

    /// The URN, when the path names an extension's whole object ([`AttrPath::schema`]).
    pub fn schema_urn(&self) -> Option<&str> {
        match &self.urn {
            Some(urn) if self.name.is_empty() && self.sub.is_none() => Some(urn),
            _ => None,
        }
    }

    /// The text as one URN, when it could be a schema's: `urn` and `name` without a
    /// sub-attribute (`urn:…:enterprise:2.0` and `User`).
    pub(crate) fn as_urn(&self) -> Option<String> {
        match (&self.urn, &self.sub) {
            (Some(urn), None) if !self.name.is_empty() => Some(format!("{urn}:{}", self.name)),
            _ => None,
        }
    }

    /// Parses one attribute path in the notation of RFC 7644 §3.10; `None` if it is not one.
    pub fn parse(text: &str) -> Option<Self> {
        let (urn, rest) = if text
            .get(..4)
            .is_some_and(|head| head.eq_ignore_ascii_case("urn:"))
        {
            let (urn, rest) = text.rsplit_once(':')?;
            (Some(urn.to_owned()), rest)
        } else {
            (None, text)
        };
        let (name, sub) = match rest.split_once('.') {
            Some((name, sub)) => (name, Some(sub)),
            None => (rest, None),
        };
        if !is_attr_name(name) || sub.is_some_and(|sub| !is_attr_name(sub)) {
            return None;
        }
        Some(Self {
            urn,
            name: name.to_owned(),
            sub: sub.map(str::to_owned),
        })
    }
}

/// `ATTRNAME = ALPHA *(nameChar)`, plus the leading `$` of `$ref` (RFC 7643 §2.1 names it so).
fn is_attr_name(text: &str) -> bool {
    let mut bytes = text.bytes();
    bytes
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'$')
        && bytes.all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
}

impl fmt::Display for AttrPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(urn) = &self.urn {
            f.write_str(urn)?;
            if !self.name.is_empty() {
                f.write_str(":")?;
            }
        }
        f.write_str(&self.name)?;
        if let Some(sub) = &self.sub {
            write!(f, ".{sub}")?;
        }
        Ok(())
    }
}
