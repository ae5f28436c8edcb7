//! What every SCIM route shares: the caller's authentication, the answers as
//! `application/scim+json`, SCIM errors for every refusal and for ours.

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use http::{header, HeaderMap, HeaderValue, StatusCode};
use serde_json::Value;

use crate::domain::scim::ScimError;
use crate::services::Services;
use token_core::provisioning::{self as scim, Failure, Provisioner, ScimReply};

pub(super) const SCIM_JSON: &str = "application/scim+json";
/// A Bulk request's maxPayloadSize; every other request is far smaller.
pub(super) const MAX_BODY_BYTES: usize = 1_048_576;

pub(super) fn base(services: &Services) -> String {
    format!(
        "{}/scim/v2",
        services.geolocation().as_str().trim_end_matches('/')
    )
}

pub(super) fn scim_json(status: StatusCode, body: &Value) -> Response {
    let mut response = (status, body.to_string()).into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(SCIM_JSON));
    response
}

pub(super) fn error_response(error: &ScimError) -> Response {
    let status = StatusCode::from_u16(error.status).unwrap_or(StatusCode::BAD_REQUEST);
    scim_json(status, &error.to_json())
}

pub(super) fn failure_response(failure: Failure) -> Response {
    match failure {
        Failure::Scim(error) => error_response(&error),
        Failure::RateLimited { retry_after } => {
            let error = ScimError::new(429, None, "too many SCIM requests for this company");
            let mut response = error_response(&error);
            if let Ok(value) = HeaderValue::from_str(&retry_after.max(1).to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
            response
        }
        Failure::Server(server) => {
            let unavailable = server.is_unavailable();
            tracing::error!(
                error = &server as &(dyn std::error::Error + 'static),
                "server failure"
            );
            let status = if unavailable { 503 } else { 500 };
            let mut response =
                error_response(&ScimError::new(status, None, server.public_message()));
            if unavailable {
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            }
            response
        }
    }
}

pub(super) fn reply_response(reply: ScimReply) -> Response {
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::OK);
    let mut response = match &reply.body {
        Some(body) => scim_json(status, body),
        None => (status, Body::empty()).into_response(),
    };
    let headers = response.headers_mut();
    if let Some(value) = reply.location.and_then(|l| HeaderValue::from_str(&l).ok()) {
        headers.insert(header::LOCATION, value);
    }
    if let Some(value) = reply.etag.and_then(|e| HeaderValue::from_str(&e).ok()) {
        headers.insert(header::ETAG, value);
    }
    response
}

pub(super) fn answer(outcome: Result<ScimReply, Failure>) -> Response {
    match outcome {
        Ok(reply) => reply_response(reply),
        Err(failure) => failure_response(failure),
    }
}

pub(super) async fn caller(
    services: &Services,
    headers: &HeaderMap,
) -> Result<Provisioner, Failure> {
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok());
    scim::authenticate(services, authorization, &base(services)).await
}

/// The query's parameters; a malformed one (a `startIndex` past i64, say) is a SCIM 400.
pub(super) fn parsed_query<T: serde::de::DeserializeOwned + Default>(
    raw: Option<&str>,
) -> Result<T, Box<Response>> {
    match raw {
        None => Ok(T::default()),
        Some(raw) => serde_urlencoded::from_str(raw).map_err(|_| {
            Box::new(error_response(&ScimError::bad_request(
                crate::domain::scim::ScimType::InvalidValue,
                "a query parameter is malformed",
            )))
        }),
    }
}

pub(super) fn if_match(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::IF_MATCH)
        .and_then(|value| value.to_str().ok())
}

pub(super) fn too_large() -> Response {
    error_response(&ScimError::new(
        413,
        None,
        "the request is larger than 1048576 bytes",
    ))
}
