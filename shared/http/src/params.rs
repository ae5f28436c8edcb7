//! Decoding a request body into (name, value) pairs: `application/x-www-form-urlencoded` or a
//! JSON object of strings, and why a body yields none ([`BodyDenial`]). The typed requests read
//! from the pairs, and the rules of parameters whatever carried them (empty is absent, no
//! repeats), are `token_core::requests`'; this is the HTTP side of it.

use std::collections::HashSet;

use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};

use crate::errors::ErrorCode;
use crate::requests::RESOURCE;

/// A decoded body's parameters in the order sent, repeats and empty values included.
pub type Pairs = Vec<(String, String)>;

/// `application/x-www-form-urlencoded` (also a query string).
pub fn form_pairs(body: &[u8]) -> Result<Pairs, ErrorCode> {
    serde_urlencoded::from_bytes(body).map_err(|_| ErrorCode::UnsupportedRequestFormat)
}

/// The first value of `name` among `pairs`, if it was sent.
pub fn field<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(field, _)| field == name)
        .map(|(_, value)| value.as_str())
}

/// A JSON object whose values are strings (numbers and booleans are taken as their text, `null`
/// as absent). A name given twice is refused here, where it is still visible: serde_json's own
/// maps keep the last value, which would let two parsers of one body disagree.
pub fn json_pairs(body: &[u8]) -> Result<Pairs, ErrorCode> {
    let JsonObject(members) =
        serde_json::from_slice(body).map_err(|_| ErrorCode::UnsupportedRequestFormat)?;
    let mut pairs = Vec::with_capacity(members.len());
    for (name, value) in members {
        match value {
            // RFC 8707's repeatable `resource`, as JSON can say it: an array of strings.
            serde_json::Value::Array(values) if name == RESOURCE => {
                for value in values {
                    let serde_json::Value::String(text) = value else {
                        return Err(ErrorCode::UnsupportedRequestFormat);
                    };
                    pairs.push((name.clone(), text));
                }
            }
            serde_json::Value::String(s) => pairs.push((name, s)),
            serde_json::Value::Number(n) => pairs.push((name, n.to_string())),
            serde_json::Value::Bool(b) => pairs.push((name, b.to_string())),
            serde_json::Value::Null => {}
            _ => return Err(ErrorCode::UnsupportedRequestFormat),
        }
    }
    Ok(pairs)
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

    fn pairs(list: &[(&str, &str)]) -> Pairs {
        list.iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect()
    }

    #[test]
    fn forms_are_decoded_in_order_with_their_empty_values() {
        assert_eq!(
            form_pairs(b"grant_type=&scope=a+b&scope=c").unwrap(),
            pairs(&[("grant_type", ""), ("scope", "a b"), ("scope", "c")])
        );
    }

    #[test]
    fn json_objects_only() {
        assert_eq!(
            json_pairs(br#"{"grant_type":"password","n":5,"b":true,"x":null}"#).unwrap(),
            pairs(&[("grant_type", "password"), ("n", "5"), ("b", "true")])
        );
        assert!(json_pairs(b"[1]").is_err());
        assert!(json_pairs(br#"{"a":{"b":1}}"#).is_err());
    }

    #[test]
    fn repeated_json_names_are_refused() {
        for body in [
            br#"{"username":"a","username":"b"}"#.as_slice(),
            br#"{"username":"a","password":"p","username":"a"}"#,
            br#"{"x":null,"x":"1"}"#,
        ] {
            assert_eq!(
                json_pairs(body).unwrap_err(),
                ErrorCode::UnsupportedRequestFormat,
                "{}",
                String::from_utf8_lossy(body)
            );
        }
    }
}
