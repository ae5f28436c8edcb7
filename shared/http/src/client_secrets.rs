//! Concur's secrets API for the app itself: `GET` and `POST
//! /app-mgmt/v4/apps/{client_id}/secrets`, `DELETE
//! /app-mgmt/v4/apps/{client_id}/secrets/{secret_id}`, called with an application token
//! (`client_credentials`) of that app. The bodies have the shapes `tokenctl clients secrets`
//! prints (docs/decisions.md, Client secrets).
//!
//! | refusal | status | `error` |
//! |---|---|---|
//! | no, bad, expired or revoked token | 401 (+ `WWW-Authenticate: Bearer`) | `invalid_token` |
//! | `Authorization: DPoP`: bad token or proof (RFC 9449 §7.1) | 401 (+ `WWW-Authenticate: DPoP`) | `invalid_token`, `invalid_dpop_proof` |
//! | a user's token, another app's, or a disabled app's | 403 | `access_denied` |
//! | a token of the app without `app-mgmt.secrets` in its scope | 403 (+ `WWW-Authenticate`) | `insufficient_scope` |
//! | an unreadable body, or an expiry out of range | 400 | `invalid_request` |
//! | no such secret (or client) | 404 | `not_found` |
//! | a sixth secret, or the last unexpired one revoked | 409 | `conflict` |

use std::sync::Arc;

use axum::body::Body;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::Json;
use http::{header, HeaderMap, HeaderValue, StatusCode};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::bearer::bearer_refusal;
use super::body::MAX_BODY_BYTES;
use super::dpop::{dpop_refusal, with_nonce, Dpop};
use super::error_response::{http_error_response, OAuthErrorBody, ServerErrorBody};
use super::params::BodyDenial;
use crate::auth::dpop::DpopRequest;
use crate::domain::{ListedSecret, SecretId, SecretsRefusal};
use crate::error_response::ErrorResponse;
use crate::flows::client_secrets::{
    add_secret, authorize_app, list_secrets_by, revoke_secret_by, AppDenial, AuthorizedApp,
    SecretsDenial,
};
use crate::services::Services;

/// One secret as listed: never the secret or its digest. Times are Unix seconds.
#[derive(Serialize, ToSchema)]
pub struct SecretBody {
    pub secret_id: String,
    pub created: i64,
    /// When it stops working; `null`: never.
    pub expires: Option<i64>,
    /// Recorded at most once an hour; `null`: not used yet.
    pub last_used: Option<i64>,
}

impl From<ListedSecret> for SecretBody {
    fn from(secret: ListedSecret) -> Self {
        Self {
            secret_id: secret.secret_id.to_string(),
            created: secret.created,
            expires: secret.expires,
            last_used: secret.last_used,
        }
    }
}

/// A new secret, shown this once.
#[derive(Serialize, ToSchema)]
pub struct AddedSecretBody {
    pub secret_id: String,
    pub client_secret: String,
}

/// The optional body of `POST`: without it (or without the field) the secret expires after 90
/// days (`APP_ADDED_DEFAULT_EXPIRES_IN_DAYS`).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AddSecretRequest {
    /// Days until the new secret stops working, 1 to 365 (default 90).
    #[schema(minimum = 1, maximum = 365)]
    pub expires_in_days: Option<u32>,
}

impl ErrorResponse for AppDenial {
    fn into_response(self) -> Response {
        match self {
            Self::Bearer(denial) => bearer_refusal("app-mgmt", denial, false),
            Self::Dpop(denial) => dpop_refusal(&denial, "app-mgmt"),
            Self::NotAnApplicationToken => http_error_response(
                StatusCode::FORBIDDEN,
                "access_denied",
                "Only the application itself, with an application token, manages its secrets.",
            ),
            Self::AnotherApp => http_error_response(
                StatusCode::FORBIDDEN,
                "access_denied",
                "The token was issued to another application.",
            ),
            Self::Disabled => http_error_response(
                StatusCode::FORBIDDEN,
                "access_denied",
                "The application is disabled.",
            ),
            // RFC 6750 §3.1: the scope the call needs, named in the challenge.
            Self::InsufficientScope => {
                let mut response = http_error_response(
                    StatusCode::FORBIDDEN,
                    "insufficient_scope",
                    "Ask client_credentials for scope=app-mgmt.secrets to manage the secrets.",
                );
                response.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static(
                        r#"Bearer error="insufficient_scope", scope="app-mgmt.secrets""#,
                    ),
                );
                response
            }
        }
    }
}

impl ErrorResponse for SecretsDenial {
    fn into_response(self) -> Response {
        let (status, error, description) = match self {
            Self::UnknownClient => (StatusCode::NOT_FOUND, "not_found", "no such application"),
            Self::Refused(SecretsRefusal::UnknownSecret) => (
                StatusCode::NOT_FOUND,
                "not_found",
                "the application has no secret with that id",
            ),
            Self::Refused(SecretsRefusal::TooMany) => (
                StatusCode::CONFLICT,
                "conflict",
                "the application already has 5 secrets, the most it may hold; revoke one first",
            ),
            Self::Refused(SecretsRefusal::LastSecret) => (
                StatusCode::CONFLICT,
                "conflict",
                "that is the application's last unexpired secret; add another one first",
            ),
            // The API's callers are apps, whose limit this is (tokenctl words its own).
            Self::InvalidExpiry(_) => (
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "expires_in_days must be between 1 and 365",
            ),
        };
        http_error_response(status, error, description)
    }
}

/// The app, when the caller holds an application token of the app in the path (with its
/// proof, for a DPoP-bound one).
async fn authorized(
    services: &Services,
    headers: &HeaderMap,
    dpop: &DpopRequest,
    client_id: Result<Path<String>, PathRejection>,
) -> Result<AuthorizedApp, Response> {
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    let client_id = client_id.map(|Path(id)| id).unwrap_or_default();
    let app = authorize_app(services, authorization, dpop, &client_id)
        .await
        .map_err(ErrorResponse::into_response)?;
    tracing::Span::current().record("client_id", tracing::field::display(app.id));
    Ok(app)
}

/// The app's secrets, oldest first.
#[utoipa::path(
    get,
    path = "/app-mgmt/v4/apps/{client_id}/secrets",
    tag = "app-mgmt",
    operation_id = "list_client_secrets",
    security(("bearer" = [])),
    params(
        ("client_id" = String, Path, description = "The app's client_id, the token's own"),
        ("DPoP" = Option<String>, Header, description = "With `Authorization: DPoP <token>`: a DPoP proof (RFC 9449) with the token's `ath`"),
    ),
    responses(
        (status = 200, body = [SecretBody]),
        (status = 401, description = "No, bad, expired or revoked bearer token", body = OAuthErrorBody,
            headers(("WWW-Authenticate" = String))),
        (status = 403, description = "A user's token, another app's, or a disabled app's", body = OAuthErrorBody),
        (status = 404, description = "No such application", body = OAuthErrorBody),
        (status = 500, body = ServerErrorBody),
        (status = 503, body = ServerErrorBody),
    ),
)]
pub async fn list(
    State(services): State<Arc<Services>>,
    client_id: Result<Path<String>, PathRejection>,
    Dpop(dpop): Dpop,
    headers: HeaderMap,
) -> Response {
    let app = match authorized(&services, &headers, &dpop, client_id).await {
        Ok(app) => app,
        Err(response) => return with_nonce(&services, response).await,
    };
    match list_secrets_by(&services.ctx, &app.id, app.caller()).await {
        Ok(secrets) => {
            let body: Vec<SecretBody> = secrets.into_iter().map(SecretBody::from).collect();
            Json(body).into_response()
        }
        Err(error) => error.into_response(),
    }
}

/// Adds a secret (at most 5 at once); the answer is the only place it is ever shown.
#[utoipa::path(
    post,
    path = "/app-mgmt/v4/apps/{client_id}/secrets",
    tag = "app-mgmt",
    operation_id = "add_client_secret",
    security(("bearer" = [])),
    params(
        ("client_id" = String, Path, description = "The app's client_id, the token's own"),
        ("DPoP" = Option<String>, Header, description = "With `Authorization: DPoP <token>`: a DPoP proof (RFC 9449) with the token's `ath`"),
    ),
    request_body(content = Option<AddSecretRequest>, content_type = "application/json"),
    responses(
        (status = 201, body = AddedSecretBody),
        (status = 400, description = "An unreadable body, or an expiry out of range", body = OAuthErrorBody),
        (status = 401, description = "No, bad, expired or revoked bearer token", body = OAuthErrorBody,
            headers(("WWW-Authenticate" = String))),
        (status = 403, description = "A user's token, another app's, or a disabled app's", body = OAuthErrorBody),
        (status = 404, description = "No such application", body = OAuthErrorBody),
        (status = 409, description = "The app has 5 secrets already", body = OAuthErrorBody),
        (status = 413, body = OAuthErrorBody),
        (status = 500, body = ServerErrorBody),
        (status = 503, body = ServerErrorBody),
    ),
)]
pub async fn add(
    State(services): State<Arc<Services>>,
    client_id: Result<Path<String>, PathRejection>,
    Dpop(dpop): Dpop,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let app = match authorized(&services, &headers, &dpop, client_id).await {
        Ok(app) => app,
        Err(response) => return with_nonce(&services, response).await,
    };
    let Ok(body) = axum::body::to_bytes(body, MAX_BODY_BYTES).await else {
        return BodyDenial::TooLarge.into_response();
    };
    let expires_in_days = if body.iter().all(u8::is_ascii_whitespace) {
        None
    } else {
        // An object only: serde would also read the struct from an array.
        let request = serde_json::from_slice::<serde_json::Value>(&body)
            .ok()
            .filter(serde_json::Value::is_object)
            .and_then(|object| serde_json::from_value::<AddSecretRequest>(object).ok());
        match request {
            Some(request) => request.expires_in_days,
            None => {
                return http_error_response(
                    StatusCode::BAD_REQUEST,
                    "invalid_request",
                    "the body must be a JSON object, with at most expires_in_days (1 to 365)",
                )
            }
        }
    };
    match add_secret(&services.ctx, &app.id, expires_in_days, app.caller()).await {
        Ok(added) => {
            let body = AddedSecretBody {
                secret_id: added.secret_id.to_string(),
                client_secret: added.client_secret.expose().to_owned(),
            };
            (StatusCode::CREATED, Json(body)).into_response()
        }
        Err(error) => error.into_response(),
    }
}

/// Revokes a secret; the last unexpired one stays (409).
#[utoipa::path(
    delete,
    path = "/app-mgmt/v4/apps/{client_id}/secrets/{secret_id}",
    tag = "app-mgmt",
    operation_id = "revoke_client_secret",
    security(("bearer" = [])),
    params(
        ("client_id" = String, Path, description = "The app's client_id, the token's own"),
        ("secret_id" = String, Path, description = "A secret_id from the listing"),
        ("DPoP" = Option<String>, Header, description = "With `Authorization: DPoP <token>`: a DPoP proof (RFC 9449) with the token's `ath`"),
    ),
    responses(
        (status = 204, description = "Revoked"),
        (status = 401, description = "No, bad, expired or revoked bearer token", body = OAuthErrorBody,
            headers(("WWW-Authenticate" = String))),
        (status = 403, description = "A user's token, another app's, or a disabled app's", body = OAuthErrorBody),
        (status = 404, description = "No such secret", body = OAuthErrorBody),
        (status = 409, description = "The app's last unexpired secret", body = OAuthErrorBody),
        (status = 500, body = ServerErrorBody),
        (status = 503, body = ServerErrorBody),
    ),
)]
pub async fn revoke(
    State(services): State<Arc<Services>>,
    ids: Result<Path<(String, String)>, PathRejection>,
    Dpop(dpop): Dpop,
    headers: HeaderMap,
) -> Response {
    let (client_id, secret_id) = match ids {
        Ok(Path((client_id, secret_id))) => (Ok(Path(client_id)), secret_id),
        Err(rejection) => (Err(rejection), String::new()),
    };
    let app = match authorized(&services, &headers, &dpop, client_id).await {
        Ok(app) => app,
        Err(response) => return with_nonce(&services, response).await,
    };
    let Ok(secret_id) = SecretId::parse(&secret_id) else {
        return SecretsDenial::Refused(SecretsRefusal::UnknownSecret).into_response();
    };
    match revoke_secret_by(&services.ctx, &app.id, &secret_id, app.caller()).await {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(error) => error.into_response(),
    }
}
