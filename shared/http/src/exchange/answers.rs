//! The exchange's answers (docs/decisions.md, "Old-token exchange"): the success body, in the
//! shape of Concur's own exchange response, and every refusal as a named `code`.

use axum::response::{IntoResponse, Response};
use axum::Json;
use http::StatusCode;
use serde::Serialize;

use crate::error_response::ErrorResponse;
use crate::errors::{ExchangeCode, OAuthError, EXCHANGE_OK};
use crate::flows::legacy_exchange::ExchangeDenial;
use crate::issuance::FamilyTokens;
use crate::observability::Outcome;

/// The success body (docs/decisions.md, "Old-token exchange").
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ExchangeResponse {
    code: &'static str,
    access_token: String,
    refresh_token: String,
    expires_in: i64,
    /// The refresh token's expiry, Unix seconds (docs/decisions.md, "Old-token exchange").
    refresh_expires_in: i64,
    scope: String,
    geolocation: String,
    id: String,
    principal_type: &'static str,
    /// `token`, `created`, `expired` (milliseconds) and `scopes` repeat the facts above in the
    /// shape of Concur's own exchange response.
    token: String,
    created: i64,
    expired: i64,
    scopes: Vec<String>,
}

impl ExchangeResponse {
    pub(super) fn new(issued: FamilyTokens) -> Self {
        let refresh = issued.refresh;
        Self {
            code: EXCHANGE_OK,
            expires_in: issued.access.expires_at - issued.access.issued_at,
            refresh_expires_in: refresh.expires_at,
            refresh_token: refresh.token.expose().to_owned(),
            token: refresh.token.expose().to_owned(),
            created: refresh.issued_at * 1000,
            expired: refresh.expires_at * 1000,
            scope: issued.access.scopes.to_string(),
            scopes: issued.access.scopes.iter().map(str::to_owned).collect(),
            geolocation: refresh.geolocation.to_string(),
            id: issued.access.subject.hyphenated().to_string(),
            principal_type: issued.access.principal_type.as_str(),
            access_token: issued.access_token,
        }
    }
}

/// Every refusal of the exchange (docs/decisions.md, "Old-token exchange"): a named `code`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ExchangeErrorBody {
    /// `UNAUTHORIZED`, `INVALIDAPP`, `INVALIDTOKEN` or `INVALIDSCOPES`.
    code: &'static str,
    error: &'static str,
    error_description: &'static str,
}

impl ErrorResponse for ExchangeDenial {
    fn into_response(self) -> Response {
        let (status, code, error, description) = match self {
            Self::Code(code) => (
                StatusCode::BAD_REQUEST,
                code,
                code.error(),
                code.description(),
            ),
            Self::UnknownConsumerKey => (
                StatusCode::NOT_FOUND,
                ExchangeCode::InvalidApp,
                OAuthError::InvalidClient,
                ExchangeCode::InvalidApp.description(),
            ),
            Self::InvalidReturnType => (
                StatusCode::BAD_REQUEST,
                ExchangeCode::InvalidToken,
                OAuthError::InvalidRequest,
                "returnType must be companyToken when present",
            ),
            Self::BodyUnreadable => (
                StatusCode::BAD_REQUEST,
                ExchangeCode::InvalidToken,
                OAuthError::InvalidRequest,
                "the body must be a form or a JSON object of strings, without repeated names",
            ),
            Self::BodyTooLarge => (
                StatusCode::PAYLOAD_TOO_LARGE,
                ExchangeCode::InvalidToken,
                OAuthError::InvalidRequest,
                "request body exceeds 16 KiB",
            ),
        };
        let body = ExchangeErrorBody {
            code: code.as_str(),
            error: error.as_str(),
            error_description: description,
        };
        Outcome::Name(code.as_str()).attach((status, Json(body)).into_response())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn success_body_uses_the_contract_names() {
        let body = serde_json::to_value(ExchangeResponse {
            code: "OK",
            access_token: "a".into(),
            refresh_token: "r".into(),
            expires_in: 3600,
            refresh_expires_in: 1_795_000_000,
            scope: "read".into(),
            geolocation: "https://us.api.example.com".into(),
            id: "id".into(),
            principal_type: "user",
            token: "r".into(),
            created: 1_779_448_000_000,
            expired: 1_795_000_000_000,
            scopes: vec!["read".into()],
        })
        .unwrap();
        let mut keys: Vec<&str> = body
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "accessToken",
                "code",
                "created",
                "expired",
                "expiresIn",
                "geolocation",
                "id",
                "principalType",
                "refreshExpiresIn",
                "refreshToken",
                "scope",
                "scopes",
                "token"
            ]
        );
    }
}
