//! `DELETE /app-mgmt/v0/connections` (Concur; docs/decisions.md, "Revocation, introspection and
//! connections"): the user signs the app out everywhere. Revokes every family the bearer token's
//! principal holds with the token's client.
//!
//! | refusal | status | `code` | `error` |
//! |---|---|---|---|
//! | no, bad, expired or revoked token | 401 (+ `WWW-Authenticate: Bearer`) | 401 | `invalid_token` |
//! | an application token (no user, no connection) | 403 | 403 | `access_denied` |
//! | `Authorization: DPoP`: bad token or proof (RFC 9449 §7.1) | 401 (+ `WWW-Authenticate: DPoP`) | 401 | `invalid_token`, `invalid_dpop_proof` |

use std::sync::Arc;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use http::{header, HeaderMap, StatusCode};

use super::bearer::bearer_refusal;
use super::dpop::{dpop_refusal, with_nonce, Dpop};
use super::error_response::{http_error_response, OAuthErrorBody, ServerErrorBody};
use crate::error_response::ErrorResponse;

use crate::flows::revocation::{revoke_connection, ConnectionDenial, ConnectionError};
use crate::services::Services;

impl ErrorResponse for ConnectionDenial {
    fn into_response(self) -> Response {
        match self {
            Self::Dpop(denial) => dpop_refusal(&denial, "connections"),
            Self::Bearer(denial) => bearer_refusal("connections", denial, true),
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
    params(("DPoP" = Option<String>, Header, description = "With `Authorization: DPoP <token>`: a DPoP proof (RFC 9449) with the token's `ath`")),
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
    Dpop(dpop): Dpop,
    headers: HeaderMap,
) -> Response {
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    let answer: Result<Response, ConnectionError> =
        revoke_connection(&services, authorization, &dpop)
            .await
            .map(|()| StatusCode::OK.into_response());
    with_nonce(&services, answer.into_response()).await
}
