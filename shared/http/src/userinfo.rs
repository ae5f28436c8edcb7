//! `GET` and `POST /oauth2/v0/userinfo` (OpenID Connect Core §5.3): the access token in the
//! `Authorization: Bearer` header, or on POST in the `access_token` form field (RFC 6750 §2.2).
//!
//! | refusal | status | `WWW-Authenticate` |
//! |---|---|---|
//! | no, bad, expired, revoked or unknown token | 401 | `Bearer error="invalid_token"` |
//! | an application token, or one without `openid` | 403 | `Bearer error="insufficient_scope"` |
//! | a token both in the header and the body | 400 | `Bearer error="invalid_request"` |
//! | a DPoP-bound token as a bearer token | 401 | `Bearer error="invalid_token"`, then `DPoP` |
//! | `DPoP` scheme: bad or unbound token | 401 | `DPoP error="invalid_token"` |
//! | `DPoP` scheme: bad, missing or replayed proof | 401 | `DPoP error="invalid_dpop_proof"` |
//! | `DPoP` scheme, `DPOP_NONCE=on`: no or stale nonce | 401 | `DPoP error="use_dpop_nonce"` |

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use http::{header, HeaderMap, HeaderValue, StatusCode};
use serde::Serialize;
use utoipa::ToSchema;

use super::body::read_optional_pairs;
use super::dpop::{dpop_challenge, dpop_refusal, with_nonce, Dpop};
use super::error_response::{http_error_response, OAuthErrorBody, ServerErrorBody};
use super::params::BodyDenial;
use crate::auth::dpop::{credential, Credential};
use crate::auth::BearerDenial;
use crate::error_response::ErrorResponse;
use crate::flows::userinfo::{userinfo, UserInfo, UserInfoDenial, UserInfoError};
use crate::requests::{FromParameters, UserInfoForm};
use crate::services::Services;

/// OpenID Connect Core §5.1 claims; only `sub` and `principal_type` are always present.
#[derive(Serialize, ToSchema)]
pub struct UserInfoBody {
    /// The principal's UUID, the ID token's `sub`.
    pub sub: String,
    /// `user` or `company`.
    pub principal_type: &'static str,
    /// `profile`: the login.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preferred_username: Option<String>,
    /// `profile`: a company's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `profile`: the user's company, or the company itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub company_id: Option<String>,
    /// `email`: the user's address, when one is registered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email_verified: Option<bool>,
}

impl From<UserInfo> for UserInfoBody {
    fn from(info: UserInfo) -> Self {
        Self {
            sub: info.sub,
            principal_type: info.principal_type.as_str(),
            preferred_username: info.preferred_username,
            name: info.name,
            company_id: info.company_id,
            email: info.email,
            email_verified: info.email_verified,
        }
    }
}

const NOT_OPENID: &str = "The access token was not issued for a user with the openid scope.";

impl ErrorResponse for UserInfoDenial {
    fn into_response(self) -> Response {
        let bound_as_bearer = matches!(self, Self::Bearer(BearerDenial::DpopBound));
        let (status, error, description) = match self {
            Self::Dpop(denial) => return dpop_refusal(&denial, "userinfo"),
            Self::InsufficientScope { dpop: true } => {
                let mut response =
                    http_error_response(StatusCode::FORBIDDEN, "insufficient_scope", NOT_OPENID);
                response.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    dpop_challenge("userinfo", Some("insufficient_scope")),
                );
                return response;
            }
            Self::Bearer(denial) => {
                tracing::info!(%denial, "userinfo: bearer token refused");
                (
                    StatusCode::UNAUTHORIZED,
                    "invalid_token",
                    "The access token is missing, invalid, expired or revoked.",
                )
            }
            Self::InsufficientScope { dpop: false } => {
                (StatusCode::FORBIDDEN, "insufficient_scope", NOT_OPENID)
            }
        };
        let mut response = challenge(http_error_response(status, error, description), error);
        if bound_as_bearer {
            response
                .headers_mut()
                .append(header::WWW_AUTHENTICATE, dpop_challenge("userinfo", None));
        }
        response
    }
}

fn challenge(mut response: Response, error: &'static str) -> Response {
    let value = match error {
        "insufficient_scope" => {
            "Bearer realm=\"userinfo\", error=\"insufficient_scope\", scope=\"openid\""
        }
        "invalid_request" => "Bearer realm=\"userinfo\", error=\"invalid_request\"",
        _ => "Bearer realm=\"userinfo\", error=\"invalid_token\"",
    };
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(value));
    response
}

fn answer(result: Result<UserInfo, UserInfoError>) -> Response {
    match result {
        Ok(info) => Json(UserInfoBody::from(info)).into_response(),
        Err(error) => error.into_response(),
    }
}

fn header_token(headers: &HeaderMap) -> Option<Result<Credential<'_>, BearerDenial>> {
    let value = headers.get(header::AUTHORIZATION)?;
    Some(
        value
            .to_str()
            .map_err(|_| BearerDenial::MalformedHeader)
            .and_then(credential),
    )
}

/// The claims about the token's user.
#[utoipa::path(
    get,
    path = "/oauth2/v0/userinfo",
    tag = "openid",
    security(("bearer" = [])),
    params(("DPoP" = Option<String>, Header, description = "With `Authorization: DPoP <token>`: a DPoP proof (RFC 9449) with the token's `ath`")),
    responses(
        (status = 200, body = UserInfoBody),
        (status = 401, description = "No, bad, expired or revoked access token", body = OAuthErrorBody,
            headers(("WWW-Authenticate" = String))),
        (status = 403, description = "An application token, or one without `openid`", body = OAuthErrorBody,
            headers(("WWW-Authenticate" = String))),
        (status = 500, body = ServerErrorBody),
        (status = 503, body = ServerErrorBody),
    ),
)]
pub async fn get_userinfo(
    State(services): State<Arc<Services>>,
    Dpop(dpop): Dpop,
    headers: HeaderMap,
) -> Response {
    let token = header_token(&headers).unwrap_or(Err(BearerDenial::Missing));
    with_nonce(&services, answer(userinfo(&services, token, &dpop).await)).await
}

/// The same, with the token in the header or in the `access_token` form field.
#[utoipa::path(
    post,
    path = "/oauth2/v0/userinfo",
    tag = "openid",
    security(("bearer" = []), ()),
    params(("DPoP" = Option<String>, Header, description = "With `Authorization: DPoP <token>`: a DPoP proof (RFC 9449) with the token's `ath`")),
    // Optional: the token is usually in the header, and then the body may be empty (OpenID
    // Connect Core 5.3.1).
    request_body(content((Option<UserInfoForm> = "application/x-www-form-urlencoded"))),
    responses(
        (status = 200, body = UserInfoBody),
        (status = 400, description = "A token in both the header and the body, or an unreadable body", body = OAuthErrorBody),
        (status = 401, description = "No, bad, expired or revoked access token", body = OAuthErrorBody,
            headers(("WWW-Authenticate" = String))),
        (status = 403, description = "An application token, or one without `openid`", body = OAuthErrorBody,
            headers(("WWW-Authenticate" = String))),
        (status = 413, body = OAuthErrorBody),
        (status = 500, body = ServerErrorBody),
        (status = 503, body = ServerErrorBody),
    ),
)]
pub async fn post_userinfo(
    State(services): State<Arc<Services>>,
    Dpop(dpop): Dpop,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let form = match read_optional_pairs(&headers, body)
        .await
        .and_then(|pairs| UserInfoForm::parse(pairs).map_err(BodyDenial::Format))
    {
        Ok(form) => form,
        Err(denial) => return denial.into_response(),
    };
    let token = match (header_token(&headers), form.access_token.as_ref()) {
        // RFC 6750 §2: one method per request.
        (Some(_), Some(_)) => {
            let response = http_error_response(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "The access token was sent both in the header and in the body.",
            );
            return challenge(response, "invalid_request");
        }
        (Some(token), None) => token,
        (None, Some(token)) => Ok(Credential::Bearer(token.expose())),
        (None, None) => Err(BearerDenial::Missing),
    };
    with_nonce(&services, answer(userinfo(&services, token, &dpop).await)).await
}
