//! `POST /oauth2/v0/otp` (contract part 9): mails a one-time password to an address. The answer
//! is the same whether or not a user has the address.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::Json;
use http::{header, HeaderMap};
use serde_json::{json, Value};

use super::body::read_params;
use super::token::TokenEndpointError;
use crate::domain::GrantType;
use crate::errors::ErrorCode;
use crate::grants::{authenticate_client, otp_deps, otp_facts, GrantError};
use crate::otp::{request_otp, OtpRequest};
use crate::services::Services;

/// Errors answer as at the token endpoint: the catalogue's shape, 503 when the mail fails.
pub async fn request(
    State(services): State<Arc<Services>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<Value>, TokenEndpointError> {
    let params = read_params(&headers, body).await?;
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    let client = authenticate_client(&services, &params, authorization).await?;
    tracing::Span::current().record("client_id", tracing::field::display(client.id));
    if !client.may_use(GrantType::Otp) {
        return Err(GrantError::from(ErrorCode::UnsupportedGrant).into());
    }
    let request = OtpRequest {
        client_id: client.id,
        app_name: client.name.clone(),
        channel_type: params.get("channel_type").map(str::to_owned),
        channel_handle: params.get("channel_handle").map(str::to_owned),
        facts: otp_facts(&params),
    };
    request_otp(otp_deps(&services), request)
        .await
        .map_err(GrantError::from)?;
    Ok(Json(json!({ "message": "otp sent" })))
}
