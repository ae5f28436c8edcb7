//! SCIM error responses (RFC 7644 §3.12).

use serde_json::{json, Value};

use super::ERROR_SCHEMA;

/// The `scimType` detail error keywords of RFC 7644 §3.12, Table 9; they go with status 400.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ScimType {
    #[error("invalidFilter")]
    InvalidFilter,
    #[error("tooMany")]
    TooMany,
    #[error("uniqueness")]
    Uniqueness,
    #[error("mutability")]
    Mutability,
    #[error("invalidSyntax")]
    InvalidSyntax,
    #[error("invalidPath")]
    InvalidPath,
    #[error("noTarget")]
    NoTarget,
    #[error("invalidValue")]
    InvalidValue,
    #[error("invalidVers")]
    InvalidVers,
    #[error("sensitive")]
    Sensitive,
}

impl ScimType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidFilter => "invalidFilter",
            Self::TooMany => "tooMany",
            Self::Uniqueness => "uniqueness",
            Self::Mutability => "mutability",
            Self::InvalidSyntax => "invalidSyntax",
            Self::InvalidPath => "invalidPath",
            Self::NoTarget => "noTarget",
            Self::InvalidValue => "invalidValue",
            Self::InvalidVers => "invalidVers",
            Self::Sensitive => "sensitive",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("SCIM error {status}: {detail}")]
pub struct ScimError {
    pub status: u16,
    pub scim_type: Option<ScimType>,
    pub detail: String,
}

impl ScimError {
    pub fn new(status: u16, scim_type: Option<ScimType>, detail: impl Into<String>) -> Self {
        Self {
            status,
            scim_type,
            detail: detail.into(),
        }
    }

    pub fn bad_request(scim_type: ScimType, detail: impl Into<String>) -> Self {
        Self::new(400, Some(scim_type), detail)
    }

    /// The response body of RFC 7644 §3.12; `status` is a string there.
    pub fn to_json(&self) -> Value {
        let mut body = json!({
            "schemas": [ERROR_SCHEMA],
            "status": self.status.to_string(),
            "detail": self.detail,
        });
        if let (Some(kind), Some(object)) = (self.scim_type, body.as_object_mut()) {
            object.insert("scimType".to_owned(), Value::from(kind.as_str()));
        }
        body
    }
}

/// The most of a client's text that an error detail may repeat: enough to locate the mistake,
/// too little to turn our error responses into a reflection channel for large payloads.
pub const MAX_ECHO_CHARS: usize = 100;

/// The client's text as an error detail may quote it: at most [`MAX_ECHO_CHARS`] characters.
pub(crate) fn echo(input: &str) -> String {
    let mut chars = input.chars();
    let head: String = chars.by_ref().take(MAX_ECHO_CHARS).collect();
    if chars.next().is_some() {
        format!("\"{head}\"…")
    } else {
        format!("\"{head}\"")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_has_status_as_string_and_the_scim_type() {
        let error = ScimError::bad_request(ScimType::InvalidFilter, "bad");
        assert_eq!(
            error.to_json(),
            json!({
                "schemas": [ERROR_SCHEMA],
                "status": "400",
                "scimType": "invalidFilter",
                "detail": "bad",
            })
        );
    }

    #[test]
    fn the_body_has_no_scim_type_without_one() {
        let body = ScimError::new(413, None, "too large").to_json();
        assert_eq!(body["status"], "413");
        assert!(body.get("scimType").is_none());
    }

    #[test]
    fn every_keyword_is_camel_case() {
        let all = [
            (ScimType::InvalidFilter, "invalidFilter"),
            (ScimType::TooMany, "tooMany"),
            (ScimType::Uniqueness, "uniqueness"),
            (ScimType::Mutability, "mutability"),
            (ScimType::InvalidSyntax, "invalidSyntax"),
            (ScimType::InvalidPath, "invalidPath"),
            (ScimType::NoTarget, "noTarget"),
            (ScimType::InvalidValue, "invalidValue"),
            (ScimType::InvalidVers, "invalidVers"),
            (ScimType::Sensitive, "sensitive"),
        ];
        for (kind, text) in all {
            assert_eq!(kind.as_str(), text);
            assert_eq!(kind.to_string(), text);
        }
    }

    #[test]
    fn echo_keeps_at_most_100_characters() {
        let long = "é".repeat(300);
        let quoted = echo(&long);
        assert_eq!(quoted.chars().filter(|c| *c == 'é').count(), MAX_ECHO_CHARS);
        assert_eq!(echo("short"), "\"short\"");
    }
}
