//! `POST /profile-service/v1/keys/principals/{COMPANY_ID}/authtoken/` (docs/decisions.md, "Company
//! auth tokens"): reads the request, runs `flows::company_auth_token` (which documents the order of
//! checks) and answers with JSON or a `301` to the app's Connect URL. Served with and without the
//! trailing slash.
//!
//! # Statuses
//!
//! | denial | status | `code` | `error` |
//! |---|---|---|---|
//! | `Bearer`, `NotAUserToken`, `UserGone` | 401 | 401 | `invalid_token` |
//! | `NotAdministrator`, `NotFirstPartyClient` | 403 | 403 | `access_denied` |
//! | `UnknownCompany` | 404 | 404 | `not_found` |
//! | `Catalogue` (12, 123, 134, 135, 53, 59, 61, 62) | 400 | the code | catalogue |
//! | `BadRequest` | 400 | 400 | `invalid_request` |
//! | `BodyTooLarge` | 413 | 413 | `invalid_request` |
//!
//! Codes 401, 403, 404 and 400 (outside the catalogue) are the HTTP status, as for every
//! non-catalogue error of this service.
//!
//! **Statuses of catalogue codes.** On this endpoint 401 means only "the administrator's bearer
//! token is missing, bad or expired" and 403 only "not an administrator of this company" or "the
//! token is not a first-party app's" (docs/decisions.md, "Company auth tokens"), so a client
//! reacting to them (sign in again; ask another administrator) does the right thing. Every problem
//! with the named app is a bad request: the contract says "Unknown app: 400", and codes 61 (unknown
//! app), 59 (disabled app) and 53 (company not enabled for the app) are answered with 400 too,
//! keeping the catalogue's `code`, `error` and `error_description`. At `/v0/token`, where the app
//! itself authenticates, the same codes keep their usual 401 / 403.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery, State};
use axum::response::{IntoResponse, Response};
use axum::Json;
use http::{header, HeaderMap, HeaderValue, StatusCode};
use serde::Serialize;
use utoipa::ToSchema;

use super::bearer::bearer_challenge;
use super::body::read_optional_pairs;
use super::error_response::ServerErrorBody;
use super::observability::Outcome;
use super::params::{form_pairs, BodyDenial};
use crate::auth::BearerDenial;
use crate::error_response::ErrorResponse;
use crate::errors::ServerError;
use crate::flows::company_auth_token::{
    issue_company_auth_token, CompanyAuthTokenDenial, CompanyAuthTokenError,
    CompanyAuthTokenParams, CompanyAuthTokenRequest, IssuedAuthToken,
};
use crate::requests::{CompanyAuthTokenAppBody, CompanyAuthTokenQuery, FromParameters};
use crate::secrets::Secret;
use crate::services::Services;

/// The path is served without its final slash too.
pub(super) const PATH_WITHOUT_SLASH: &str =
    "/profile-service/v1/keys/principals/{COMPANY_ID}/authtoken";

/// The company auth-token endpoint's body (docs/decisions.md, "Company auth tokens"), success
/// (`PASS`, code 0, `token`) and refusal (`FAIL`, with the token endpoint's `error` and
/// `error_description`).
#[derive(Debug, Serialize, ToSchema)]
pub struct CompanyAuthTokenBody {
    /// `PASS` or `FAIL`.
    status: &'static str,
    code: u16,
    errormsg: &'static str,
    /// The company auth token; empty on refusal.
    token: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error_description: Option<&'static str>,
}

impl CompanyAuthTokenBody {
    fn pass(token: &Secret) -> Self {
        Self {
            status: "PASS",
            code: 0,
            errormsg: "",
            token: token.expose().to_owned(),
            error: None,
            error_description: None,
        }
    }

    /// The error body (docs/decisions.md, "Company auth tokens"): the profile-service fields plus
    /// the token endpoint's.
    fn fail(code: u16, error: &'static str, description: &'static str) -> Self {
        Self {
            status: "FAIL",
            code,
            errormsg: description,
            token: String::new(),
            error: Some(error),
            error_description: Some(description),
        }
    }
}

/// Issues a company auth token for an app, as JSON or as a redirect to the app's Connect URL.
// Served and documented without the final slash too (`http::company_routes`).
#[utoipa::path(post, path = "/profile-service/v1/keys/principals/{COMPANY_ID}/authtoken/",
    tag = "company", operation_id = "company_auth_token",
    security(("bearer" = [])),
    params(
        ("COMPANY_ID" = String, Path, description = "The company's UUID"),
        ("client_id" = Option<String>, Query, description = "The app (also accepted in the body)"),
        ("redirect" = Option<String>, Query, description = "`true`: answer 301 to the app's Connect URL"),
    ),
    // Optional: `client_id` may come in the query alone, as Concur's own examples send it.
    request_body(content(
        (Option<CompanyAuthTokenAppBody> = "application/x-www-form-urlencoded"),
        (Option<CompanyAuthTokenAppBody> = "application/json"),
    )),
    responses(
        (status = 200, body = CompanyAuthTokenBody),
        (status = 301, description = "To the app's Connect URL with id, requestToken and userID",
            headers(("Location" = String))),
        (status = 400, body = CompanyAuthTokenBody),
        (status = 401, body = CompanyAuthTokenBody),
        (status = 403, body = CompanyAuthTokenBody),
        (status = 404, body = CompanyAuthTokenBody),
        (status = 413, body = CompanyAuthTokenBody),
        (status = 500, body = ServerErrorBody),
        (status = 503, body = ServerErrorBody),
    ))]
pub async fn auth_token(
    State(services): State<Arc<Services>>,
    company_id: Result<Path<String>, PathRejection>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    body: Body,
) -> Response {
    // An undecodable path segment cannot name a company.
    let company_id = company_id.map(|Path(id)| id).unwrap_or_default();
    let request = CompanyAuthTokenRequest {
        company_id: &company_id,
        authorization: headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok()),
        params: read_params(query.as_deref(), &headers, body).await,
    };
    answer(&services, request).await.into_response()
}

async fn answer(
    services: &Services,
    request: CompanyAuthTokenRequest<'_>,
) -> Result<Response, CompanyAuthTokenError> {
    let response = match issue_company_auth_token(services, request).await? {
        IssuedAuthToken::Json(token) => Json(CompanyAuthTokenBody::pass(&token)).into_response(),
        IssuedAuthToken::Redirect(location) => {
            let location = HeaderValue::from_str(location.as_str()).map_err(|e| {
                ServerError::internal_because("Connect redirect is not a valid header value", e)
            })?;
            (
                StatusCode::MOVED_PERMANENTLY,
                [(header::LOCATION, location)],
            )
                .into_response()
        }
    };
    Ok(Outcome::Code(0).attach(response))
}

impl ErrorResponse for CompanyAuthTokenDenial {
    fn into_response(self) -> Response {
        let denial = self;
        let (status, code, error, description) = match denial {
            CompanyAuthTokenDenial::Bearer(_)
            | CompanyAuthTokenDenial::NotAUserToken(_)
            | CompanyAuthTokenDenial::UserGone => (
                StatusCode::UNAUTHORIZED,
                401,
                "invalid_token",
                "The bearer access token is missing, invalid or expired.",
            ),
            CompanyAuthTokenDenial::NotAdministrator => (
                StatusCode::FORBIDDEN,
                403,
                "access_denied",
                "The user is not an administrator of this company.",
            ),
            CompanyAuthTokenDenial::NotFirstPartyClient => (
                StatusCode::FORBIDDEN,
                403,
                "access_denied",
                "Only a first-party application's token may request company auth tokens.",
            ),
            CompanyAuthTokenDenial::UnknownCompany => {
                (StatusCode::NOT_FOUND, 404, "not_found", "No such company.")
            }
            CompanyAuthTokenDenial::Catalogue(code) => (
                StatusCode::BAD_REQUEST,
                code.code(),
                code.error().as_str(),
                code.description(),
            ),
            CompanyAuthTokenDenial::BadRequest(description) => {
                (StatusCode::BAD_REQUEST, 400, "invalid_request", description)
            }
            CompanyAuthTokenDenial::BodyTooLarge => (
                StatusCode::PAYLOAD_TOO_LARGE,
                413,
                "invalid_request",
                "request body exceeds 16 KiB",
            ),
        };
        let body = CompanyAuthTokenBody::fail(code, error, description);
        let mut response = (status, Json(body)).into_response();
        if denial.is_unauthenticated() {
            let no_credentials = matches!(
                denial,
                CompanyAuthTokenDenial::Bearer(BearerDenial::Missing)
            );
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                bearer_challenge("company-authtoken", no_credentials),
            );
        }
        Outcome::Code(code).attach(response)
    }
}

/// The query, then the body (form or JSON; an empty body, whatever its content type, carries
/// nothing), each read as its typed request; `CompanyAuthTokenParams` says how they combine.
async fn read_params(
    query: Option<&str>,
    headers: &HeaderMap,
    body: Body,
) -> Result<CompanyAuthTokenParams, CompanyAuthTokenDenial> {
    let query = form_pairs(query.unwrap_or_default().as_bytes())
        .and_then(CompanyAuthTokenQuery::parse)
        .map_err(CompanyAuthTokenDenial::Catalogue)?;
    let body = read_optional_pairs(headers, body)
        .await
        .and_then(|pairs| CompanyAuthTokenAppBody::parse(pairs).map_err(BodyDenial::Format))
        .map_err(|denial| match denial {
            BodyDenial::TooLarge => CompanyAuthTokenDenial::BodyTooLarge,
            BodyDenial::Format(code) => CompanyAuthTokenDenial::Catalogue(code),
        })?;
    CompanyAuthTokenParams::from_query_and_body(query, body)
}
