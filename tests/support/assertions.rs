//! One assertion per error body shape the service answers with:
//!
//! - the token endpoint's `{error, error_description, code}` ([`assert_token_error`]),
//! - the old-token exchange's `{code, error, error_description}` ([`assert_exchange_error`]),
//! - the company auth-token endpoint's `{status, code, errormsg, token, error,
//!   error_description}` ([`assert_company_error`]),
//!
//! and the cache headers every token-bearing or error response carries ([`assert_not_cached`]);
//! and a JWT's signature against a published JWK Set ([`assert_signed_by_jwks`]).
//! Token-endpoint descriptions are checked against the specification's table and the pinned
//! service rows ([`super::error_table`]), not the code's own catalogue.

use reqwest::header::HeaderMap;
use reqwest::StatusCode;
use serde_json::Value;
use token_core::errors::ExchangeCode;

/// A response's status and JSON body.
pub type Answer = (StatusCode, Value);

/// The `(error, error_description)` pairs for a numeric code as the specification's table (or
/// a pinned service row) words them: one, or two for 119 ([`super::error_table`]).
pub fn catalogue_rows(code: u64) -> Vec<(&'static str, &'static str)> {
    super::error_table::expected_rows(code)
}

/// A token-endpoint error: status, `error`, `code`, and the catalogue's `error_description` for
/// that code; nothing else in the body but `geolocation` (code 16).
#[track_caller]
pub fn assert_token_error(actual: &Answer, status: u16, error: &str, code: u64) {
    let (got_status, body) = actual;
    assert_eq!(got_status.as_u16(), status, "status; body: {body}");
    assert_eq!(body["error"], error, "error; body: {body}");
    assert_eq!(body["code"], code, "code; body: {body}");
    assert_catalogued_description(body, error, code);
    for key in body.as_object().expect("a JSON object").keys() {
        assert!(
            ["error", "error_description", "code", "geolocation"].contains(&key.as_str()),
            "unexpected field {key}; body: {body}"
        );
    }
}

/// An old-token exchange refusal: status, the exchange `code`, its `error`, the specification's
/// meaning as `error_description`, and no token in the body.
#[track_caller]
pub fn assert_exchange_error(actual: &Answer, status: u16, code: &str, error: &str) {
    let (got, body) = actual;
    assert_eq!(got.as_u16(), status, "status; body: {body}");
    assert_eq!(body["code"], code, "code; body: {body}");
    assert_eq!(body["error"], error, "error; body: {body}");
    let known = [
        ExchangeCode::InvalidScopes,
        ExchangeCode::InvalidApp,
        ExchangeCode::InvalidToken,
        ExchangeCode::Unauthorized,
    ]
    .into_iter()
    .find(|c| c.as_str() == code)
    .unwrap_or_else(|| panic!("{code} is not an exchange failure code"));
    // The code's own `error` comes with the specification's meaning; a bad `returnType` is
    // INVALIDTOKEN with `invalid_request` and a message of its own.
    if known.error().as_str() == error {
        assert_eq!(
            body["error_description"],
            known.description(),
            "error_description; body: {body}"
        );
    } else {
        assert!(
            body["error_description"]
                .as_str()
                .is_some_and(|d| !d.is_empty()),
            "error_description; body: {body}"
        );
    }
    for field in ["accessToken", "refreshToken"] {
        assert!(body.get(field).is_none(), "{field} in a refusal: {body}");
    }
}

/// A company auth-token refusal: the FAIL fields and the token endpoint's. Catalogue codes carry
/// the catalogue's description; the HTTP-status codes (400, 401, 403, 404, 413) carry a message of
/// the service's own.
#[track_caller]
pub fn assert_company_error(actual: &Answer, status: u16, error: &str, code: u64) {
    let (got, body) = actual;
    assert_eq!(got.as_u16(), status, "status; body: {body}");
    assert_eq!(body["code"], code, "code; body: {body}");
    assert_eq!(body["error"], error, "error; body: {body}");
    if [400, 401, 403, 404, 413].contains(&code) {
        assert!(
            body["error_description"]
                .as_str()
                .is_some_and(|d| !d.is_empty()),
            "error_description; body: {body}"
        );
    } else {
        assert_catalogued_description(body, error, code);
    }
    assert_eq!(body["status"], "FAIL", "body: {body}");
    assert_eq!(body["token"], "", "body: {body}");
    assert_eq!(body["errormsg"], body["error_description"], "body: {body}");
}

/// `Cache-Control: no-store` and `Pragma: no-cache` (RFC 6749 §5.1), on answers and refusals.
#[track_caller]
pub fn assert_not_cached(headers: &HeaderMap) {
    assert_eq!(headers["cache-control"], "no-store", "{headers:?}");
    assert_eq!(headers["pragma"], "no-cache", "{headers:?}");
}

/// A JSON answer ([`assert_not_cached`] and `Content-Type: application/json`).
#[track_caller]
pub fn assert_uncached_json(headers: &HeaderMap) {
    assert_not_cached(headers);
    let content_type = headers["content-type"].to_str().unwrap();
    assert!(
        content_type.starts_with("application/json"),
        "{content_type}"
    );
}

/// The one independent JWS check, shared with the library's unit tests.
pub use crate::support::jwks_check::{assert_signed_by_jwks, SignedJwt};

#[track_caller]
fn assert_catalogued_description(body: &Value, error: &str, code: u64) {
    let rows = catalogue_rows(code);
    assert!(
        !rows.is_empty(),
        "code {code} is not in the catalogue; body: {body}"
    );
    let description = body["error_description"].as_str().unwrap_or_default();
    assert!(
        rows.contains(&(error, description)),
        "error_description {description:?} is not the catalogue's for {code} ({rows:?}); body: {body}"
    );
}
