//! `POST /oauth2/v0/par` (RFC 9126; docs/decisions.md, "Pushed authorization requests and
//! request objects"): a client pushes its authorization request, authenticated as at the token
//! endpoint, and gets the `request_uri` the browser takes to the authorize endpoint.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use http::{header, HeaderMap, HeaderValue, StatusCode};
use serde::Serialize;
use utoipa::ToSchema;

use crate::auth::authenticate_client;
use crate::auth::dpop::DpopRequest;
use crate::basic::{basic_credentials, with_basic_challenge};
use crate::body::read_pairs;
use crate::client_request::ClientRequestRefusals;
use crate::dpop::{with_nonce, Dpop};
use crate::error_response::{ErrorResponse, OAuthErrorBody, ServerErrorBody};
use crate::flows::authorize::{self, PushDenial};
use crate::observability::Outcome;
use crate::params::BodyDenial;
use crate::requests::{PushedAuthorizationForm, PushedAuthorizationRequest};
use crate::services::Services;
use crate::token::grant_refusal;

/// RFC 9126 §2.2's response.
#[derive(Debug, Serialize, ToSchema)]
pub struct PushedAuthorizationBody {
    /// `urn:ietf:params:oauth:request_uri:<random>`: for `GET /oauth2/v0/authorize` with the
    /// same `client_id`, once.
    pub request_uri: String,
    /// Seconds the `request_uri` is valid: 60.
    pub expires_in: i64,
}

impl ErrorResponse for PushDenial {
    fn into_response(self) -> Response {
        match self {
            Self::Client(denial) => denial.into_response(),
            Self::Refused {
                error,
                description,
                code,
            } => {
                let body = OAuthErrorBody {
                    error,
                    error_description: description,
                    code: code.unwrap_or(400),
                    geolocation: None,
                };
                let response = (StatusCode::BAD_REQUEST, Json(body)).into_response();
                Outcome::Code(code.unwrap_or(400)).attach(response)
            }
        }
    }
}

/// Client authentication and its refusals as at the token endpoint; the parameters are checked
/// as the authorize endpoint checks them, each refusal a 400 with the `error` and code it would
/// redirect with.
#[utoipa::path(
    post,
    path = "/oauth2/v0/par",
    tag = "authorize",
    request_body(content(
        (PushedAuthorizationForm = "application/x-www-form-urlencoded"),
        (PushedAuthorizationForm = "application/json"),
    )),
    responses(
        (status = 201, body = PushedAuthorizationBody),
        (status = 400, description = "The authorize endpoint's refusals: 54 (scope), 60 (grant, response_type, PKCE), 102 (no redirect_uri), 117, 118, 119, 177 (`invalid_request_object`); `invalid_request` with code 400 for an unregistered redirect_uri or a pushed request_uri; `invalid_dpop_proof` (150: a bad proof, or one by another key than `dpop_jkt` names), `use_dpop_nonce` (151, with `DPoP-Nonce`); 62, 135", body = OAuthErrorBody),
        (status = 429, description = "slow_down, catalogue code 140: too many requests by this client; 145: a client ID metadata document to fetch past the source address's limit; `Retry-After` in seconds", body = OAuthErrorBody, headers(("Retry-After" = i64))),
        ClientRequestRefusals,
        (status = 503, description = "The store is unavailable", body = ServerErrorBody),
    ),
    params(("DPoP" = Option<String>, Header, description = "A DPoP proof (RFC 9449 §10.1): the code is then bound to its key, as with `dpop_jkt`; with both, they must name the same key (else 150)")),
)]
pub async fn push(
    State(services): State<Arc<Services>>,
    Dpop(dpop): Dpop,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let basic = basic_credentials(&headers);
    let sent_basic = basic.is_some();
    let answer = match pushed(&services, &headers, basic, body, &dpop).await {
        Ok(answer) | Err(answer) => answer,
    };
    with_nonce(&services, with_basic_challenge(answer, sent_basic)).await
}

async fn pushed(
    services: &Services,
    headers: &HeaderMap,
    basic: Option<Result<crate::requests::BasicCredentials, crate::errors::ErrorCode>>,
    body: Body,
    dpop: &DpopRequest,
) -> Result<Response, Response> {
    let pairs = read_pairs(headers, body)
        .await
        .map_err(ErrorResponse::into_response)?;
    let request = PushedAuthorizationRequest::parse(pairs, basic)
        .map_err(|code| BodyDenial::Format(code).into_response())?;
    let client = authenticate_client(services, &request.client)
        .await
        .map_err(|error| grant_refusal(error).into_response())?;
    tracing::Span::current().record("client_id", tracing::field::display(client.id));
    let pushed = authorize::push(services, &client, request.request.0, dpop)
        .await
        .map_err(ErrorResponse::into_response)?;
    let body = PushedAuthorizationBody {
        request_uri: pushed.request_uri,
        expires_in: pushed.expires_in,
    };
    let mut response = (StatusCode::CREATED, Json(body)).into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(Outcome::Code(201).attach(response))
}
