//! `POST /oauth2/v0/introspect` (RFC 7662; docs/decisions.md, "Revocation, introspection and
//! connections").

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use http::HeaderMap;
use serde::Serialize;
use utoipa::ToSchema;

use super::client_request::{answer_client_token_request, ClientRequestRefusals};
use super::error_response::{OAuthErrorBody, ServerErrorBody};
use crate::flows::introspection::{introspect as introspect_token, ActiveToken};
use crate::jwt::{Audience, Confirmation};
use crate::requests::PresentedTokenRequest;
use crate::services::Services;

/// RFC 7662 §2.2. An inactive token is `{"active": false}` and nothing else.
#[derive(Debug, Serialize, ToSchema)]
pub struct IntrospectionResponse {
    pub active: bool,
    /// Space-separated scopes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// The principal's UUID (the client's own for application tokens).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sub: Option<String>,
    /// Unix time at which the token expires.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exp: Option<i64>,
    /// Unix time at which the token was issued.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iat: Option<i64>,
    /// `Bearer` or `DPoP` for access tokens, `refresh_token` for refresh tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_type: Option<&'static str>,
    /// `user`, `company` or `application`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub principal_type: Option<&'static str>,
    /// RFC 9449 §6.2: the DPoP key a bound access or refresh token is bound to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cnf: Option<Confirmation>,
    /// Whom an access token is for, as its `aud` claim: this deployment, or the resource(s) it
    /// was asked for (RFC 8707; a string for one, an array for several). For a refresh token,
    /// the resources its family was granted, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub aud: Option<Audience>,
}

impl From<Option<ActiveToken>> for IntrospectionResponse {
    fn from(active: Option<ActiveToken>) -> Self {
        match active {
            None => Self {
                active: false,
                scope: None,
                client_id: None,
                sub: None,
                exp: None,
                iat: None,
                token_type: None,
                principal_type: None,
                cnf: None,
                aud: None,
            },
            Some(token) => Self {
                active: true,
                scope: Some(token.scopes.to_string()),
                client_id: Some(token.client_id),
                sub: Some(token.subject),
                exp: Some(token.expires_at),
                iat: Some(token.issued_at),
                token_type: Some(token.token_type),
                principal_type: Some(token.principal_type.as_str()),
                cnf: token.jkt.map(|jkt| Confirmation { jkt }),
                aud: token.audience,
            },
        }
    }
}

/// Says whether a token issued to the calling client is active, and what it grants.
#[utoipa::path(
    post,
    path = "/oauth2/v0/introspect",
    tag = "token",
    request_body(content(
        (PresentedTokenRequest = "application/x-www-form-urlencoded"),
        (PresentedTokenRequest = "application/json"),
    )),
    responses(
        (status = 200, description = "The token's state; another client's token reads inactive", body = IntrospectionResponse),
        (status = 400, description = "Malformed body (135), a missing client_id / client_secret (62 / 63), conflicting client credentials (115), or no token (400)", body = OAuthErrorBody),
        (status = 429, description = "slow_down, catalogue code 145: a client ID metadata document to fetch past the source address's RATE_LIMIT_DOCUMENT_FETCHES_PER_HOUR; `Retry-After` in seconds", body = OAuthErrorBody, headers(("Retry-After" = i64))),
        ClientRequestRefusals,
        (status = 503, body = ServerErrorBody),
    ),
)]
pub async fn introspect(
    State(services): State<Arc<Services>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    match answer_client_token_request(&services, &headers, body, introspect_token).await {
        Ok(active) => Json(IntrospectionResponse::from(active)).into_response(),
        Err(refused) => refused,
    }
}
