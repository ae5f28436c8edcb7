//! `POST /v0/token` (and `/oauth2/v0/token`), `GET /v0/token/jwks`.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use http::{header, HeaderMap, HeaderValue};
use serde::Serialize;

use super::body::read_params;
use super::params::BodyDenial;
use crate::grants::{self, GrantError, IssuedTokens};
use crate::services::Services;

/// The success body of contract part 2.
#[derive(Serialize, utoipa::ToSchema)]
pub struct TokenResponse {
    pub access_token: String,
    pub token_type: &'static str,
    pub expires_in: i64,
    pub scope: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// Despite its name, as in Concur's responses: the Unix time (seconds) at which the
    /// refresh token expires (contract part 2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refresh_expires_in: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id_token: Option<String>,
    pub geolocation: String,
    pub id: String,
    pub principal_type: &'static str,
}

impl TokenResponse {
    pub fn new(issued: IssuedTokens, services: &Services) -> Self {
        let geolocation = issued
            .refresh
            .as_ref()
            .map_or_else(|| services.geolocation().clone(), |r| r.geolocation.clone());
        Self {
            expires_in: issued.access.expires_at - issued.access.issued_at,
            scope: issued.access.scopes.to_string(),
            refresh_expires_in: issued.refresh.as_ref().map(|r| r.expires_at),
            refresh_token: issued.refresh.map(|r| r.token.expose().to_owned()),
            id_token: issued.id_token,
            geolocation: geolocation.to_string(),
            id: issued.access.subject.hyphenated().to_string(),
            principal_type: issued.access.principal_type.as_str(),
            access_token: issued.access_token,
            token_type: "Bearer",
        }
    }
}

/// What the token endpoint answers instead of tokens.
#[derive(Debug)]
pub enum TokenEndpointError {
    /// The body is not a readable set of parameters.
    Body(BodyDenial),
    /// The grant refused, or the server failed.
    Grant(GrantError),
}

impl From<BodyDenial> for TokenEndpointError {
    fn from(denial: BodyDenial) -> Self {
        Self::Body(denial)
    }
}

impl From<GrantError> for TokenEndpointError {
    fn from(error: GrantError) -> Self {
        Self::Grant(error)
    }
}

impl IntoResponse for TokenEndpointError {
    fn into_response(self) -> Response {
        match self {
            Self::Body(denial) => denial.into_response(),
            Self::Grant(GrantError::Denied(denial)) => denial.into_response(),
            Self::Grant(GrantError::Server(error)) => error.into_response(),
        }
    }
}

pub async fn token(
    State(services): State<Arc<Services>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<TokenResponse>, TokenEndpointError> {
    let params = read_params(&headers, body).await?;
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    let issued = grants::token_grant(&services, &params, authorization).await?;
    Ok(Json(TokenResponse::new(issued, &services)))
}

/// Public keys change rarely and are safe to cache for a few minutes.
pub async fn jwks(State(services): State<Arc<Services>>) -> Response {
    let mut response = Json(services.codec.keys().jwks()).into_response();
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=300"),
    );
    response
}
