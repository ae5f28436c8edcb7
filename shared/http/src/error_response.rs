//! JSON error bodies of the token endpoint (docs/decisions.md, "Requests and client
//! authentication"), shared by the endpoints that answer in its shape, the 5xx shape every endpoint
//! shares, and the answer to any [`Refusal`] whose denial has an answer of its own.

use axum::response::{IntoResponse, Response};
use axum::Json;
use http::{header, HeaderValue, StatusCode};
use serde::Serialize;
use utoipa::ToSchema;

use super::observability::Outcome;
use crate::errors::{Denial, ErrorCode, GrantDenial, Refusal, ServerError};

/// How a refusal or failure of the layers below answers over HTTP. This crate's own trait: the
/// protocol layer knows no HTTP, and a crate may implement axum's `IntoResponse` only for its
/// own types. Its one method has `IntoResponse`'s name, so a call reads the same for both.
pub trait ErrorResponse {
    fn into_response(self) -> Response;
}

/// The token endpoint's error body (docs/decisions.md, "Requests and client authentication"), and
/// every 4xx outside the catalogue, where `code` is the HTTP status.
#[derive(Debug, Serialize, ToSchema)]
pub struct OAuthErrorBody {
    /// RFC 6749 §5.2 error, or `invalid_token` / `not_found` outside the catalogue.
    pub error: &'static str,
    pub error_description: &'static str,
    /// The catalogue's code, or the HTTP status.
    pub code: u16,
    /// Code 16 only: the deployment where the principal lives.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub geolocation: Option<String>,
}

/// 500 `server_error` and 503 `temporarily_unavailable` (with `Retry-After`), on every endpoint.
#[derive(Debug, Serialize, ToSchema)]
pub struct ServerErrorBody {
    pub error: &'static str,
    pub message: &'static str,
}

/// `{"error", "error_description", "code"}` (+ `geolocation` for code 16), with the status the
/// `error` calls for (`http::basic` adds `WWW-Authenticate: Basic` where due).
impl ErrorResponse for GrantDenial {
    fn into_response(self) -> Response {
        let status = self.code.status();
        let body = OAuthErrorBody {
            error: self.code.error().as_str(),
            error_description: self.code.description(),
            code: self.code.code(),
            geolocation: self.geolocation.map(|home| home.as_str().to_owned()),
        };
        let mut response = (status, Json(body)).into_response();
        if let Some(seconds) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds.max(1)));
        }
        Outcome::Code(self.code.code()).attach(response)
    }
}

pub fn catalogue_response(code: ErrorCode) -> Response {
    GrantDenial::new(code).into_response()
}

/// 503 when worth a retry (with `Retry-After`), 500 otherwise. The detail (the whole chain of
/// causes) goes to the log; the caller gets a message without internals.
impl ErrorResponse for ServerError {
    fn into_response(self) -> Response {
        let (status, error) = if self.is_unavailable() {
            (StatusCode::SERVICE_UNAVAILABLE, "temporarily_unavailable")
        } else {
            (StatusCode::INTERNAL_SERVER_ERROR, "server_error")
        };
        tracing::error!(
            error = &self as &(dyn std::error::Error + 'static),
            "server failure"
        );
        let body = ServerErrorBody {
            error,
            message: self.public_message(),
        };
        let mut response = (status, Json(body)).into_response();
        if status == StatusCode::SERVICE_UNAVAILABLE {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        response
    }
}

/// A refusal answers as its denial does; a server failure as every route's 5xx.
impl<D: Denial + ErrorResponse> ErrorResponse for Refusal<D> {
    fn into_response(self) -> Response {
        match self {
            Self::Denied(denial) => denial.into_response(),
            Self::Server(error) => error.into_response(),
        }
    }
}

/// A handler's outcome: its answer, or its refusal's.
impl<T: IntoResponse, E: ErrorResponse> ErrorResponse for Result<T, E> {
    fn into_response(self) -> Response {
        match self {
            Ok(answer) => answer.into_response(),
            Err(refusal) => refusal.into_response(),
        }
    }
}

/// 4xx bodies outside the catalogue (unknown path, wrong method, oversized body) keep the same
/// three fields; `code` is then the HTTP status.
pub fn http_error_response(
    status: StatusCode,
    error: &'static str,
    description: &'static str,
) -> Response {
    let body = OAuthErrorBody {
        error,
        error_description: description,
        code: status.as_u16(),
        geolocation: None,
    };
    Outcome::Code(status.as_u16()).attach((status, Json(body)).into_response())
}
