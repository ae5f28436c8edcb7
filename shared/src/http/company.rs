//! `POST /profile-service/v1/keys/principals/{COMPANY_ID}/authtoken/` (contract part 4, spec 4.4,
//! 4.5, 5.4): an administrator obtains a company auth token for one app, either as JSON or as a
//! `301` to the app's Connect URL. The app then exchanges it at `/v0/token` with
//! `grant_type=password&credtype=authtoken` (`grants::company`).
//!
//! Served with and without the trailing slash.
//!
//! # Checks, in order
//!
//! Nothing is revealed to a caller before it has proven who it is, and nothing is written
//! unless every check passed.
//!
//! | # | check | status | `code` | `error` |
//! |---|---|---|---|---|
//! | 1 | `Authorization: Bearer` with a valid, live access token (signature, expiry by the injected clock, `jti` in the store, not revoked) | 401 | 401 | `invalid_token` |
//! | 2 | the token is a user's (not a company's or an application's), and that user still exists | 401 | 401 | `invalid_token` |
//! | 3 | `COMPANY_ID` is a UUID naming a company | 404 | 404 | `not_found` |
//! | 4 | the user administers that company (`User::administers`) | 403 | 403 | `access_denied` |
//! | 5 | the administrator's account is active (disabled: 123; logon denied: 12) | 400 | 123 / 12 | catalogue |
//! | 6 | the company is active (disabled: 123; scheduled maintenance: 134) | 400 | 123 / 134 | catalogue |
//! | 7 | the query and body are readable (form, JSON or empty body; at most 16 KiB) | 400 / 413 | 135 / 413 | `invalid_request` |
//! | 8 | `client_id` present (62), a known app (61), not disabled (59); query and body agree | 400 | 62 / 61 / 59 / 400 | catalogue |
//! | 9 | the company is enabled for that app | 400 | 53 | `invalid_client` |
//! | 10 | with `redirect=true`: the app has a usable Connect URL | 400 | 400 | `invalid_request` |
//!
//! Codes 401, 403, 404 and 400 (outside the catalogue) are the HTTP status, as for every
//! non-catalogue error of this service.
//!
//! **Statuses of catalogue codes.** On this endpoint 401 means only "the administrator's bearer
//! token is missing, bad or expired" and 403 only "not an administrator of this company"
//! (contract part 4), so a client reacting to them (sign in again; ask another administrator)
//! does the right thing. Every problem with the named app is a bad request: the contract says
//! "Unknown app: 400", and codes 61 (unknown app), 59 (disabled app) and 53 (company not
//! enabled for the app) are answered with 400 too, keeping the catalogue's `code`, `error` and
//! `error_description`. At `/v0/token`, where the app itself authenticates, the same codes keep
//! their usual 401 / 403.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery, State};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use http::{header, HeaderMap, HeaderValue, StatusCode};
use serde_json::json;
use url::Url;

use super::body::{read_optional_params, BodyRefusal};
use super::error_response::store_error_response;
use crate::domain::{
    AuthToken, Client, ClientId, CompanyStatus, PrincipalId, PrincipalType, User, UserStatus,
    AUTH_TOKEN_TTL_SECONDS,
};
use crate::errors::ErrorCode;
use crate::grants::company::check_company_may_sign_in;
use crate::grants::{authenticate_bearer, BearerRejection, TokenParams};
use crate::random::RandomExt;
use crate::secrets::Secret;
use crate::services::Services;
use crate::store::StoreError;

const PATH: &str = "/profile-service/v1/keys/principals/{company_id}/authtoken/";
const PATH_WITHOUT_SLASH: &str = "/profile-service/v1/keys/principals/{company_id}/authtoken";

/// The query parameters the Connect redirect sets (spec 4.5). Parameters of the same names
/// already in a registered Connect URL are replaced, so the app reads exactly one of each.
const REDIRECT_PARAMS: [&str; 3] = ["id", "requestToken", "userID"];

pub(super) fn routes(services: Arc<Services>) -> Router {
    Router::new()
        .route(PATH, post(auth_token))
        .route(PATH_WITHOUT_SLASH, post(auth_token))
        .with_state(services)
}

/// The handler. See the module documentation for the order of checks and their answers.
pub async fn auth_token(
    State(services): State<Arc<Services>>,
    company_id: Result<Path<String>, PathRejection>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    body: Body,
) -> Response {
    // An undecodable path segment cannot name a company.
    let company_id = company_id.map(|Path(id)| id).unwrap_or_default();
    let request = Request {
        company_id: &company_id,
        query: query.as_deref(),
        headers: &headers,
        body,
    };
    match issue(&services, request).await {
        Ok(Issued::Json(token)) => {
            record_code(0);
            Json(json!({
                "status": "PASS",
                "code": 0,
                "errormsg": "",
                "token": token.expose(),
            }))
            .into_response()
        }
        Ok(Issued::Redirect(location)) => {
            record_code(0);
            (
                StatusCode::MOVED_PERMANENTLY,
                [(header::LOCATION, location)],
            )
                .into_response()
        }
        Err(refusal) => refusal.into_response(),
    }
}

struct Request<'a> {
    company_id: &'a str,
    query: Option<&'a str>,
    headers: &'a HeaderMap,
    body: Body,
}

/// A successfully stored auth token, in the form the caller asked for.
enum Issued {
    Json(Secret),
    /// `Location`: the app's Connect URL with `id`, `requestToken` and `userID`.
    Redirect(HeaderValue),
}

/// Why no auth token was issued. Every variant is answered before anything is written.
#[derive(Debug)]
enum Refusal {
    /// 401: no, malformed, bad, expired or revoked bearer token, or not a (live) user's.
    Unauthenticated(Unauthenticated),
    /// 403: the user does not administer the company.
    NotAdministrator,
    /// 404: `COMPANY_ID` is not a UUID, or no such company.
    UnknownCompany,
    /// 400 with a catalogue code (see the module documentation for the statuses).
    Catalogue(ErrorCode),
    /// 400 `invalid_request` outside the catalogue (`code` 400).
    BadRequest(&'static str),
    /// 413: the body is over 16 KiB.
    TooLarge,
    /// 503 / 500.
    Store(StoreError),
}

#[derive(Debug)]
enum Unauthenticated {
    /// No bearer credentials (no header, or another scheme such as Basic): RFC 6750 §3.1 says
    /// the challenge then carries no error.
    NoToken,
    Bearer(BearerRejection),
    NotAUserToken(PrincipalType),
    UserGone,
}

/// For the log: why the token was refused. Never contains the token.
impl std::fmt::Display for Unauthenticated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoToken => f.write_str("no bearer token"),
            Self::Bearer(rejection) => rejection.fmt(f),
            Self::NotAUserToken(kind) => write!(f, "a {kind} token, not a user's"),
            Self::UserGone => f.write_str("the token's user no longer exists"),
        }
    }
}

impl From<StoreError> for Refusal {
    fn from(e: StoreError) -> Self {
        Self::Store(e)
    }
}

impl From<ErrorCode> for Refusal {
    fn from(code: ErrorCode) -> Self {
        Self::Catalogue(code)
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        match self {
            Refusal::Unauthenticated(why) => {
                // The reason goes to the log only; the caller learns "no, bad or expired".
                tracing::info!(reason = %why, "company auth token: bearer token refused");
                let challenge = match why {
                    Unauthenticated::NoToken => "Bearer realm=\"company-authtoken\"",
                    _ => "Bearer realm=\"company-authtoken\", error=\"invalid_token\"",
                };
                let mut response = fail(
                    StatusCode::UNAUTHORIZED,
                    401,
                    "invalid_token",
                    "The bearer access token is missing, invalid or expired.",
                );
                response.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static(challenge),
                );
                response
            }
            Refusal::NotAdministrator => fail(
                StatusCode::FORBIDDEN,
                403,
                "access_denied",
                "The user is not an administrator of this company.",
            ),
            Refusal::UnknownCompany => {
                fail(StatusCode::NOT_FOUND, 404, "not_found", "No such company.")
            }
            Refusal::Catalogue(code) => fail(
                StatusCode::BAD_REQUEST,
                code.code(),
                code.error().as_str(),
                code.description(),
            ),
            Refusal::BadRequest(description) => {
                fail(StatusCode::BAD_REQUEST, 400, "invalid_request", description)
            }
            Refusal::TooLarge => fail(
                StatusCode::PAYLOAD_TOO_LARGE,
                413,
                "invalid_request",
                "request body exceeds 16 KiB",
            ),
            Refusal::Store(e) => store_error_response(&e),
        }
    }
}

/// The error body of contract part 4: the profile-service fields plus the token endpoint's.
fn fail(status: StatusCode, code: u16, error: &str, description: &str) -> Response {
    record_code(code);
    let body = json!({
        "status": "FAIL",
        "code": code,
        "errormsg": description,
        "token": "",
        "error": error,
        "error_description": description,
    });
    (status, Json(body)).into_response()
}

fn record_code(code: u16) {
    tracing::Span::current().record("code", code);
}

async fn issue(services: &Services, request: Request<'_>) -> Result<Issued, Refusal> {
    let store = &services.ctx.store;

    // 1-2. The administrator.
    let authorization = request
        .headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    let bearer = authenticate_bearer(services, authorization)
        .await?
        .map_err(|rejection| {
            Refusal::Unauthenticated(match rejection {
                BearerRejection::Missing => Unauthenticated::NoToken,
                other => Unauthenticated::Bearer(other),
            })
        })?;
    if bearer.principal_type() != PrincipalType::User {
        return Err(Refusal::Unauthenticated(Unauthenticated::NotAUserToken(
            bearer.principal_type(),
        )));
    }
    let user = store
        .get_user(&PrincipalId::new(bearer.subject()))
        .await?
        .ok_or(Refusal::Unauthenticated(Unauthenticated::UserGone))?;

    // 3-6. The company and the administrator's standing in it.
    let company_id = PrincipalId::parse(request.company_id).map_err(|_| Refusal::UnknownCompany)?;
    let company = store
        .get_company(&company_id)
        .await?
        .ok_or(Refusal::UnknownCompany)?;
    if !user.administers(&company.id) {
        return Err(Refusal::NotAdministrator);
    }
    check_administrator_active(&user)?;
    match company.status {
        CompanyStatus::Active => {}
        CompanyStatus::Disabled => return Err(ErrorCode::PrincipalDisabled.into()),
        CompanyStatus::Maintenance => return Err(ErrorCode::CompanyMaintenance.into()),
    }

    // 7-9. The app the auth token is for.
    let params = read_params(request.query, request.headers, request.body).await?;
    let client = resolve_client(services, &params).await?;
    check_company_may_sign_in(services, &company, &client).await??;

    // 10. Where the answer goes, decided before anything is written.
    let connect_url = if params.redirect {
        Some(connect_url(&client)?)
    } else {
        None
    };

    // The answer is complete before the token is stored: nothing is written that could not be
    // handed out.
    let token = Secret::new(services.ctx.random.opaque_token());
    let token_hash = token.hash();
    let issued = match connect_url {
        Some(url) => {
            let location = connect_redirect(url, &company.id, &token, &user.id);
            let location = HeaderValue::from_str(location.as_str()).map_err(|_| {
                StoreError::Internal("Connect redirect is not a valid header value".into())
            })?;
            Issued::Redirect(location)
        }
        None => Issued::Json(token),
    };
    let now = services.ctx.clock.now();
    store
        .put_auth_token(&AuthToken {
            token_hash,
            company_id: company.id,
            client_id: client.id,
            issued_by: user.id,
            issued_at: now,
            expires_at: now + AUTH_TOKEN_TTL_SECONDS,
        })
        .await?;
    tracing::info!(
        company_id = %company.id,
        issued_by = %user.id,
        redirect = params.redirect,
        "company auth token issued"
    );
    Ok(issued)
}

/// An administrator whose account was disabled (or denied logon) since the access token was
/// issued can no longer act for the company: the same codes as the refresh grant gives.
fn check_administrator_active(user: &User) -> Result<(), Refusal> {
    match user.status {
        UserStatus::Active => Ok(()),
        UserStatus::Disabled => Err(ErrorCode::PrincipalDisabled.into()),
        UserStatus::LogonDenied => Err(ErrorCode::LogonDenied.into()),
    }
}

/// What the request says besides the path.
struct Params {
    client_id: Option<String>,
    redirect: bool,
}

/// `client_id` from the query or the body (form or JSON; an empty body, whatever its content
/// type, carries nothing). If both carry it, they must agree. `redirect` is read from the query
/// only (`?redirect=true`, contract part 4): `true` or `false`, case-insensitive.
async fn read_params(
    query: Option<&str>,
    headers: &HeaderMap,
    body: Body,
) -> Result<Params, Refusal> {
    let query = TokenParams::from_form(query.unwrap_or_default().as_bytes())?;
    let body = read_optional_params(headers, body)
        .await
        .map_err(|refusal| match refusal {
            BodyRefusal::TooLarge => Refusal::TooLarge,
            BodyRefusal::Format(code) => Refusal::Catalogue(code),
        })?;
    let client_id = match (query.get("client_id"), body.get("client_id")) {
        (Some(q), Some(b)) if q != b => {
            return Err(Refusal::BadRequest(
                "client_id is given in the query and the body with different values",
            ))
        }
        (q, b) => q.or(b).map(str::to_owned),
    };
    let redirect = match query.get("redirect") {
        None => false,
        Some(v) if v.eq_ignore_ascii_case("true") => true,
        Some(v) if v.eq_ignore_ascii_case("false") => false,
        Some(_) => return Err(Refusal::BadRequest("redirect must be true or false")),
    };
    Ok(Params {
        client_id,
        redirect,
    })
}

/// The app named by `client_id`: missing 62, not a UUID or unknown 61, disabled 59 (an auth
/// token for a disabled app could never be exchanged). Recorded on the request span once it is
/// known to be a UUID (arbitrary input is not logged).
async fn resolve_client(services: &Services, params: &Params) -> Result<Client, Refusal> {
    let id = params
        .client_id
        .as_deref()
        .ok_or(ErrorCode::ClientIdMissing)?;
    let id = ClientId::parse(id).map_err(|_| ErrorCode::ClientNotFound)?;
    tracing::Span::current().record("client_id", tracing::field::display(id));
    let client = services
        .ctx
        .store
        .get_client(&id)
        .await?
        .ok_or(ErrorCode::ClientNotFound)?;
    if !client.enabled {
        return Err(ErrorCode::ClientDisabled.into());
    }
    Ok(client)
}

/// The app's registered Connect URL, if it is an absolute http(s) URL (application management
/// only registers such URLs).
fn connect_url(client: &Client) -> Result<Url, Refusal> {
    client
        .connect_url
        .as_deref()
        .and_then(|u| Url::parse(u).ok())
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .ok_or(Refusal::BadRequest(
            "the app has no registered Connect URL to redirect to",
        ))
}

/// The Connect URL with `id`, `requestToken` and `userID` appended (spec 4.5). The URL's own
/// query parameters are kept as registered, byte for byte, except any named like ours.
fn connect_redirect(
    mut url: Url,
    company: &PrincipalId,
    token: &Secret,
    user: &PrincipalId,
) -> Url {
    if let Some(query) = url.query() {
        let kept: Vec<&str> = query
            .split('&')
            .filter(|pair| {
                let name = url::form_urlencoded::parse(pair.as_bytes())
                    .next()
                    .map(|(name, _)| name.into_owned());
                !pair.is_empty() && !name.is_some_and(|n| REDIRECT_PARAMS.contains(&n.as_str()))
            })
            .collect();
        let kept = kept.join("&");
        url.set_query((!kept.is_empty()).then_some(kept.as_str()));
    }
    url.query_pairs_mut()
        .append_pair("id", &company.to_string())
        .append_pair("requestToken", token.expose())
        .append_pair("userID", &user.to_string());
    url
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redirect(connect: &str) -> Url {
        let company = PrincipalId::parse("6f1c1d2e-0000-4000-8000-000000000001").unwrap();
        let user = PrincipalId::parse("6f1c1d2e-0000-4000-8000-000000000002").unwrap();
        connect_redirect(
            Url::parse(connect).unwrap(),
            &company,
            &Secret::new("tok-_en"),
            &user,
        )
    }

    #[test]
    fn appends_the_three_parameters() {
        assert_eq!(
            redirect("https://app.example.com/connect").as_str(),
            "https://app.example.com/connect?id=6f1c1d2e-0000-4000-8000-000000000001\
             &requestToken=tok-_en&userID=6f1c1d2e-0000-4000-8000-000000000002"
        );
    }

    #[test]
    fn keeps_existing_parameters_verbatim_and_replaces_ours() {
        let url = redirect("https://app.example.com/c?tenant=a%20b&flag&id=stale&x=1");
        assert_eq!(
            url.query(),
            Some(
                "tenant=a%20b&flag&x=1&id=6f1c1d2e-0000-4000-8000-000000000001\
                 &requestToken=tok-_en&userID=6f1c1d2e-0000-4000-8000-000000000002"
            )
        );
        let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
        assert_eq!(pairs.iter().filter(|(k, _)| k == "id").count(), 1);
        assert!(pairs.contains(&("tenant".into(), "a b".into())));
    }

    #[test]
    fn encodes_values() {
        let company = PrincipalId::parse("6f1c1d2e-0000-4000-8000-000000000001").unwrap();
        let url = connect_redirect(
            Url::parse("https://app.example.com/c?").unwrap(),
            &company,
            &Secret::new("a+b&c=d"),
            &company,
        );
        let token: Vec<String> = url
            .query_pairs()
            .filter(|(k, _)| k == "requestToken")
            .map(|(_, v)| v.into_owned())
            .collect();
        assert_eq!(token, ["a+b&c=d"]);
        assert!(url.as_str().contains("requestToken=a%2Bb%26c%3Dd"));
    }
}
