//! One line of the import file: read as JSON, then validated into a legacy token. A skip
//! reason is the only output besides the token, and it never quotes the token.

use serde::Deserialize;

use super::MAX_TOKEN_BYTES;
use crate::clock::UnixTime;
use crate::domain::{ConsumerKey, LegacyToken, PrincipalId, PrincipalType, Scopes};
use crate::secrets::TokenHash;

/// A line as it appears in the file, before validation. Unknown fields are ignored.
#[derive(Deserialize)]
struct RawLine {
    token: TokenField,
    consumer_key: String,
    principal_type: String,
    principal_id: String,
    scopes: Vec<String>,
    wsadmin: bool,
    #[serde(default)]
    company_id: Option<String>,
    #[serde(default)]
    expires_at: Option<i64>,
}

/// The `token` field, read so that a wrong type is reported without its value: serde's own
/// "invalid type" message would quote a number or other scalar given as the token.
#[derive(Deserialize)]
#[serde(untagged)]
enum TokenField {
    Text(String),
    NotText(serde::de::IgnoredAny),
}

/// Parses and validates one non-blank line. The error is the skip reason; it never contains the
/// token.
pub fn parse_line(line: &[u8], now: UnixTime) -> Result<LegacyToken, String> {
    let raw: RawLine = serde_json::from_slice(line).map_err(describe_json_error)?;
    validate(raw, now)
}

fn validate(raw: RawLine, now: UnixTime) -> Result<LegacyToken, String> {
    let TokenField::Text(token) = raw.token else {
        return Err("token must be a string".into());
    };
    if token.is_empty() {
        return Err("token is empty".into());
    }
    if token.len() > MAX_TOKEN_BYTES {
        return Err(format!("token is longer than {MAX_TOKEN_BYTES} bytes"));
    }
    if token.trim() != token || token.chars().any(char::is_control) {
        return Err("token has surrounding whitespace or control characters".into());
    }
    let consumer_key =
        ConsumerKey::parse(&raw.consumer_key).map_err(|e| format!("consumer_key: {e}"))?;
    let principal_type = match raw.principal_type.as_str() {
        "user" => PrincipalType::User,
        "company" => PrincipalType::Company,
        _ => return Err("principal_type must be \"user\" or \"company\"".into()),
    };
    let principal_id = PrincipalId::parse(&raw.principal_id).map_err(|e| e.to_string())?;
    let scopes = Scopes::from_list(&raw.scopes).map_err(|e| format!("scopes: {e}"))?;
    let company_id = match raw.company_id.as_deref() {
        None => None,
        Some(text) => {
            Some(PrincipalId::parse(text).map_err(|_| "company_id must be a UUID".to_owned())?)
        }
    };
    if raw.wsadmin && company_id.is_none() {
        return Err("company_id is required when wsadmin is true".into());
    }
    if let Some(at) = raw.expires_at {
        if at <= 0 {
            return Err("expires_at must be a positive number of seconds since the epoch".into());
        }
        if at <= now {
            return Err(format!("token already expired (expires_at {at})"));
        }
    }
    Ok(LegacyToken {
        token_hash: TokenHash::of(&token),
        consumer_key,
        principal_type,
        principal_id,
        scopes,
        wsadmin: raw.wsadmin,
        company_id,
        expires_at: raw.expires_at,
    })
}

/// serde_json's message without its "at line 1 column N" suffix (always line 1 here: one line is
/// parsed at a time), with the column kept.
fn describe_json_error(error: serde_json::Error) -> String {
    let text = error.to_string();
    let message = match text.rfind(" at line ") {
        Some(at) => &text[..at],
        None => text.as_str(),
    };
    match error.classify() {
        serde_json::error::Category::Data => message.to_owned(),
        _ => format!("not a JSON object: {message} (column {})", error.column()),
    }
}
