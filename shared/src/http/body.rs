//! Reading request bodies: bounded size, form-encoded or JSON.

use axum::body::Body;
use axum::response::Response;
use http::{header, HeaderMap, StatusCode};

use super::error_response::{catalogue_response, http_error_response};
use crate::errors::ErrorCode;
use crate::grants::TokenParams;

/// Contract part 2: larger bodies get 413.
pub const MAX_BODY_BYTES: usize = 16 * 1024;

/// The body's parameters, or the response that refuses it.
pub async fn read_params(headers: &HeaderMap, body: Body) -> Result<TokenParams, Response> {
    let bytes = axum::body::to_bytes(body, MAX_BODY_BYTES)
        .await
        .map_err(|_| {
            http_error_response(
                StatusCode::PAYLOAD_TOO_LARGE,
                "invalid_request",
                "request body exceeds 16 KiB",
            )
        })?;
    let parsed = match media_type(headers).as_deref() {
        Some("application/x-www-form-urlencoded") => TokenParams::from_form(&bytes),
        Some("application/json") => TokenParams::from_json(&bytes),
        _ => Err(ErrorCode::UnsupportedRequestFormat),
    };
    parsed.map_err(catalogue_response)
}

fn media_type(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::CONTENT_TYPE)?.to_str().ok()?;
    Some(value.split(';').next()?.trim().to_ascii_lowercase())
}
