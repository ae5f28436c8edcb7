//! Dynamic client registration (RFC 7591) at `POST /oauth2/v0/register`, and its management
//! (RFC 7592) at `GET`, `PUT` and `DELETE /oauth2/v0/register/{client_id}`.
//!
//! | refusal | status | `error` |
//! |---|---|---|
//! | `DYNAMIC_REGISTRATION=off` | 404 | `not_found` |
//! | missing or wrong initial or registration access token | 401 (+ `WWW-Authenticate: Bearer`) | `invalid_token` |
//! | bad redirect URIs | 400 | `invalid_redirect_uri` |
//! | any other bad metadata, or an unreadable body | 400 | `invalid_client_metadata` |
//! | too many registrations from the address | 429 (+ `Retry-After`) | `slow_down` |

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::Json;
use http::{header, HeaderMap, HeaderValue, StatusCode};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::body::MAX_BODY_BYTES;
use super::error_response::{http_error_response, OAuthErrorBody, ServerErrorBody};
use super::source_address::SourceAddress;
use crate::domain::ClientMetadata;
use crate::error_response::ErrorResponse;
use crate::errors::GrantDenial;
use crate::flows::registration::{self, RegistrationDenial, RegistrationResponse};
use crate::services::Services;
use token_core::config::RegistrationMode;

/// The registration request (RFC 7591 §2); members not listed are ignored.
#[derive(Deserialize, ToSchema)]
#[allow(dead_code)]
pub struct RegistrationRequestBody {
    /// Required: `https`, or `http` on `127.0.0.1`, `[::1]` or `localhost` (any port); no
    /// fragment, no wildcard.
    pub redirect_uris: Vec<String>,
    pub client_name: Option<String>,
    pub client_uri: Option<String>,
    /// Kept and echoed, never loaded: the consent page shows no image of a client nobody
    /// verified.
    pub logo_uri: Option<String>,
    /// `https`: linked from the consent page.
    pub policy_uri: Option<String>,
    /// `https`: linked from the consent page.
    pub tos_uri: Option<String>,
    /// `authorization_code` (the default) and `refresh_token`.
    pub grant_types: Option<Vec<String>>,
    /// `code` only.
    pub response_types: Option<Vec<String>>,
    /// `none` (public client), `client_secret_basic` (the default), `client_secret_post`, or
    /// `private_key_jwt` with `jwks`.
    pub token_endpoint_auth_method: Option<String>,
    /// Within `REGISTRATION_SCOPES`, which is also the default.
    pub scope: Option<String>,
    #[schema(value_type = Option<Object>)]
    pub jwks: Option<serde_json::Value>,
    /// For `private_key_jwt`, instead of `jwks`: where the client publishes its keys (`https`),
    /// read when an assertion is verified, kept per `Cache-Control` (up to a day) and read again
    /// at most once a minute for an unknown `kid`.
    pub jwks_uri: Option<String>,
    /// RFC 9126 §6: `true` refuses this client's authorization requests that were not pushed
    /// (`POST /oauth2/v0/par`) with code 175.
    pub require_pushed_authorization_requests: Option<bool>,
    /// Where RP-initiated logout (`/oauth2/v0/logout`) may send the browser back: `https`, or
    /// `http` on loopback; matched exactly.
    pub post_logout_redirect_uris: Option<Vec<String>>,
    /// Where a logout token is POSTed when a sign-in session the client took part in ends
    /// (OpenID Connect Back-Channel Logout 1.0): `https`, or `http` on loopback; delivered only
    /// to public addresses.
    pub backchannel_logout_uri: Option<String>,
    /// Echoed; every logout token carries `sid`.
    pub backchannel_logout_session_required: Option<bool>,
}

/// The registered metadata (RFC 7591 §3.2.1); the client secret only in the answer that
/// issues it.
#[derive(Serialize, ToSchema)]
#[allow(dead_code)]
pub struct RegistrationResponseBody {
    pub client_id: String,
    pub client_id_issued_at: i64,
    /// For `client_secret_basic` and `client_secret_post` clients, at registration only.
    pub client_secret: Option<String>,
    /// `0`: the secret does not expire.
    pub client_secret_expires_at: Option<i64>,
    /// Authorizes the management calls. In every answer with the metadata (RFC 7592 §3): a
    /// read or replace rotates it, the token it was called with stops working (401) and this
    /// one is the client's token from now on.
    pub registration_access_token: Option<String>,
    pub registration_client_uri: String,
    pub redirect_uris: Vec<String>,
    pub client_name: String,
    pub client_uri: Option<String>,
    pub logo_uri: Option<String>,
    pub policy_uri: Option<String>,
    pub tos_uri: Option<String>,
    pub grant_types: Vec<String>,
    pub response_types: Vec<String>,
    pub token_endpoint_auth_method: String,
    pub scope: String,
    #[schema(value_type = Option<Object>)]
    pub jwks: Option<serde_json::Value>,
    pub jwks_uri: Option<String>,
    pub require_pushed_authorization_requests: bool,
    pub post_logout_redirect_uris: Option<Vec<String>>,
    pub backchannel_logout_uri: Option<String>,
    pub backchannel_logout_session_required: Option<bool>,
}

impl ErrorResponse for RegistrationDenial {
    fn into_response(self) -> Response {
        match self {
            Self::Off => http_error_response(
                StatusCode::NOT_FOUND,
                "not_found",
                "dynamic client registration is not offered",
            ),
            Self::InvalidToken => {
                let mut response = http_error_response(
                    StatusCode::UNAUTHORIZED,
                    "invalid_token",
                    "a valid access token is required (Authorization: Bearer)",
                );
                response.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Bearer error=\"invalid_token\""),
                );
                response
            }
            Self::Invalid(error) => (
                StatusCode::BAD_REQUEST,
                // RFC 7591 §3.2.2's body, with `code` as every error outside the catalogue has
                // it: the HTTP status.
                Json(serde_json::json!({
                    "error": error.kind.as_str(),
                    "error_description": error.description,
                    "code": StatusCode::BAD_REQUEST.as_u16(),
                })),
            )
                .into_response(),
            Self::RateLimited(exceeded) => GrantDenial::from(exceeded).into_response(),
        }
    }
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// The JSON object of the body, read as metadata; anything else is `invalid_client_metadata`.
async fn metadata(body: Body) -> Result<ClientMetadata, Response> {
    let unreadable = || {
        http_error_response(
            StatusCode::BAD_REQUEST,
            "invalid_client_metadata",
            "the body must be a JSON object of client metadata (RFC 7591)",
        )
    };
    let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY_BYTES).await else {
        return Err(unreadable());
    };
    serde_json::from_slice::<serde_json::Value>(&bytes)
        .ok()
        .filter(serde_json::Value::is_object)
        .and_then(|object| serde_json::from_value::<ClientMetadata>(object).ok())
        .ok_or_else(unreadable)
}

fn answer(status: StatusCode, body: RegistrationResponse) -> Response {
    let mut response = (status, Json(body)).into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// Registers a client (RFC 7591).
#[utoipa::path(
    post,
    path = "/oauth2/v0/register",
    tag = "registration",
    operation_id = "register_client",
    request_body(content = RegistrationRequestBody, content_type = "application/json"),
    responses(
        (status = 201, body = RegistrationResponseBody),
        (status = 400, description = "invalid_redirect_uri or invalid_client_metadata", body = OAuthErrorBody),
        (status = 401, description = "DYNAMIC_REGISTRATION=token: a missing or wrong initial access token", body = OAuthErrorBody,
            headers(("WWW-Authenticate" = String))),
        (status = 404, description = "DYNAMIC_REGISTRATION=off", body = OAuthErrorBody),
        (status = 429, description = "RATE_LIMIT_REGISTRATIONS_PER_HOUR", body = OAuthErrorBody,
            headers(("Retry-After" = i64))),
        (status = 500, body = ServerErrorBody),
        (status = 503, body = ServerErrorBody),
    ),
)]
pub async fn register(
    State(services): State<Arc<Services>>,
    SourceAddress(source): SourceAddress,
    headers: HeaderMap,
    body: Body,
) -> Response {
    if services.policy.registration.mode == RegistrationMode::Off {
        return RegistrationDenial::Off.into_response();
    }
    let metadata = match metadata(body).await {
        Ok(metadata) => metadata,
        Err(response) => return response,
    };
    let base = services.geolocation().as_str().to_owned();
    match registration::register(&services, bearer(&headers), source, metadata, &base).await {
        Ok(body) => answer(StatusCode::CREATED, body),
        Err(error) => error.into_response(),
    }
}

/// The client's registration (RFC 7592 §2.1), with a new registration access token.
#[utoipa::path(
    get,
    path = "/oauth2/v0/register/{client_id}",
    tag = "registration",
    operation_id = "read_client_registration",
    security(("bearer" = [])),
    params(("client_id" = String, Path, description = "The registered client_id")),
    responses(
        (status = 200, body = RegistrationResponseBody),
        (status = 401, description = "A missing or wrong registration access token, or one already rotated by an earlier read or replace", body = OAuthErrorBody,
            headers(("WWW-Authenticate" = String))),
        (status = 404, description = "DYNAMIC_REGISTRATION=off", body = OAuthErrorBody),
        (status = 500, body = ServerErrorBody),
        (status = 503, body = ServerErrorBody),
    ),
)]
pub async fn read(
    State(services): State<Arc<Services>>,
    Path(client_id): Path<String>,
    headers: HeaderMap,
) -> Response {
    let base = services.geolocation().as_str().to_owned();
    match registration::read(&services, &client_id, bearer(&headers), &base).await {
        Ok(body) => answer(StatusCode::OK, body),
        Err(error) => error.into_response(),
    }
}

/// Replaces the client's metadata (RFC 7592 §2.2), checked as at registration; the answer
/// carries a new registration access token.
#[utoipa::path(
    put,
    path = "/oauth2/v0/register/{client_id}",
    tag = "registration",
    operation_id = "update_client_registration",
    security(("bearer" = [])),
    params(("client_id" = String, Path, description = "The registered client_id")),
    request_body(content = RegistrationRequestBody, content_type = "application/json"),
    responses(
        (status = 200, body = RegistrationResponseBody),
        (status = 400, description = "invalid_redirect_uri or invalid_client_metadata", body = OAuthErrorBody),
        (status = 401, description = "A missing or wrong registration access token, or one already rotated by an earlier read or replace", body = OAuthErrorBody,
            headers(("WWW-Authenticate" = String))),
        (status = 404, description = "DYNAMIC_REGISTRATION=off", body = OAuthErrorBody),
        (status = 500, body = ServerErrorBody),
        (status = 503, body = ServerErrorBody),
    ),
)]
pub async fn update(
    State(services): State<Arc<Services>>,
    Path(client_id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    if services.policy.registration.mode == RegistrationMode::Off {
        return RegistrationDenial::Off.into_response();
    }
    let metadata = match metadata(body).await {
        Ok(metadata) => metadata,
        Err(response) => return response,
    };
    let base = services.geolocation().as_str().to_owned();
    match registration::update(&services, &client_id, bearer(&headers), metadata, &base).await {
        Ok(body) => answer(StatusCode::OK, body),
        Err(error) => error.into_response(),
    }
}

/// Deletes the registration (RFC 7592 §2.3): the client is disabled, its families revoked.
#[utoipa::path(
    delete,
    path = "/oauth2/v0/register/{client_id}",
    tag = "registration",
    operation_id = "delete_client_registration",
    security(("bearer" = [])),
    params(("client_id" = String, Path, description = "The registered client_id")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 401, description = "A missing or wrong registration access token, or one already rotated by an earlier read or replace", body = OAuthErrorBody,
            headers(("WWW-Authenticate" = String))),
        (status = 404, description = "DYNAMIC_REGISTRATION=off", body = OAuthErrorBody),
        (status = 500, body = ServerErrorBody),
        (status = 503, body = ServerErrorBody),
    ),
)]
pub async fn delete(
    State(services): State<Arc<Services>>,
    Path(client_id): Path<String>,
    headers: HeaderMap,
) -> Response {
    match registration::delete(&services, &client_id, bearer(&headers)).await {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(error) => error.into_response(),
    }
}
