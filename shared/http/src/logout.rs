//! `GET` and `POST /oauth2/v0/logout` (OpenID Connect RP-Initiated Logout 1.0): runs
//! [`crate::flows::logout`] and answers a `302` to the registered address, the signed-out page,
//! or a 400 page (never a redirect).

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use axum::Form;
use http::{header, HeaderMap, StatusCode};
use serde::Serialize;
use utoipa::ToSchema;

use super::authorize::{cookie, html_response, insert};
use super::error_response::ServerErrorBody;
use super::observability::Outcome;
use super::pages::{render_logout_refused, render_signed_out};
use crate::cookies::Jar;
use crate::error_response::ErrorResponse;
use crate::flows::logout::{
    logout, LogoutAnswer, LogoutDenial, LogoutError, LogoutOutcome, LogoutParams,
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
        (status = 200, description = "The signed-out page", content_type = "text/html", body = String),
        (status = 302, description = "To the registered `post_logout_redirect_uri`, with `state`",
            headers(("Location" = String))),
        (status = 400, description = "A hint that does not verify, an unknown client, an unregistered address",
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
        Ok(Query(params)) => respond(&services, logout(&services, &params, session).await),
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
        (status = 200, description = "The signed-out page", content_type = "text/html", body = String),
        (status = 302, description = "To the registered `post_logout_redirect_uri`, with `state`",
            headers(("Location" = String))),
        (status = 400, description = "A hint that does not verify, an unknown client, an unregistered address, an unreadable form",
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
        Ok(Form(params)) => respond(&services, logout(&services, &params, session).await),
        Err(_) => LogoutDenial::BadRequest.into_response(),
    }
}

fn respond(services: &Services, answer: Result<LogoutAnswer, LogoutError>) -> Response {
    let answer = match answer {
        Ok(answer) => answer,
        Err(refusal) => return refusal.into_response(),
    };
    let mut response = match answer.outcome {
        LogoutOutcome::Redirect(location) => {
            let mut response = StatusCode::FOUND.into_response();
            insert(response.headers_mut(), header::LOCATION, &location);
            insert(response.headers_mut(), header::CACHE_CONTROL, "no-store");
            Outcome::Code(302).attach(response)
        }
        LogoutOutcome::SignedOut => {
            let response = html_response(StatusCode::OK, None, render_signed_out());
            Outcome::Code(200).attach(response)
        }
    };
    if answer.clear_session_cookie {
        Jar::for_site(services).end_session().apply(&mut response);
    }
    response
}

/// A page with status 400, never a redirect: the address to return to is not trusted.
impl ErrorResponse for LogoutDenial {
    fn into_response(self) -> Response {
        let html = render_logout_refused(&self.to_string());
        Outcome::Code(400).attach(html_response(StatusCode::BAD_REQUEST, None, html))
    }
}
