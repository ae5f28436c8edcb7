//! `GET /federation/v0/oidc/callback`: where a company's OpenID Provider sends the browser back
//! with the code (or its refusal). The answer is checked by [`crate::flows::sign_in::returned`]
//! and the browser goes back to the page its sign-in left; every failure is an error page with
//! a readable message and a reference (the `federation.refused` event's id), never what the
//! IdP sent.

use std::sync::Arc;

use axum::extract::{RawQuery, State};
use axum::response::{IntoResponse, Response};
use http::StatusCode;

use super::error_response::ServerErrorBody;
use super::pages::render_signed_out;
use super::pages::PageAnswer;
use super::params::{field, form_pairs};
use crate::error_response::ErrorResponse;
use crate::flows::sign_in::{self, Callback, Returned};
use crate::flows::upstream_logout;
use crate::services::Services;

/// The error page of a refused upstream answer: its sentence and the reference of its
/// `federation.refused` event.
pub(super) fn refused_page(message: &str, reference: &str) -> Response {
    PageAnswer::refused(&format!("{message} Reference: {reference}"), None).into_response()
}

#[utoipa::path(
    get,
    path = "/federation/v0/oidc/logged-out",
    tag = "federation",
    params(
        ("state" = Option<String>, Query, description = "What we sent the IdP's `end_session_endpoint`, sealed: where the sign-out ends"),
    ),
    responses(
        (status = 302, description = "To the client's registered `post_logout_redirect_uri` the sign-out was sent with",
            headers(("Location" = String))),
        (status = 200, description = "The signed-out page", content_type = "text/html", body = String),
        (status = 500, body = ServerErrorBody),
        (status = 503, body = ServerErrorBody),
    ),
)]
/// Back from a company IdP's own sign-out (RP-initiated logout there).
pub async fn oidc_logged_out(
    State(services): State<Arc<Services>>,
    RawQuery(query): RawQuery,
) -> Response {
    let pairs = form_pairs(query.unwrap_or_default().as_bytes()).unwrap_or_default();
    match upstream_logout::returned(&services, field(&pairs, "state")).await {
        Ok(Some(location)) => PageAnswer::redirect(StatusCode::FOUND, location).into_response(),
        Ok(None) => PageAnswer::page(render_signed_out()).into_response(),
        Err(error) => error.into_response(),
    }
}

#[utoipa::path(
    get,
    path = "/federation/v0/oidc/callback",
    tag = "federation",
    params(
        ("state" = Option<String>, Query, description = "The `state` of our authorization request to the IdP: names the sign-in, once"),
        ("code" = Option<String>, Query, description = "The IdP's authorization code"),
        ("error" = Option<String>, Query, description = "The IdP refused, or the user cancelled (RFC 6749 §4.1.2.1); its text is never shown"),
    ),
    responses(
        (status = 303, description = "Back to the page the sign-in left (authorize, account or device) with `upstream`, the sealed step it continues with",
            headers(("Location" = String))),
        (status = 400, description = "Error page: an unknown, used or expired sign-in, the IdP's refusal, an ID token that fails a check, no account; with a reference",
            content_type = "text/html", body = String),
        (status = 500, body = ServerErrorBody),
        (status = 503, body = ServerErrorBody),
    ),
)]
pub async fn oidc_callback(
    State(services): State<Arc<Services>>,
    RawQuery(query): RawQuery,
) -> Response {
    let pairs = form_pairs(query.unwrap_or_default().as_bytes()).unwrap_or_default();
    let callback = Callback {
        state: field(&pairs, "state"),
        code: field(&pairs, "code"),
        error: field(&pairs, "error"),
    };
    match sign_in::returned(&services, callback).await {
        Ok(Returned::Resume { location, .. }) => {
            PageAnswer::redirect(StatusCode::SEE_OTHER, location).into_response()
        }
        Ok(Returned::Refused { message, reference }) => refused_page(message, &reference),
        Err(error) => error.into_response(),
    }
}
