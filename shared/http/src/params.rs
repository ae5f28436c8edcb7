//! Decoding a request body into the grants' [`TokenParams`]: `application/x-www-form-urlencoded`
//! or a JSON object of strings, and why a body yields none ([`BodyDenial`]). The bag itself and
//! its rules (empty is absent, no repeats) are the grants'; this is the HTTP side of it.

use std::collections::HashSet;

use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};

use crate::errors::ErrorCode;
use token_core::params::TokenParams;

/// `application/x-www-form-urlencoded`.
pub fn form_params(body: &[u8]) -> Result<TokenParams, ErrorCode> {
    let pairs: Vec<(String, String)> =
        serde_urlencoded::from_bytes(body).map_err(|_| ErrorCode::UnsupportedRequestFormat)?;
    TokenParams::from_pairs(pairs)
}

/// A JSON object whose values are strings (numbers and booleans are taken as their text).
/// A name given twice is refused like a repeated form parameter: serde_json's own maps keep
/// the last value, which would let two parsers of one body disagree.
pub fn json_params(body: &[u8]) -> Result<TokenParams, ErrorCode> {
    let JsonObject(members) =
        serde_json::from_slice(body).map_err(|_| ErrorCode::UnsupportedRequestFormat)?;
    let pairs = members
        .into_iter()
        .filter_map(|(name, value)| match value {
            serde_json::Value::String(s) => Some(Ok((name, s))),
            serde_json::Value::Number(n) => Some(Ok((name, n.to_string()))),
            serde_json::Value::Bool(b) => Some(Ok((name, b.to_string()))),
            serde_json::Value::Null => None,
            _ => Some(Err(ErrorCode::UnsupportedRequestFormat)),
        })
        .collect::<Result<Vec<_>, _>>()?;
    TokenParams::from_pairs(pairs)
}

/// A JSON object's members in order, refusing a repeated name while parsing.
struct JsonObject(Vec<(String, serde_json::Value)>);

impl<'de> Deserialize<'de> for JsonObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members;

        impl<'de> Visitor<'de> for Members {
            type Value = JsonObject;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object without repeated names")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<JsonObject, A::Error> {
                let mut names = HashSet::new();
                let mut members = Vec::with_capacity(map.size_hint().unwrap_or(0));
                while let Some((name, value)) = map.next_entry::<String, serde_json::Value>()? {
                    if !names.insert(name.clone()) {
                        // The name is not echoed: errors are mapped to a code anyway.
                        return Err(de::Error::custom("repeated name"));
                    }
                    members.push((name, value));
                }
                Ok(JsonObject(members))
            }
        }

        deserializer.deserialize_map(Members)
    }
}

/// Why a request body yielded no parameters. Each endpoint answers it in its own error shape,
/// at its own step of the order of checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyDenial {
    /// Over the size limit (413; docs/decisions.md, "Requests and client authentication").
    TooLarge,
    /// Neither a form nor a JSON object of strings, or a repeated parameter (code 135).
    Format(ErrorCode),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_values_count_as_absent() {
        let p = form_params(b"grant_type=&scope=a+b").unwrap();
        assert_eq!(p.get("grant_type"), None);
        assert_eq!(p.get("scope"), Some("a b"));
    }

    #[test]
    fn repeated_parameters_are_refused() {
        assert_eq!(
            form_params(b"scope=a&scope=b").unwrap_err(),
            ErrorCode::UnsupportedRequestFormat
        );
    }

    #[test]
    fn json_objects_only() {
        let p = json_params(br#"{"grant_type":"password","n":5,"x":null}"#).unwrap();
        assert_eq!(p.get("grant_type"), Some("password"));
        assert_eq!(p.get("n"), Some("5"));
        assert_eq!(p.get("x"), None);
        assert!(json_params(b"[1]").is_err());
        assert!(json_params(br#"{"a":{"b":1}}"#).is_err());
    }

    #[test]
    fn repeated_json_names_are_refused() {
        for body in [
            br#"{"username":"a","username":"b"}"#.as_slice(),
            br#"{"username":"a","password":"p","username":"a"}"#,
            br#"{"x":null,"x":"1"}"#,
        ] {
            assert_eq!(
                json_params(body).unwrap_err(),
                ErrorCode::UnsupportedRequestFormat,
                "{}",
                String::from_utf8_lossy(body)
            );
        }
    }
}
