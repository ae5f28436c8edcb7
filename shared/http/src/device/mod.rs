//! `POST /oauth2/v0/device_authorization` (RFC 8628 §3.1-3.2; docs/decisions.md, "Device
//! authorization grant"): a device's request for a device code and a user code. The page where
//! the user enters it is `page`.

pub mod page;

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::response::Response;
use axum::Json;
use http::HeaderMap;
use serde::Serialize;
use utoipa::ToSchema;

use crate::auth::authenticate_client;
use crate::basic::{basic_credentials, with_basic_challenge};
use crate::body::read_pairs;
use crate::client_request::ClientRequestRefusals;
use crate::domain::DEVICE_CODE_TTL_SECONDS;
use crate::error_response::{ErrorResponse, OAuthErrorBody, ServerErrorBody};
use crate::errors::ErrorCode;
use crate::flows::device;
use crate::metadata::paths;
use crate::params::BodyDenial;
use crate::requests::{BasicCredentials, DeviceAuthorizationRequest};
use crate::services::Services;
use crate::token::{grant_refusal, TokenEndpointError};

/// RFC 8628 §3.2's response.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeviceAuthorizationBody {
    /// What the device polls the token endpoint with.
    pub device_code: String,
    /// What the user types on the verification page, `XXXX-XXXX`.
    pub user_code: String,
    /// The verification page.
    pub verification_uri: String,
    /// The verification page with the user code filled in (for a QR code).
    pub verification_uri_complete: String,
    /// Seconds the codes are valid: 600.
    pub expires_in: i64,
    /// Seconds between polls: 5.
    pub interval: i64,
}

/// Client authentication and errors as at the token endpoint.
#[utoipa::path(
    post,
    path = "/oauth2/v0/device_authorization",
    tag = "device",
    request_body(content(
        (DeviceAuthorizationRequest = "application/x-www-form-urlencoded"),
        (DeviceAuthorizationRequest = "application/json"),
    )),
    responses(
        (status = 200, body = DeviceAuthorizationBody),
        (status = 400, description = "Catalogue codes 54 (scope), 60 (the client may not use the grant), 62, 63, 135", body = OAuthErrorBody),
        (status = 429, description = "slow_down, catalogue code 140: too many requests by this client; `Retry-After` in seconds", body = OAuthErrorBody, headers(("Retry-After" = i64))),
        ClientRequestRefusals,
        (status = 503, description = "The store is unavailable", body = ServerErrorBody),
    ),
)]
pub async fn authorize_device(
    State(services): State<Arc<Services>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let basic = basic_credentials(&headers);
    let sent_basic = basic.is_some();
    let answer = start(&services, &headers, basic, body).await;
    with_basic_challenge(answer.into_response(), sent_basic)
}

async fn start(
    services: &Services,
    headers: &HeaderMap,
    basic: Option<Result<BasicCredentials, ErrorCode>>,
    body: Body,
) -> Result<Json<DeviceAuthorizationBody>, TokenEndpointError> {
    let pairs = read_pairs(headers, body).await?;
    let request = DeviceAuthorizationRequest::parse(pairs, basic).map_err(BodyDenial::Format)?;
    let client = authenticate_client(services, &request.client)
        .await
        .map_err(grant_refusal)?;
    tracing::Span::current().record("client_id", tracing::field::display(client.id));
    let codes = device::start(
        services,
        &client,
        (request.request.scope.as_deref(), &request.request.resources),
    )
    .await
    .map_err(grant_refusal)?;
    let verification_uri = format!("{}{}", services.geolocation().as_str(), paths::DEVICE);
    let user_code = codes.user_code.display();
    Ok(Json(DeviceAuthorizationBody {
        device_code: codes.device_code,
        verification_uri_complete: format!("{verification_uri}?user_code={user_code}"),
        verification_uri,
        user_code,
        expires_in: DEVICE_CODE_TTL_SECONDS,
        interval: codes.interval,
    }))
}
