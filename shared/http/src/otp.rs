//! `POST /oauth2/v0/otp` (docs/decisions.md, "One-time passwords"): mails a one-time password to an
//! address. The answer is the same whether or not a user has the address.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::response::Response;
use axum::Json;
use http::HeaderMap;
use serde::Serialize;
use utoipa::ToSchema;

use super::basic::{basic_credentials, with_basic_challenge};
use super::body::read_pairs;
use super::client_request::ClientRequestRefusals;
use super::error_response::ErrorResponse;
use super::error_response::{OAuthErrorBody, ServerErrorBody};
use super::params::BodyDenial;
use super::token::{grant_refusal, TokenEndpointError};
use crate::auth::authenticate_client;
use crate::auth::otp::{otp_deps, registered_origins, request_otp, OtpFacts, OtpRequest};
use crate::domain::GrantType;
use crate::errors::ErrorCode;
use crate::requests::{BasicCredentials, OtpSendRequest};
use crate::services::Services;

/// `POST /oauth2/v0/otp`'s answer to every well-formed request, whether or not a user has the
/// address.
#[derive(Debug, Serialize, ToSchema)]
pub struct OtpSentBody {
    /// `otp sent`.
    pub message: &'static str,
}

/// Errors answer as at the token endpoint: the catalogue's shape, 503 when the mail fails.
#[utoipa::path(
    post,
    path = "/oauth2/v0/otp",
    tag = "otp",
    request_body(content(
        (OtpSendRequest = "application/x-www-form-urlencoded"),
        (OtpSendRequest = "application/json"),
    )),
    responses(
        (status = 200, body = OtpSentBody),
        (status = 400, description = "Catalogue codes 57, 58, 80, 81, 82 (too many open requests), 86 (`link` outside the client's registered origins), 60, 62, 63, 135", body = OAuthErrorBody),
        (status = 429, description = "slow_down, catalogue code 142: too many requests by this client; `Retry-After` in seconds", body = OAuthErrorBody, headers(("Retry-After" = i64))),
        ClientRequestRefusals,
        (status = 503, description = "The mail could not be sent", body = ServerErrorBody),
    ),
)]
pub async fn request(
    State(services): State<Arc<Services>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let basic = basic_credentials(&headers);
    let sent_basic = basic.is_some();
    let answer = send(&services, &headers, basic, body).await;
    with_basic_challenge(answer.into_response(), sent_basic)
}

async fn send(
    services: &Services,
    headers: &HeaderMap,
    basic: Option<Result<BasicCredentials, ErrorCode>>,
    body: Body,
) -> Result<Json<OtpSentBody>, TokenEndpointError> {
    let pairs = read_pairs(headers, body).await?;
    let request = OtpSendRequest::parse(pairs, basic).map_err(BodyDenial::Format)?;
    let client = authenticate_client(services, &request.client)
        .await
        .map_err(grant_refusal)?;
    tracing::Span::current().record("client_id", tracing::field::display(client.id));
    if !client.may_use(GrantType::Otp) {
        return Err(grant_refusal(ErrorCode::UnsupportedGrant.into()));
    }
    let sent = request.request;
    let request = OtpRequest {
        client_id: client.id,
        app_name: client.name.clone(),
        channel_type: sent.channel_type,
        channel_handle: sent.channel_handle,
        facts: OtpFacts {
            name: sent.name,
            company: sent.company,
            link: sent.link,
        },
        link_origins: registered_origins(
            client
                .redirect_uris
                .iter()
                .chain(&client.connect_url)
                .map(String::as_str),
        ),
    };
    request_otp(otp_deps(services), request)
        .await
        .map_err(|refusal| grant_refusal(refusal.into()))?;
    Ok(Json(OtpSentBody {
        message: "otp sent",
    }))
}
