//! The request shape that revocation (RFC 7009) and introspection (RFC 7662) share: a form or
//! JSON body with client authentication as at the token endpoint, `token` and an optional
//! `token_type_hint`. Checked in that order: the body, the client, then `token`.

use std::collections::BTreeMap;

use axum::body::Body;
use axum::response::Response;
use http::{HeaderMap, StatusCode};
use utoipa::openapi::{Content, Ref, RefOr, ResponseBuilder};
use utoipa::ToSchema;

use super::basic::{basic_credentials, with_basic_challenge};
use super::body::read_pairs;
use super::error_response::{http_error_response, OAuthErrorBody, ServerErrorBody};
use super::params::BodyDenial;
use crate::auth::authenticate_client;
use crate::auth::presented_token::TokenTypeHint;
use crate::domain::Client;
use crate::error_response::ErrorResponse;
use crate::errors::{Denial, ErrorCode, GrantDenial, Refusal, ServerError};
use crate::requests::BasicCredentials;
use crate::requests::PresentedTokenRequest;
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
pub enum ClientTokenRequestDenial {
    Body(BodyDenial),
    /// Client authentication failed (the token endpoint's codes).
    Client(GrantDenial),
    /// No `token`: 400 `invalid_request` (RFC 7009 §2.1, RFC 7662 §2.1); outside the
    /// catalogue, so `code` is the status.
    TokenMissing,
}

impl Denial for ClientTokenRequestDenial {}

pub type ClientTokenRequestError = Refusal<ClientTokenRequestDenial>;

impl ErrorResponse for ClientTokenRequestDenial {
    fn into_response(self) -> Response {
        match self {
            Self::Body(denial) => denial.into_response(),
            Self::Client(denial) => denial.into_response(),
            Self::TokenMissing => http_error_response(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "token was not supplied",
            ),
        }
    }
}

/// The refusals that revocation, introspection and the one-time password request share, for
/// their documents: client authentication, a disabled client, an oversized body, a server
/// error. The bodies are those [`GrantDenial`], [`BodyDenial`] and [`ServerError`] answer.
pub struct ClientRequestRefusals;

impl utoipa::IntoResponses for ClientRequestRefusals {
    fn responses() -> BTreeMap<String, RefOr<utoipa::openapi::Response>> {
        fn json<T: ToSchema>(description: &str) -> RefOr<utoipa::openapi::Response> {
            let body = Content::new(Some(Ref::from_schema_name(T::name())));
            ResponseBuilder::new()
                .description(description)
                .content("application/json", body)
                .build()
                .into()
        }
        BTreeMap::from([
            (
                "401".to_owned(),
                json::<OAuthErrorBody>(
                    "Client authentication failed (61, 64; 63 for a refused client assertion)",
                ),
            ),
            (
                "403".to_owned(),
                json::<OAuthErrorBody>("Client disabled (59)"),
            ),
            ("413".to_owned(), json::<OAuthErrorBody>("Body over 16 KiB")),
            ("500".to_owned(), json::<ServerErrorBody>("")),
        ])
    }
}

/// Reads the request, then answers it with `flow` (revocation or introspection) for the
/// authenticated client and the token it presents; or refuses it (with `WWW-Authenticate: Basic`
/// where due). A store failure inside `flow` is refused as one during client authentication is.
pub async fn answer_client_token_request<T>(
    services: &Services,
    headers: &HeaderMap,
    body: Body,
    flow: impl AsyncFnOnce(&Services, &Client, &str, Option<TokenTypeHint>) -> Result<T, ServerError>,
) -> Result<T, Response> {
    let basic = basic_credentials(headers);
    let sent_basic = basic.is_some();
    let answer = async {
        let request = read_client_token_request(services, headers, basic, body).await?;
        flow(
            services,
            &request.client,
            request.token.expose(),
            request.hint,
        )
        .await
        .map_err(ClientTokenRequestError::Server)
    };
    answer
        .await
        .map_err(|refusal| with_basic_challenge(refusal.into_response(), sent_basic))
}

async fn read_client_token_request(
    services: &Services,
    headers: &HeaderMap,
    basic: Option<Result<BasicCredentials, ErrorCode>>,
    body: Body,
) -> Result<ClientTokenRequest, ClientTokenRequestError> {
    let pairs = read_pairs(headers, body)
        .await
        .map_err(ClientTokenRequestDenial::Body)?;
    let request = PresentedTokenRequest::parse(pairs, basic)
        .map_err(|code| ClientTokenRequestDenial::Body(BodyDenial::Format(code)))?;
    let client = authenticate_client(services, &request.client)
        .await
        .map_err(|refusal| refusal.map_denied(ClientTokenRequestDenial::Client))?;
    tracing::Span::current().record("client_id", tracing::field::display(client.id));
    let presented = request.request;
    let token = presented
        .token
        .ok_or(ClientTokenRequestDenial::TokenMissing)?;
    Ok(ClientTokenRequest {
        client,
        token,
        hint: presented
            .token_type_hint
            .as_deref()
            .and_then(TokenTypeHint::parse),
    })
}
