//! The request shape that revocation (RFC 7009) and introspection (RFC 7662) share: a form or
//! JSON body with client authentication as at the token endpoint, `token` and an optional
//! `token_type_hint`. Checked in that order: the body, the client, then `token`.

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use http::{header, HeaderMap, StatusCode};

use super::body::read_params;
use super::error_response::http_error_response;
use super::params::BodyDenial;
use crate::domain::Client;
use crate::errors::ServerError;
use crate::flows::presented_token::TokenTypeHint;
use crate::grants::{authenticate_client, GrantError};
use crate::secrets::Secret;
use crate::services::Services;

/// An authenticated client and the token it presents.
#[derive(Debug)]
struct ClientTokenRequest {
    client: Client,
    token: Secret,
    hint: Option<TokenTypeHint>,
}

/// Why a revocation or introspection request was refused before its token was looked at.
#[derive(Debug)]
pub enum ClientTokenRequestError {
    Body(BodyDenial),
    /// Client authentication failed (the token endpoint's codes), or the store failed.
    Client(GrantError),
    /// No `token`: 400 `invalid_request` (RFC 7009 §2.1, RFC 7662 §2.1); outside the
    /// catalogue, so `code` is the status.
    TokenMissing,
}

impl IntoResponse for ClientTokenRequestError {
    fn into_response(self) -> Response {
        match self {
            Self::Body(denial) => denial.into_response(),
            Self::Client(GrantError::Denied(denial)) => denial.into_response(),
            Self::Client(GrantError::Server(error)) => error.into_response(),
            Self::TokenMissing => http_error_response(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "token was not supplied",
            ),
        }
    }
}

/// Reads the request, then answers it with `flow` (revocation or introspection) for the
/// authenticated client and the token it presents. A store failure inside `flow` is refused as
/// one during client authentication is.
pub async fn answer_client_token_request<T>(
    services: &Services,
    headers: &HeaderMap,
    body: Body,
    flow: impl AsyncFnOnce(&Services, &Client, &str, Option<TokenTypeHint>) -> Result<T, ServerError>,
) -> Result<T, ClientTokenRequestError> {
    let request = read_client_token_request(services, headers, body).await?;
    flow(
        services,
        &request.client,
        request.token.expose(),
        request.hint,
    )
    .await
    .map_err(|e| ClientTokenRequestError::Client(e.into()))
}

async fn read_client_token_request(
    services: &Services,
    headers: &HeaderMap,
    body: Body,
) -> Result<ClientTokenRequest, ClientTokenRequestError> {
    let params = read_params(headers, body)
        .await
        .map_err(ClientTokenRequestError::Body)?;
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    let client = authenticate_client(services, &params, authorization)
        .await
        .map_err(ClientTokenRequestError::Client)?;
    tracing::Span::current().record("client_id", tracing::field::display(client.id));
    let token = params
        .secret("token")
        .ok_or(ClientTokenRequestError::TokenMissing)?;
    Ok(ClientTokenRequest {
        client,
        token,
        hint: params.get("token_type_hint").and_then(TokenTypeHint::parse),
    })
}
