//! Passkeys over HTTP (docs/decisions.md, "Passkeys"): the pages' script, and the two JSON
//! endpoints it asks for a ceremony's options. The answers go through the pages' own forms
//! (`POST /oauth2/v0/authorize`, `POST /oauth2/v0/account`).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use http::{header, HeaderMap, HeaderValue, StatusCode};

use super::authorize::{cookie, is_form};
use super::error_response::{ErrorResponse, ServerErrorBody};
use super::observability::Outcome;
use super::source_address::SourceAddress;
use crate::errors::Refusal;
use crate::flows::account::passkeys::{registration_options_for, sign_in_options};
use crate::flows::account::{AccountDenial, AccountError};
use crate::flows::authorize::authorize_keys;
use crate::flows::passkeys::CeremonyStart;
use crate::flows::sessions::SESSION_COOKIE_NAME;
use crate::services::Services;

/// Where the script is served; the pages load it from here.
pub const SCRIPT_PATH: &str = "/oauth2/v0/passkeys.js";
pub const SIGN_IN_OPTIONS_PATH: &str = "/oauth2/v0/passkeys/options";
pub const REGISTRATION_OPTIONS_PATH: &str = "/oauth2/v0/account/passkeys/options";

const SCRIPT: &str = include_str!("../static/passkeys.js");

/// The form the account page's script posts for registration options.
#[derive(Debug, Default, serde::Deserialize, utoipa::ToSchema)]
pub struct OptionsForm {
    /// The account page's CSRF token.
    pub csrf_token: Option<String>,
}

#[utoipa::path(
    get,
    path = "/oauth2/v0/passkeys.js",
    operation_id = "passkeys_script",
    tag = "account",
    responses(
        (status = 200, description = "The pages' passkey script", content_type = "text/javascript", body = String),
    ),
)]
pub async fn script() -> Response {
    let mut response = (StatusCode::OK, SCRIPT).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/javascript; charset=utf-8"),
    );
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=300"),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    Outcome::Code(200).attach(response)
}

#[utoipa::path(
    post,
    path = "/oauth2/v0/passkeys/options",
    operation_id = "passkey_sign_in_options",
    tag = "account",
    responses(
        (status = 200, description = "A sign-in ceremony: its id and the options for `navigator.credentials.get`", body = CeremonyStart),
        (status = 400, description = "Passkeys are not offered at this address (its host is an IP address and WEBAUTHN_RP_ID is not set)",
            content_type = "text/html", body = String),
        (status = 429, description = "Too many sign-in attempts from this address",
            content_type = "text/html", body = String, headers(("Retry-After" = i64))),
        (status = 500, body = ServerErrorBody),
        (status = 503, body = ServerErrorBody),
    ),
)]
pub async fn sign_in(
    State(services): State<Arc<Services>>,
    SourceAddress(source): SourceAddress,
) -> Response {
    options(sign_in_options(&services, source).await)
}

#[utoipa::path(
    post,
    path = "/oauth2/v0/account/passkeys/options",
    operation_id = "passkey_registration_options",
    tag = "account",
    params(
        ("__Host-session" = Option<String>, Cookie, description = "The sign-in session of the user adding a passkey"),
    ),
    request_body(content((OptionsForm = "application/x-www-form-urlencoded"))),
    responses(
        (status = 200, description = "A registration ceremony: its id and the options for `navigator.credentials.create`", body = CeremonyStart),
        (status = 400, description = "No session, a form without the page's CSRF token, or passkeys not offered at this address",
            content_type = "text/html", body = String),
        (status = 500, body = ServerErrorBody),
        (status = 503, body = ServerErrorBody),
    ),
)]
pub async fn registration(
    State(services): State<Arc<Services>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let form = Some(&body)
        .filter(|_| is_form(&headers))
        .and_then(|body| serde_urlencoded::from_bytes::<OptionsForm>(body).ok())
        .unwrap_or_default();
    let keys = match authorize_keys(&services).await {
        Ok(keys) => keys,
        Err(error) => return options(Err(error.into())),
    };
    let csrf = form.csrf_token.as_deref().unwrap_or_default();
    let session = cookie(&headers, SESSION_COOKIE_NAME);
    options(registration_options_for(&services, &keys, session, csrf).await)
}

fn options(started: Result<CeremonyStart, AccountError>) -> Response {
    match started {
        Ok(start) => {
            let mut response = Json(start).into_response();
            response
                .headers_mut()
                .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            Outcome::Code(200).attach(response)
        }
        Err(Refusal::Denied(denial)) => denial_response(denial),
        Err(Refusal::Server(error)) => error.into_response(),
    }
}

fn denial_response(denial: AccountDenial) -> Response {
    denial.into_response()
}
