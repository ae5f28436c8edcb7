//! `GET` and `POST /oauth2/v0/logout` (OpenID Connect RP-Initiated Logout 1.0): runs
//! [`crate::flows::logout`] and answers a `302` to the registered address, the signed-out page,
//! the confirmation page (no valid hint), or a 400 page (never a redirect).

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use axum::Form;
use http::{HeaderMap, StatusCode};
use serde::Serialize;
use utoipa::ToSchema;

use super::authorize::cookie;
use super::error_response::ServerErrorBody;
use super::pages::{render_logout_confirm, render_logout_refused, render_signed_out, PageAnswer};
use crate::cookies::Jar;
use crate::error_response::ErrorResponse;
use crate::flows::logout::{
    logout, LogoutAnswer, LogoutDenial, LogoutError, LogoutMethod, LogoutOutcome, LogoutParams,
};
use crate::flows::sessions::SESSION_COOKIE_NAME;
use crate::services::Services;

/// The parameters, in the query (GET) or a form (POST).
#[derive(Serialize, ToSchema)]
pub struct LogoutForm {
    /// An ID token this service issued, at most a day ago: the families its user started with
    /// its client by the time it was issued are revoked, and the sign-in session it names
    /// (`sid`) ends.
    pub id_token_hint: Option<String>,
    /// The client, when no hint names it (a hint's audience must agree).
    pub client_id: Option<String>,
    /// One registered with `--post-logout-redirect-uri`, else a 400 page.
    pub post_logout_redirect_uri: Option<String>,
    /// Returned to the relying party with the redirect.
    pub state: Option<String>,
    /// Only from the confirmation page's form: its token for the browser's session.
    pub csrf_token: Option<String>,
}

/// Ends the user's sessions with the application that sent the browser here.
#[utoipa::path(
    get,
    path = "/oauth2/v0/logout",
    tag = "openid",
    params(
        ("id_token_hint" = Option<String>, Query),
        ("client_id" = Option<String>, Query),
        ("post_logout_redirect_uri" = Option<String>, Query),
        ("state" = Option<String>, Query),
    ),
    responses(
        (status = 200, description = "The signed-out page, or the confirmation page (no valid `id_token_hint`: nothing ended yet)", content_type = "text/html", body = String),
        (status = 302, description = "To the registered `post_logout_redirect_uri`, with `state`",
            headers(("Location" = String))),
        (status = 400, description = "A hint for another client, an unknown client, an unregistered address",
            content_type = "text/html", body = String),
        (status = 500, body = ServerErrorBody),
        (status = 503, body = ServerErrorBody),
    ),
)]
pub async fn get_logout(
    State(services): State<Arc<Services>>,
    headers: HeaderMap,
    params: Result<Query<LogoutParams>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let session = cookie(&headers, SESSION_COOKIE_NAME);
    match params {
        Ok(Query(params)) => {
            let answer = logout(&services, &params, session, LogoutMethod::Get).await;
            respond(&services, answer)
        }
        Err(_) => LogoutDenial::BadRequest.into_response(),
    }
}

/// The same, as a form post.
#[utoipa::path(
    post,
    path = "/oauth2/v0/logout",
    tag = "openid",
    request_body(content((LogoutForm = "application/x-www-form-urlencoded"))),
    responses(
        (status = 200, description = "The signed-out page, or the confirmation page (no valid `id_token_hint`: nothing ended yet)", content_type = "text/html", body = String),
        (status = 302, description = "To the registered `post_logout_redirect_uri`, with `state`",
            headers(("Location" = String))),
        (status = 400, description = "A hint for another client, an unknown client, an unregistered address, an unreadable form",
            content_type = "text/html", body = String),
        (status = 500, body = ServerErrorBody),
        (status = 503, body = ServerErrorBody),
    ),
)]
pub async fn post_logout(
    State(services): State<Arc<Services>>,
    headers: HeaderMap,
    form: Result<Form<LogoutParams>, axum::extract::rejection::FormRejection>,
) -> Response {
    let session = cookie(&headers, SESSION_COOKIE_NAME);
    match form {
        Ok(Form(params)) => {
            let answer = logout(&services, &params, session, LogoutMethod::Post).await;
            respond(&services, answer)
        }
        Err(_) => LogoutDenial::BadRequest.into_response(),
    }
}

fn respond(services: &Services, answer: Result<LogoutAnswer, LogoutError>) -> Response {
    let answer = match answer {
        Ok(answer) => answer,
        Err(refusal) => return refusal.into_response(),
    };
    let page = match answer.outcome {
        LogoutOutcome::Redirect(location) => PageAnswer::redirect(StatusCode::FOUND, location),
        LogoutOutcome::SignedOut => PageAnswer::page(render_signed_out()),
        // Confirmed, a session a company's IdP started continues at the IdP's own sign-out: a
        // redirect after the form, which `form-action` governs.
        LogoutOutcome::Confirm(confirmation) => {
            PageAnswer::page(render_logout_confirm(&confirmation)).sign_in_page(services)
        }
    };
    let page = if answer.clear_session_cookie {
        page.cookies(Jar::for_site(services).end_session())
    } else {
        page
    };
    page.into_response()
}

/// A page with status 400, never a redirect: the address to return to is not trusted.
impl ErrorResponse for LogoutDenial {
    fn into_response(self) -> Response {
        PageAnswer::refused_with(render_logout_refused(&self.to_string()), None).into_response()
    }
}
