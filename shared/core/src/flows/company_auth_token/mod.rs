//! The company auth token (spec 4.4, 4.5, 5.4; docs/decisions.md, "Company auth tokens"): an
//! administrator obtains a company auth token for one app, either as JSON or as a redirect to the
//! app's Connect URL. The app then exchanges it at `/v0/token` with
//! `grant_type=password&credtype=authtoken` (`grants::password::authtoken`). No HTTP here:
//! `http::company` reads the request and answers.
//!
//! # Checks, in order
//!
//! Nothing is revealed to a caller before it has proven who it is, and nothing is written
//! unless every check passed.
//!
//! | # | check | denial |
//! |---|---|---|
//! | 1 | `Authorization: Bearer` with a valid, live access token (signature, expiry by the injected clock, `jti` in the store, not revoked) | `Bearer` |
//! | 2 | the token is a user's (not a company's or an application's), and that user still exists | `NotAUserToken`, `UserGone` |
//! | 2a | the token was issued to an enabled first-party client | `NotFirstPartyClient` |
//! | 3 | `COMPANY_ID` is a UUID naming a company | `UnknownCompany` |
//! | 4 | the user administers that company (`User::administers`) | `NotAdministrator` |
//! | 5 | the administrator's account is active (disabled: 123; logon denied: 12) | `Catalogue` |
//! | 6 | the company is active (disabled: 123; scheduled maintenance: 134) | `Catalogue` |
//! | 7 | the query and body are readable (form, JSON or empty body; at most 16 KiB) | `Catalogue` (135), `BadRequest`, `BodyTooLarge` |
//! | 8 | `client_id` present (62), a known app (61), not disabled (59); query and body agree | `Catalogue`, `BadRequest` |
//! | 9 | the company is enabled for that app (53) | `Catalogue` |
//! | 10 | with `redirect=true`: the app has a usable Connect URL | `BadRequest` |
//!
//! `http::company` documents the statuses these are answered with.

mod connect;
mod denial;

pub use denial::{CompanyAuthTokenDenial, CompanyAuthTokenError};

use url::Url;

use crate::auth::authenticate_bearer;
use crate::auth::principal::{
    check_company_may_sign_in, company_status_denial, user_status_denial,
};
use crate::domain::{
    AuthToken, Client, ClientId, Company, PrincipalId, PrincipalType, User, AUTH_TOKEN_TTL_SECONDS,
};
use crate::errors::{ErrorCode, Refusal, ServerError};
use crate::random::RandomExt;
use crate::requests::{CompanyAuthTokenAppBody, CompanyAuthTokenQuery};
use crate::secrets::Secret;
use crate::services::Services;
use crate::store::{Committed, WriteBatch};
use crate::{audit, domain::audit::AuditKind};

/// One request, as read from HTTP.
pub struct CompanyAuthTokenRequest<'a> {
    /// The path's `COMPANY_ID`, as sent (empty if undecodable).
    pub company_id: &'a str,
    /// The `Authorization` header's value, if any.
    pub authorization: Option<&'a str>,
    /// What the query and body say, or why they could not be read (answered at step 7).
    pub params: Result<CompanyAuthTokenParams, CompanyAuthTokenDenial>,
}

/// What the request says besides the path and the bearer token.
#[derive(Debug, Default)]
pub struct CompanyAuthTokenParams {
    pub client_id: Option<String>,
    /// Answer with a redirect to the app's Connect URL instead of JSON.
    pub redirect: bool,
}

impl CompanyAuthTokenParams {
    /// `client_id` from the query or the body; if both carry it, they must agree. `redirect` is
    /// read from the query only (`?redirect=true`; docs/decisions.md, "Company auth tokens"):
    /// `true` or `false`, case-insensitive.
    pub fn from_query_and_body(
        query: CompanyAuthTokenQuery,
        body: CompanyAuthTokenAppBody,
    ) -> Result<Self, CompanyAuthTokenDenial> {
        let client_id = match (query.client_id, body.client_id) {
            (Some(q), Some(b)) if q != b => {
                return Err(CompanyAuthTokenDenial::BadRequest(
                    "client_id is given in the query and the body with different values",
                ))
            }
            (q, b) => q.or(b),
        };
        let redirect = match query.redirect.as_deref() {
            None => false,
            Some(v) if v.eq_ignore_ascii_case("true") => true,
            Some(v) if v.eq_ignore_ascii_case("false") => false,
            Some(_) => {
                return Err(CompanyAuthTokenDenial::BadRequest(
                    "redirect must be true or false",
                ))
            }
        };
        Ok(Self {
            client_id,
            redirect,
        })
    }
}

/// A stored auth token, in the form the caller asked for.
pub enum IssuedAuthToken {
    Json(Secret),
    /// The app's Connect URL with `id`, `requestToken` and `userID`.
    Redirect(Url),
}

/// Issues and stores an auth token. See the module documentation for the order of checks.
pub async fn issue_company_auth_token(
    services: &Services,
    request: CompanyAuthTokenRequest<'_>,
) -> Result<IssuedAuthToken, CompanyAuthTokenError> {
    let store = &services.ctx.store;

    // 1-2a. The administrator, through a first-party app.
    let user = authenticate_user(services, request.authorization).await?;

    // 3-6. The company and the administrator's standing in it.
    let company = find_company(services, request.company_id).await?;
    if !user.administers(&company.id) {
        return Err(CompanyAuthTokenDenial::NotAdministrator.into());
    }
    // An administrator disabled (or denied logon) since the access token was issued can no
    // longer act for the company: the same codes as the refresh grant gives.
    if let Some(code) = user_status_denial(&user).or_else(|| company_status_denial(&company)) {
        return Err(code.into());
    }

    // 7-9. The app the auth token is for.
    let params = request.params?;
    let client = resolve_client(services, &params).await?;
    check_company_may_sign_in(services, &company, &client).await?;

    // 10. Where the answer goes, decided before anything is written.
    let connect_url = if params.redirect {
        Some(connect::connect_url(&client)?)
    } else {
        None
    };

    // The answer is complete before the token is stored: nothing is written that could not be
    // handed out.
    let token = Secret::new(services.ctx.random.opaque_token());
    let token_hash = token.hash();
    let issued = match connect_url {
        Some(url) => {
            let location = connect::connect_redirect(url, &company.id, &token, &user.id);
            if !is_header_value(location.as_str()) {
                return Err(
                    ServerError::internal("Connect redirect is not a valid header value").into(),
                );
            }
            IssuedAuthToken::Redirect(location)
        }
        None => IssuedAuthToken::Json(token),
    };
    let now = services.ctx.clock.now();
    // A 24-hour credential for the whole company: stored with its audit event, in one write.
    let ctx = &services.ctx;
    let issued_event = audit::event(
        ctx,
        AuditKind::CompanyAuthTokenIssued { issued_by: user.id },
    )
    .client(client.id)
    .principal(PrincipalType::Company, company.id);
    let token = AuthToken {
        token_hash,
        company_id: company.id,
        client_id: client.id,
        issued_by: user.id,
        issued_at: now,
        expires_at: now + AUTH_TOKEN_TTL_SECONDS,
    };
    let batch = WriteBatch::of([token.into(), issued_event.clone().into()]);
    match store.writes().commit(batch).await? {
        Committed::Applied { .. } => audit::logged(&[issued_event]),
        _ => {
            return Err(ServerError::internal(
                "a company auth token's write has no condition that can refuse it",
            )
            .into())
        }
    }
    tracing::info!(
        company_id = %company.id,
        issued_by = %user.id,
        redirect = params.redirect,
        "company auth token issued"
    );
    Ok(issued)
}

/// Steps 1-2a: the bearer token is a live user's, issued to an enabled first-party client. The
/// reason for a refusal goes to the log only; the caller learns "no, bad or expired", or 403 for
/// a token of another app (checked before the company, so such a caller learns nothing of it).
async fn authenticate_user(
    services: &Services,
    authorization: Option<&str>,
) -> Result<User, CompanyAuthTokenError> {
    let denial = match authenticate_bearer(services, authorization).await {
        Err(Refusal::Server(error)) => return Err(error.into()),
        Err(Refusal::Denied(denial)) => CompanyAuthTokenDenial::Bearer(denial),
        Ok(bearer) if bearer.principal_type() != PrincipalType::User => {
            CompanyAuthTokenDenial::NotAUserToken(bearer.principal_type())
        }
        Ok(bearer) => {
            let id = PrincipalId::new(bearer.subject());
            let store = &services.ctx.store;
            match store.principals().get_user(&id).await? {
                None => CompanyAuthTokenDenial::UserGone,
                Some(user) => {
                    let client = store.clients().get_client(&bearer.client_id()).await?;
                    if client.is_some_and(|c| c.first_party && c.enabled) {
                        return Ok(user);
                    }
                    CompanyAuthTokenDenial::NotFirstPartyClient
                }
            }
        }
    };
    tracing::info!(reason = %denial, "company auth token: bearer token refused");
    Err(denial.into())
}

/// Step 3: the company named by the path.
async fn find_company(
    services: &Services,
    company_id: &str,
) -> Result<Company, CompanyAuthTokenError> {
    let Ok(id) = PrincipalId::parse(company_id) else {
        return Err(CompanyAuthTokenDenial::UnknownCompany.into());
    };
    let company = services.ctx.store.principals().get_company(&id).await?;
    Ok(company.ok_or(CompanyAuthTokenDenial::UnknownCompany)?)
}

/// The app named by `client_id`: missing 62, not a UUID or unknown 61, disabled 59 (an auth
/// token for a disabled app could never be exchanged). Recorded on the request span once it is
/// known to be a UUID (arbitrary input is not logged).
async fn resolve_client(
    services: &Services,
    params: &CompanyAuthTokenParams,
) -> Result<Client, CompanyAuthTokenError> {
    let id = params
        .client_id
        .as_deref()
        .ok_or(ErrorCode::ClientIdMissing)?;
    let id = ClientId::parse(id).map_err(|_| ErrorCode::ClientNotFound)?;
    tracing::Span::current().record("client_id", tracing::field::display(id));
    let client = services
        .registered_client(&id, || {
            CompanyAuthTokenError::from(ErrorCode::ClientNotFound)
        })
        .await?;
    if !client.enabled {
        return Err(ErrorCode::ClientDisabled.into());
    }
    Ok(client)
}

/// What an HTTP header value may hold (visible ASCII, space, tab). A serialized URL always
/// does; checked so that a token is never stored for a redirect that cannot be sent.
fn is_header_value(text: &str) -> bool {
    text.bytes()
        .all(|b| b == b'\t' || (b' '..=b'~').contains(&b))
}
