//! `POST /oauth2/v0/otp` (docs/decisions.md, "One-time passwords"): mails a one-time password to an
//! address. The answer is the same whether or not a user has the address.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::response::Response;
use axum::Json;
use http::{header, HeaderMap};
use serde::Serialize;
use utoipa::ToSchema;

use super::body::read_params;
use super::client_request::ClientRequestRefusals;
use super::error_response::ErrorResponse;
use super::error_response::{OAuthErrorBody, ServerErrorBody};
use super::forms::OtpRequestForm;
use super::token::{grant_refusal, TokenEndpointError};
use crate::auth::authenticate_client;
use crate::auth::otp::{otp_deps, otp_facts, registered_origins, request_otp, OtpRequest};
use crate::domain::GrantType;
use crate::errors::ErrorCode;
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
        (OtpRequestForm = "application/x-www-form-urlencoded"),
        (OtpRequestForm = "application/json"),
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
    send(&services, &headers, body).await.into_response()
}

async fn send(
    services: &Services,
    headers: &HeaderMap,
    body: Body,
) -> Result<Json<OtpSentBody>, TokenEndpointError> {
    let params = read_params(headers, body).await?;
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    let client = authenticate_client(services, &params, authorization)
        .await
        .map_err(grant_refusal)?;
    tracing::Span::current().record("client_id", tracing::field::display(client.id));
    if !client.may_use(GrantType::Otp) {
        return Err(grant_refusal(ErrorCode::UnsupportedGrant.into()));
    }
    let request = OtpRequest {
        client_id: client.id,
        app_name: client.name.clone(),
        channel_type: params.get("channel_type").map(str::to_owned),
        channel_handle: params.get("channel_handle").map(str::to_owned),
        facts: otp_facts(&params),
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
