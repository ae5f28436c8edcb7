//! Reading request bodies: bounded size, form-encoded or JSON.

use axum::body::{Body, Bytes};
use axum::response::Response;
use http::{header, HeaderMap, StatusCode};

use super::error_response::{catalogue_response, http_error_response};
use super::params::{form_pairs, json_pairs, BodyDenial, Pairs};
use crate::error_response::ErrorResponse;
use crate::errors::ErrorCode;

/// Larger bodies are refused (docs/decisions.md, "Requests and client authentication")
/// ([`BodyDenial::TooLarge`]).
pub const MAX_BODY_BYTES: usize = 16 * 1024;

/// The token endpoint's answers: 413 or the catalogue's 135.
impl ErrorResponse for BodyDenial {
    fn into_response(self) -> Response {
        match self {
            Self::TooLarge => http_error_response(
                StatusCode::PAYLOAD_TOO_LARGE,
                "invalid_request",
                "request body exceeds 16 KiB",
            ),
            Self::Format(code) => catalogue_response(code),
        }
    }
}

/// The parameters of the endpoints that authenticate their client: the body must be a form or
/// JSON, even when empty.
pub async fn read_pairs(headers: &HeaderMap, body: Body) -> Result<Pairs, BodyDenial> {
    parse(headers, &read_bounded(body).await?)
}

/// The body of the endpoints whose parameters may all be elsewhere (header, path, query): an
/// empty body, whatever its content type, carries no parameters; any other must be a form or
/// JSON.
pub async fn read_optional_pairs(headers: &HeaderMap, body: Body) -> Result<Pairs, BodyDenial> {
    let bytes = read_bounded(body).await?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Pairs::new());
    }
    parse(headers, &bytes)
}

async fn read_bounded(body: Body) -> Result<Bytes, BodyDenial> {
    axum::body::to_bytes(body, MAX_BODY_BYTES)
        .await
        .map_err(|_| BodyDenial::TooLarge)
}

fn parse(headers: &HeaderMap, bytes: &[u8]) -> Result<Pairs, BodyDenial> {
    match media_type(headers).as_deref() {
        Some("application/x-www-form-urlencoded") => form_pairs(bytes),
        Some("application/json") => json_pairs(bytes),
        _ => Err(ErrorCode::UnsupportedRequestFormat),
    }
    .map_err(BodyDenial::Format)
}

fn media_type(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::CONTENT_TYPE)?.to_str().ok()?;
    Some(value.split(';').next()?.trim().to_ascii_lowercase())
}
