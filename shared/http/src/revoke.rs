//! `POST /oauth2/v0/revoke` (RFC 7009; docs/decisions.md, "Revocation, introspection and
//! connections"): 200 with an empty body whether or not anything was revoked, so that a client
//! learns nothing about tokens that are not its own.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode};

use super::client_request::{answer_client_token_request, ClientRequestRefusals};
use super::error_response::{OAuthErrorBody, ServerErrorBody};
use crate::flows::revocation::revoke_token;
use crate::requests::PresentedTokenRequest;
use crate::services::Services;

/// Revokes a refresh token's family, or one access token.
#[utoipa::path(
    post,
    path = "/oauth2/v0/revoke",
    tag = "token",
    request_body(content(
        (PresentedTokenRequest = "application/x-www-form-urlencoded"),
        (PresentedTokenRequest = "application/json"),
    )),
    responses(
        (status = 200, description = "Revoked, or nothing to revoke (unknown, expired or another client's token)"),
        (status = 400, description = "Malformed body (code 135), a missing client_id / client_secret (62 / 63), conflicting client credentials (115), or no token (400)", body = OAuthErrorBody),
        (status = 429, description = "slow_down, catalogue code 145: a client ID metadata document to fetch past the source address's RATE_LIMIT_DOCUMENT_FETCHES_PER_HOUR; `Retry-After` in seconds", body = OAuthErrorBody, headers(("Retry-After" = i64))),
        ClientRequestRefusals,
        (status = 503, body = ServerErrorBody),
    ),
)]
pub async fn revoke(
    State(services): State<Arc<Services>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    match answer_client_token_request(&services, &headers, body, revoke_token).await {
        Ok(revoked) => {
            tracing::debug!(?revoked, "revocation");
            StatusCode::OK.into_response()
        }
        Err(refused) => refused,
    }
}
