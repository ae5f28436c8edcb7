//! JSON error bodies of the token endpoint (contract part 2), shared by the endpoints that
//! answer in its shape, and the 5xx shape every endpoint shares.

use axum::response::{IntoResponse, Response};
use axum::Json;
use http::{header, HeaderValue, StatusCode};
use serde_json::json;

use super::observability::Outcome;
use crate::errors::{ErrorCode, ServerError};
use crate::grants::GrantDenial;

/// `{"error", "error_description", "code"}` (+ `geolocation` for code 16), with the status the
/// `error` calls for and `WWW-Authenticate: Basic` where the client used Basic and failed.
impl IntoResponse for GrantDenial {
    fn into_response(self) -> Response {
        let mut body = json!({
            "error": self.code.error().as_str(),
            "error_description": self.code.description(),
            "code": self.code.code(),
        });
        if let Some(home) = &self.geolocation {
            body["geolocation"] = json!(home.as_str());
        }
        let mut response = (self.code.status(), Json(body)).into_response();
        if self.basic_challenge && self.code.status() == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Basic realm=\"token\", charset=\"UTF-8\""),
            );
        }
        Outcome::Code(self.code.code()).attach(response)
    }
}

pub fn catalogue_response(code: ErrorCode) -> Response {
    GrantDenial::new(code).into_response()
}

/// 503 when worth a retry (with `Retry-After`), 500 otherwise. The detail goes to the log; the
/// caller gets a message without internals.
impl IntoResponse for ServerError {
    fn into_response(self) -> Response {
        let message = self.public_message();
        let (status, error_name) = match self {
            ServerError::Unavailable(_) => {
                (StatusCode::SERVICE_UNAVAILABLE, "temporarily_unavailable")
            }
            ServerError::Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, "server_error"),
        };
        tracing::error!(error = %self, "server failure");
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
}

/// 4xx bodies outside the catalogue (unknown path, wrong method, oversized body) keep the same
/// three fields; `code` is then the HTTP status.
pub fn http_error_response(status: StatusCode, error: &str, description: &str) -> Response {
    let response = (
        status,
        Json(json!({ "error": error, "error_description": description, "code": status.as_u16() })),
    )
        .into_response();
    Outcome::Code(status.as_u16()).attach(response)
}
