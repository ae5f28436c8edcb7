//! `DELETE /app-mgmt/v0/connections` (Concur; docs/decisions.md, "Revocation, introspection and
//! connections"): the user signs the app out everywhere. Revokes every family the bearer token's
//! principal holds with the token's client.
//!
//! | refusal | status | `code` | `error` |
//! |---|---|---|---|
//! | no, bad, expired or revoked token | 401 (+ `WWW-Authenticate: Bearer`) | 401 | `invalid_token` |
//! | an application token (no user, no connection) | 403 | 403 | `access_denied` |

use std::sync::Arc;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use http::{header, HeaderMap, HeaderValue, StatusCode};

use super::error_response::{http_error_response, OAuthErrorBody, ServerErrorBody};
use crate::flows::revocation::{revoke_connection, ConnectionDenial, ConnectionError};
use crate::grants::BearerDenial;
use crate::services::Services;

impl IntoResponse for ConnectionDenial {
    fn into_response(self) -> Response {
        match self {
            Self::Bearer(denial) => {
                tracing::info!(%denial, "connections: bearer token refused");
                let mut response = http_error_response(
                    StatusCode::UNAUTHORIZED,
                    "invalid_token",
                    "The bearer access token is missing, invalid or expired.",
                );
                // RFC 6750 §3.1: without bearer credentials the challenge carries no error.
                let challenge = match denial {
                    BearerDenial::Missing => "Bearer realm=\"connections\"",
                    _ => "Bearer realm=\"connections\", error=\"invalid_token\"",
                };
                response.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static(challenge),
                );
                response
            }
            Self::ApplicationToken => http_error_response(
                StatusCode::FORBIDDEN,
                "access_denied",
                "An application token has no user connection to remove.",
            ),
        }
    }
}

/// Revokes every token family of the token's user (or company) with the token's client.
#[utoipa::path(
    delete,
    path = "/app-mgmt/v0/connections",
    tag = "token",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Every family of this user with this client is revoked"),
        (status = 401, description = "No, bad, expired or revoked bearer token", body = OAuthErrorBody),
        (status = 403, description = "An application token", body = OAuthErrorBody),
        (status = 500, body = ServerErrorBody),
        (status = 503, body = ServerErrorBody),
    ),
)]
pub async fn delete_connections(
    State(services): State<Arc<Services>>,
    headers: HeaderMap,
) -> Result<Response, ConnectionError> {
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    revoke_connection(&services, authorization).await?;
    Ok(StatusCode::OK.into_response())
}
