//! JSON error bodies of the token endpoint (contract part 2) and the shared 5xx shape.

use axum::response::{IntoResponse, Response};
use axum::Json;
use http::{header, HeaderValue, StatusCode};
use serde_json::json;

use crate::errors::ErrorCode;
use crate::grants::{Denial, GrantError};
use crate::store::StoreError;

/// `{"error", "error_description", "code"}` (+ `geolocation` for code 16), with the status the
/// `error` calls for and `WWW-Authenticate: Basic` where the client used Basic and failed.
pub fn denial_response(denial: &Denial) -> Response {
    record_code(denial.code.code());
    let mut body = json!({
        "error": denial.code.error().as_str(),
        "error_description": denial.code.description(),
        "code": denial.code.code(),
    });
    if let Some(home) = &denial.geolocation {
        body["geolocation"] = json!(home.as_str());
    }
    let mut response = (denial.code.status(), Json(body)).into_response();
    if denial.basic_challenge && denial.code.status() == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=\"token\", charset=\"UTF-8\""),
        );
    }
    response
}

pub fn catalogue_response(code: ErrorCode) -> Response {
    denial_response(&Denial {
        code,
        geolocation: None,
        basic_challenge: false,
    })
}

pub fn grant_error_response(error: &GrantError) -> Response {
    match error {
        GrantError::Denied(denial) => denial_response(denial),
        GrantError::Store(e) => store_error_response(e),
    }
}

/// 503 when the store timed out or throttled (worth a retry), 500 otherwise. The detail goes
/// to the log; the caller gets a message without internals.
pub fn store_error_response(error: &StoreError) -> Response {
    let (status, error_name, message) = match error {
        StoreError::Unavailable(_) => (
            StatusCode::SERVICE_UNAVAILABLE,
            "temporarily_unavailable",
            "The token store did not answer in time. Nothing was changed; please retry.",
        ),
        StoreError::Internal(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            "The server failed to process the request. Nothing was changed.",
        ),
    };
    tracing::error!(error = %error, "store failure");
    let mut response = (
        status,
        Json(json!({ "error": error_name, "message": message })),
    )
        .into_response();
    if status == StatusCode::SERVICE_UNAVAILABLE {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    }
    response
}

/// 4xx bodies outside the catalogue (unknown path, wrong method, oversized body) keep the same
/// three fields; `code` is then the HTTP status.
pub fn http_error_response(status: StatusCode, error: &str, description: &str) -> Response {
    record_code(status.as_u16());
    (
        status,
        Json(json!({ "error": error, "error_description": description, "code": status.as_u16() })),
    )
        .into_response()
}

fn record_code(code: u16) {
    tracing::Span::current().record("code", code);
}
