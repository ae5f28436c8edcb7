//! `GET` and `POST /oauth2/v0/authorize` (docs/decisions.md, "Authorization code flow"): reads the
//! query, the form and the pending-request cookie, runs [`crate::flows::authorize`], and answers
//! its step as a page (with the security headers) or a `302`.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Query, RawQuery, State};
use axum::response::{IntoResponse, Response};
use http::{header, HeaderMap, StatusCode};

use super::error_response::ServerErrorBody;
use super::pages::{
    render_consent, render_sign_in, render_sign_in_step, ConsentPage, PageAnswer, SignInPage,
    StepFields, StepForm,
};
use super::params::form_pairs;
use super::source_address::SourceAddress;
pub(super) use crate::cookies::read as cookie;
use crate::cookies::Jar;
use crate::error_response::ErrorResponse;
use crate::errors::Refusal;
use crate::flows::authorize::{
    self, AuthorizeError, AuthorizeParams, AuthorizeStep, RefusalReason, SubmittedCookies,
    SubmittedForm, PENDING_COOKIE_NAME, PENDING_COOKIE_PATH,
};
use crate::flows::sessions::SESSION_COOKIE_NAME;
use crate::requests::RESOURCE;
use crate::services::Services;

#[utoipa::path(
    get,
    path = "/oauth2/v0/authorize",
    tag = "authorize",
    params(
        ("client_id" = Option<String>, Query),
        ("redirect_uri" = Option<String>, Query, description = "Exactly one registered with `--redirect-uri`"),
        ("response_type" = Option<String>, Query, description = "`code`"),
        ("scope" = Option<String>, Query),
        ("state" = Option<String>, Query),
        ("nonce" = Option<String>, Query),
        ("prompt" = Option<String>, Query, description = "`login`, `consent` or `none`"),
        ("display" = Option<String>, Query, description = "`page`, `popup`, `touch` or `wap`"),
        ("code_challenge" = Option<String>, Query, description = "PKCE (RFC 7636)"),
        ("code_challenge_method" = Option<String>, Query, description = "`S256`"),
        ("max_age" = Option<String>, Query, description = "Seconds since the user last signed in with a password, beyond which they sign in again; `0` is `prompt=login`"),
        ("login_hint" = Option<String>, Query, description = "Pre-fills the sign-in form's login"),
        ("idp_hint" = Option<String>, Query, description = "A company identity provider's id (`tokenctl companies idps list`): without a live session, `303` straight to that IdP; an unknown one, the sign-in page saying so"),
        ("id_token_hint" = Option<String>, Query, description = "An ID token issued to this client: only its user may sign in"),
        ("request" = Option<String>, Query, description = "RFC 9101: a JWT signed with a key of the client's JWK Set (ES256, PS256, EdDSA; `iss` the client, `aud` the issuer, `exp` at most 60 minutes ahead) whose claims replace the other parameters; refused with `invalid_request_object` (177)"),
        ("request_uri" = Option<String>, Query, description = "RFC 9126: a `request_uri` from `POST /oauth2/v0/par`, with the same `client_id`: its pushed parameters replace the others; used once, within 60 seconds"),
        ("dpop_jkt" = Option<String>, Query, description = "RFC 9449 §10: the DPoP key thumbprint the code is bound to"),
        ("resource" = Option<Vec<String>>, Query, explode, description = "RFC 8707 (repeatable): an absolute https URI without fragment (http on loopback), the API the tokens are for (their `aud`); allowed by `RESOURCES` and the client's `--resource`, else an error redirect `invalid_target` (code 160)"),
        ("upstream" = Option<String>, Query, description = "Back from a company identity provider (`/federation/v0/oidc/callback` sends the browser here): the sealed sign-in step, continued with the pending request of this browser's cookie; the other parameters are not read"),
        ("__Host-session" = Option<String>, Cookie, description = "The sign-in session: while live, no sign-in page is shown (single sign-on)"),
    ),
    responses(
        (status = 200, description = "The sign-in page; sets the pending-request cookie",
            content_type = "text/html", body = String,
            headers(("Set-Cookie" = String), ("Content-Security-Policy" = String))),
        (status = 302, description = "To `redirect_uri` with `code` (a live session and a remembered consent), or with `error`, `error_code`, `error_description`, `state` and `iss` (`login_required`, `consent_required` for `prompt=none`)",
            headers(("Location" = String), ("Set-Cookie" = String))),
        (status = 400, description = "Error page: the client and `redirect_uri` are not known to match; a `request_uri` unknown, used, expired or another client's; a client that must push its requests without one (175); a request object refused before the address was trusted (177)",
            content_type = "text/html", body = String),
        (status = 429, description = "Error page: a client ID metadata document to fetch past the source address's RATE_LIMIT_DOCUMENT_FETCHES_PER_HOUR",
            content_type = "text/html", body = String, headers(("Retry-After" = i64))),
        (status = 500, body = ServerErrorBody),
        (status = 503, body = ServerErrorBody),
    ),
)]
pub async fn start(
    State(services): State<Arc<Services>>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
    params: Result<Query<AuthorizeParams>, axum::extract::rejection::QueryRejection>,
) -> Response {
    if let Some(carried) = upstream_step(query.as_deref()) {
        return resume_upstream(&services, &headers, &carried).await;
    }
    // A query that is not even key=value pairs cannot name a trusted address.
    let Ok(Query(mut params)) = params else {
        return refused(RefusalReason::BadForm);
    };
    params.resources = resources(query.unwrap_or_default().as_bytes());
    start_request(&services, &headers, &params).await
}

/// The sealed step of `?upstream=…`, the address the company identity provider's callback
/// sends the browser back to; an authorization request never has it.
pub(super) fn upstream_step(query: Option<&str>) -> Option<String> {
    form_pairs(query?.as_bytes())
        .ok()?
        .into_iter()
        .find(|(name, value)| name == "upstream" && !value.is_empty())
        .map(|(_, value)| value)
}

/// Back from the company identity provider: the sign-in continues with the pending request of
/// this browser's cookie.
async fn resume_upstream(services: &Services, headers: &HeaderMap, carried: &str) -> Response {
    let keys = match authorize::authorize_keys(services).await {
        Ok(keys) => keys,
        Err(error) => return respond(services, Err(error.into())),
    };
    let cookies = SubmittedCookies {
        pending: cookie(headers, PENDING_COOKIE_NAME),
        session: cookie(headers, SESSION_COOKIE_NAME),
    };
    let step = authorize::resume_upstream(services, &keys, cookies, carried).await;
    respond(services, step)
}

/// Every non-empty `resource` of a query or form, in order: the one parameter that may repeat
/// (RFC 8707), which the typed parameters cannot hold.
fn resources(pairs: &[u8]) -> Vec<String> {
    form_pairs(pairs)
        .unwrap_or_default()
        .into_iter()
        .filter(|(name, value)| name == RESOURCE && !value.is_empty())
        .map(|(_, value)| value)
        .collect()
}

async fn start_request(
    services: &Services,
    headers: &HeaderMap,
    params: &AuthorizeParams,
) -> Response {
    let keys = match authorize::authorize_keys(services).await {
        Ok(keys) => keys,
        Err(error) => return respond(services, Err(error.into())),
    };
    let session = cookie(headers, SESSION_COOKIE_NAME);
    let step = authorize::start(services, &keys, params, session).await;
    respond(services, step)
}

#[utoipa::path(
    post,
    path = "/oauth2/v0/authorize",
    tag = "authorize",
    params(
        ("authorize_pending" = Option<String>, Cookie, description = "The sealed pending request, set by the previous page"),
        ("__Host-session" = Option<String>, Cookie, description = "The sign-in session: a sign-in by its user continues it"),
    ),
    request_body(content((SubmittedForm = "application/x-www-form-urlencoded"))),
    responses(
        (status = 200, description = "The sign-in page again (with a readable message) or the consent page",
            content_type = "text/html", body = String,
            headers(("Set-Cookie" = String), ("Content-Security-Policy" = String))),
        (status = 302, description = "To `redirect_uri` with `code`, `geolocation`, `state` and `iss`, or with `error` on denial",
            headers(("Location" = String), ("Set-Cookie" = String))),
        (status = 400, description = "Error page: malformed form, no or expired pending request, forged form, a consent already given",
            content_type = "text/html", body = String),
        (status = 429, description = "Error page: too many password attempts from this address, or too many sign-in posts for one pending request",
            content_type = "text/html", body = String, headers(("Retry-After" = i64))),
        (status = 500, body = ServerErrorBody),
        (status = 503, body = ServerErrorBody),
    ),
)]
/// The sign-in and consent forms. A form without a CSRF token that names a `client_id` is an
/// authorization request sent by POST (OpenID Connect Core 3.1.2.1): the `GET` parameters, with
/// the same answers.
pub async fn submit(
    State(services): State<Arc<Services>>,
    SourceAddress(source): SourceAddress,
    headers: HeaderMap,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Response {
    let Some(body) = body.ok().filter(|_| is_form(&headers)) else {
        return refused(RefusalReason::BadForm);
    };
    // OpenID Connect Core 3.1.2.1: an authorization request may come as a form POST too. The
    // sign-in and consent forms always carry a CSRF token; a request never does.
    if is_authorization_request(&body) {
        return match serde_urlencoded::from_bytes::<AuthorizeParams>(&body) {
            Ok(mut params) => {
                params.resources = resources(&body);
                start_request(&services, &headers, &params).await
            }
            Err(_) => refused(RefusalReason::BadForm),
        };
    }
    let Ok(form) = serde_urlencoded::from_bytes::<SubmittedForm>(&body) else {
        return refused(RefusalReason::BadForm);
    };
    let keys = match authorize::authorize_keys(&services).await {
        Ok(keys) => keys,
        Err(error) => return respond(&services, Err(error.into())),
    };
    let cookies = SubmittedCookies {
        pending: cookie(&headers, PENDING_COOKIE_NAME),
        session: cookie(&headers, SESSION_COOKIE_NAME),
    };
    let step = authorize::submit(&services, &keys, cookies, &form, source).await;
    respond(&services, step)
}

pub(super) fn is_form(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| {
            v.trim()
                .eq_ignore_ascii_case("application/x-www-form-urlencoded")
        })
}

/// A form naming a client and no CSRF token: an authorization request, not one of our forms.
fn is_authorization_request(body: &[u8]) -> bool {
    let Ok(fields) = serde_urlencoded::from_bytes::<Vec<(String, String)>>(body) else {
        return false;
    };
    let has = |name: &str| fields.iter().any(|(field, _)| field == name);
    has("client_id") && !has(authorize::CSRF_FIELD)
}

fn respond(services: &Services, step: Result<AuthorizeStep, AuthorizeError>) -> Response {
    match step {
        Ok(step) => answer(services, step).into_response(),
        Err(Refusal::Denied(reason)) => refused(reason),
        Err(Refusal::Server(error)) => error.into_response(),
    }
}

fn answer(services: &Services, step: AuthorizeStep) -> PageAnswer {
    let jar = Jar::for_site(services);
    let mut sign_in_form = false;
    let (page, html) = match step {
        AuthorizeStep::SignedIn {
            session_cookie,
            then,
        } => {
            let jar = jar.session(&session_cookie, services.policy.sessions);
            return answer(services, *then).cookies(jar);
        }
        AuthorizeStep::SignIn(page) => {
            let html = render_sign_in(&SignInPage {
                app_name: &page.app_name,
                form_action: PENDING_COOKIE_PATH,
                csrf_token: &page.csrf_token,
                login: &page.login,
                error: page.error,
                action_field: None,
                idp_choices: &page.idp_choices,
            });
            sign_in_form = true;
            (page, html)
        }
        AuthorizeStep::Consent(page) => {
            let scopes: Vec<&str> = page.scopes.iter().map(String::as_str).collect();
            let html = render_consent(&ConsentPage {
                app_name: &page.app_name,
                form_action: PENDING_COOKIE_PATH,
                csrf_token: &page.csrf_token,
                scopes: &scopes,
                unverified_host: page.unverified_host.as_deref(),
                resources: &page.resources,
                policy_uri: page.policy_uri.as_deref(),
                tos_uri: page.tos_uri.as_deref(),
            });
            (page, html)
        }
        AuthorizeStep::SignInStep { page, step } => {
            let form = StepForm {
                app_name: &page.app_name,
                action: PENDING_COOKIE_PATH,
                csrf_token: &page.csrf_token,
                fields: StepFields::InCookie,
            };
            let html = render_sign_in_step(&form, &step);
            (page, html)
        }
        AuthorizeStep::Redirect(location) => {
            return PageAnswer::redirect(StatusCode::FOUND, location).cookies(jar.end_pending())
        }
        AuthorizeStep::Upstream { location, sealed } => {
            let jar = match &sealed {
                Some(sealed) => jar.pending(sealed),
                None => jar,
            };
            return PageAnswer::redirect(StatusCode::SEE_OTHER, location).cookies(jar);
        }
    };
    let jar = match &page.sealed {
        Some(sealed) => jar.pending(sealed),
        None => jar,
    };
    let answer = PageAnswer::form_page(html, &page.redirect_uri);
    let answer = if sign_in_form {
        answer.sign_in_page(services)
    } else {
        answer
    };
    answer.cookies(jar)
}

/// The 400 error page: the address to return to is not trusted, so nothing redirects. A rate
/// limit's page is a 429 with `Retry-After`.
fn refused(reason: RefusalReason) -> Response {
    let retry_after = match reason {
        RefusalReason::SlowDown { retry_after }
        | RefusalReason::TooManyPosts { retry_after }
        | RefusalReason::TooManyDocuments { retry_after } => Some(retry_after),
        _ => None,
    };
    PageAnswer::refused(&reason.to_string(), retry_after).into_response()
}
