//! `POST /v0/token` (and `/oauth2/v0/token`), `GET /v0/token/jwks`.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use http::{header, HeaderMap, HeaderValue};
use serde::Serialize;

use super::basic::{basic_credentials, with_basic_challenge};
use super::body::read_pairs;
use super::dpop::{with_nonce, Dpop};
use super::error_response::{OAuthErrorBody, ServerErrorBody};
use super::params::BodyDenial;
use super::source_address::SourceAddress;
use crate::auth::dpop::DpopRequest;
use crate::domain::ID_JAG_TOKEN_TYPE;
use crate::error_response::ErrorResponse;
use crate::errors::{Denial, ErrorCode, GrantDenial, GrantError, Refusal, ServerError};
use crate::grants;
use crate::issuance::IssuedTokens;
use crate::requests::{BasicCredentials, TokenRequest};
use crate::services::Services;
use crate::signing::ring::JWKS_MAX_AGE_SECONDS;
use crate::signing::JwkSet;

/// The success body (docs/decisions.md, "Token formats").
#[derive(Serialize, utoipa::ToSchema)]
pub struct TokenResponse {
    pub access_token: String,
    /// `Bearer`, or `DPoP` when the request carried a valid DPoP proof (RFC 9449 §5); `N_A` for
    /// an identity assertion (RFC 8693 §2.2.1).
    pub token_type: &'static str,
    pub expires_in: i64,
    pub scope: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// Despite its name, as in Concur's responses: the Unix time (seconds) at which the
    /// refresh token expires (docs/decisions.md, "Token formats").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refresh_expires_in: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id_token: Option<String>,
    pub geolocation: String,
    pub id: String,
    pub principal_type: &'static str,
    /// RFC 8693 §2.2.1, for a token exchange: `urn:ietf:params:oauth:token-type:access_token`,
    /// or `urn:ietf:params:oauth:token-type:id-jag` for an identity assertion.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub issued_token_type: Option<&'static str>,
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
            issued_token_type: issued.issued_token_type,
            geolocation: geolocation.to_string(),
            id: issued.access.subject.hyphenated().to_string(),
            principal_type: issued.access.principal_type.as_str(),
            // RFC 8693 §2.2.1: an identity assertion is no access token (`N_A`); RFC 9449 §5: a
            // token bound to the proof's key.
            token_type: if issued.issued_token_type == Some(ID_JAG_TOKEN_TYPE) {
                "N_A"
            } else if issued.access.jkt.is_some() {
                "DPoP"
            } else {
                "Bearer"
            },
            access_token: issued.access_token,
        }
    }
}

/// Why the token endpoint (and the one-time password request, which answers in its shape)
/// refused a request.
#[derive(Debug)]
pub enum TokenEndpointDenial {
    /// The body is not a readable set of parameters.
    Body(BodyDenial),
    /// The request's shape (a repeated parameter, no or an unsupported `grant_type`), client
    /// authentication or the grant refused.
    Grant(GrantDenial),
}

impl Denial for TokenEndpointDenial {}

/// What the token endpoint answers instead of tokens.
pub type TokenEndpointError = Refusal<TokenEndpointDenial>;

impl From<BodyDenial> for TokenEndpointError {
    fn from(denial: BodyDenial) -> Self {
        Self::Denied(TokenEndpointDenial::Body(denial))
    }
}

/// A grant's refusal as the endpoint's (a function, not `From`: both are the protocol layer's
/// `Refusal`, which this crate cannot implement `From` between).
pub(crate) fn grant_refusal(error: GrantError) -> TokenEndpointError {
    error.map_denied(TokenEndpointDenial::Grant)
}

impl ErrorResponse for TokenEndpointDenial {
    fn into_response(self) -> Response {
        match self {
            Self::Body(denial) => denial.into_response(),
            Self::Grant(denial) => denial.into_response(),
        }
    }
}

/// Issues tokens for one of the grants.
// Served and documented at `/oauth2/v0/token` too (`http::token_routes`).
#[utoipa::path(post, path = "/v0/token", tag = "token",
    request_body(content(
        (TokenRequest = "application/x-www-form-urlencoded"),
        (TokenRequest = "application/json"),
    )),
    responses(
        (status = 200, body = TokenResponse),
        (status = 400, description = "invalid_request, invalid_grant, invalid_scope (catalogue codes; 16 with geolocation; 164-169 for token exchange and identity assertions); invalid_target (160); invalid_dpop_proof (150); use_dpop_nonce (151, with `DPoP-Nonce`)", body = OAuthErrorBody,
            headers(("DPoP-Nonce" = String, description = "With `DPOP_NONCE=on`: the nonce DPoP proofs must carry"))),
        (status = 401, description = "invalid_client (61, 64; 63 for a refused client assertion)", body = OAuthErrorBody),
        (status = 403, description = "access_denied (59; 180, 181; 182: the company turned identity assertions off)", body = OAuthErrorBody),
        (status = 413, body = OAuthErrorBody),
        (status = 429, description = "slow_down: a rate limit (140 requests per client, 141 password grants per source address, 143 wrong one-time passwords per address, 145 client ID metadata documents fetched per address); `Retry-After` in seconds",
            body = OAuthErrorBody, headers(("Retry-After" = i64))),
        (status = 500, body = ServerErrorBody),
        (status = 503, body = ServerErrorBody),
    ),
    params(("DPoP" = Option<String>, Header, description = "A DPoP proof (RFC 9449): the tokens are then bound to its key")))]
pub async fn token(
    State(services): State<Arc<Services>>,
    SourceAddress(source): SourceAddress,
    Dpop(dpop): Dpop,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let basic = basic_credentials(&headers);
    let sent_basic = basic.is_some();
    let answer = issue(&services, source, basic, &headers, body, &dpop).await;
    let response = with_basic_challenge(answer.into_response(), sent_basic);
    with_nonce(&services, response).await
}

async fn issue(
    services: &Services,
    source: Option<std::net::IpAddr>,
    basic: Option<Result<BasicCredentials, ErrorCode>>,
    headers: &HeaderMap,
    body: Body,
    dpop: &DpopRequest,
) -> Result<Json<TokenResponse>, TokenEndpointError> {
    let pairs = read_pairs(headers, body).await?;
    let request = TokenRequest::parse(pairs, basic).map_err(|code| grant_refusal(code.into()))?;
    let issued = grants::token_grant(services, request, source, dpop)
        .await
        .map_err(grant_refusal)?;
    Ok(Json(TokenResponse::new(issued, services)))
}

/// The public signing keys: `next`, `active` and `retired` (see `signing::ring`). Safe to cache
/// for the `max-age` sent: a key is published as `next` for longer than that before it signs.
// Served and documented at `/oauth2/v0/jwks` too (`http::token_routes`).
#[utoipa::path(get, path = "/v0/token/jwks", tag = "discovery",
    responses((status = 200, body = JwkSet), (status = 503, body = ServerErrorBody)))]
pub async fn jwks(State(services): State<Arc<Services>>) -> Response {
    let ring = match services.codec.keys().for_verifying().await {
        Ok(ring) => ring,
        Err(error) => return ServerError::from(error).into_response(),
    };
    let mut response = Json(ring.jwks()).into_response();
    let cache_control = format!("public, max-age={JWKS_MAX_AGE_SECONDS}");
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_str(&cache_control).expect("an ASCII header value"),
    );
    response
}
