//! `GET` and `POST /oauth2/v0/device`: the device grant's verification page
//! ([`crate::flows::device`]) as HTML with the pages' security headers.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::response::Response;
use http::{header, HeaderMap, HeaderValue, StatusCode};
use serde::Deserialize;
use utoipa::IntoParams;

use crate::authorize::{cookie, html_response};
use crate::cookies::Jar;
use crate::error_response::{ErrorResponse, ServerErrorBody};
use crate::errors::Refusal;
use crate::flows::authorize::authorize_keys;
use crate::flows::device::{
    self, DeviceCookies, DeviceDenial, DeviceForm, DevicePageError, DeviceStep,
    DEVICE_NONCE_COOKIE, DEVICE_PATH,
};
use crate::flows::sessions::SESSION_COOKIE_NAME;
use crate::observability::Outcome;
use crate::pages::{
    render_device_code, render_device_consent, render_device_done, render_device_sign_in,
    render_error, render_recovery_codes, render_second_factor, render_totp_enrol, ContinueForm,
    DeviceSignInPage, TotpEnrolPage,
};
use crate::services::Services;
use crate::source_address::SourceAddress;

/// The verification URI's query: `verification_uri_complete` fills in the code.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DevicePageQuery {
    /// The code the device shows, pre-filled in the form.
    pub user_code: Option<String>,
}

#[utoipa::path(
    get,
    path = "/oauth2/v0/device",
    tag = "device",
    params(DevicePageQuery),
    responses(
        (status = 200, description = "The form to enter the code the device shows",
            content_type = "text/html", body = String,
            headers(("Set-Cookie" = String), ("Content-Security-Policy" = String))),
        (status = 500, body = ServerErrorBody),
        (status = 503, body = ServerErrorBody),
    ),
)]
pub async fn show(State(services): State<Arc<Services>>, RawQuery(query): RawQuery) -> Response {
    let keys = match authorize_keys(&services).await {
        Ok(keys) => keys,
        Err(error) => return respond(&services, Err(error.into())),
    };
    // An unreadable query pre-fills nothing rather than refusing the page.
    let query = query
        .and_then(|query| serde_urlencoded::from_str::<DevicePageQuery>(&query).ok())
        .and_then(|query| query.user_code);
    let user_code = query.as_deref();
    respond(&services, Ok(device::show(&services, &keys, user_code)))
}

#[utoipa::path(
    post,
    path = "/oauth2/v0/device",
    tag = "device",
    params(
        ("__Host-session" = Option<String>, Cookie, description = "The sign-in session; without one, the sign-in form after the code"),
        ("device_form" = Option<String>, Cookie, description = "The code and sign-in forms' nonce"),
    ),
    request_body(content((DeviceForm = "application/x-www-form-urlencoded"))),
    responses(
        (status = 200, description = "The next step: the code form again (a readable message), the sign-in form, the consent screen, or \"return to your device\"",
            content_type = "text/html", body = String, headers(("Set-Cookie" = String))),
        (status = 400, description = "A form without its CSRF token, unreadable, or for a code decided meanwhile",
            content_type = "text/html", body = String),
        (status = 429, description = "Too many wrong codes or password attempts from this address",
            content_type = "text/html", body = String, headers(("Retry-After" = i64))),
        (status = 500, body = ServerErrorBody),
        (status = 503, body = ServerErrorBody),
    ),
)]
pub async fn act(
    State(services): State<Arc<Services>>,
    SourceAddress(source): SourceAddress,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Ok(form) = serde_urlencoded::from_bytes::<DeviceForm>(&body) else {
        return DeviceDenial::BadForm.into_response();
    };
    let keys = match authorize_keys(&services).await {
        Ok(keys) => keys,
        Err(error) => return respond(&services, Err(error.into())),
    };
    let cookies = DeviceCookies {
        session: cookie(&headers, SESSION_COOKIE_NAME),
        nonce: cookie(&headers, DEVICE_NONCE_COOKIE),
    };
    let step = device::act(&services, &keys, cookies, &form, source).await;
    respond(&services, step)
}

fn respond(services: &Services, step: Result<DeviceStep, DevicePageError>) -> Response {
    let step = match step {
        Ok(step) => step,
        Err(Refusal::Denied(denial)) => return denial.into_response(),
        Err(Refusal::Server(error)) => return error.into_response(),
    };
    let (html, nonce, session) = match step {
        DeviceStep::EnterCode {
            csrf_token,
            new_nonce,
            user_code,
            error,
        } => (
            render_device_code(DEVICE_PATH, &csrf_token, &user_code, error),
            new_nonce,
            None,
        ),
        DeviceStep::SignIn {
            csrf_token,
            new_nonce,
            user_code,
            app_name,
            login,
            error,
        } => (
            render_device_sign_in(&DeviceSignInPage {
                app_name: &app_name,
                form_action: DEVICE_PATH,
                csrf_token: &csrf_token,
                user_code: &user_code,
                login: &login,
                error,
            }),
            new_nonce,
            None,
        ),
        DeviceStep::SecondFactor {
            csrf_token,
            user_code,
            app_name,
            pending,
            error,
        } => {
            let hidden = [
                ("action", "sign_in_code"),
                ("user_code", user_code.as_str()),
                ("pending", pending.as_str()),
            ];
            let html = render_second_factor(&app_name, DEVICE_PATH, &csrf_token, &hidden, error);
            (html, None, None)
        }
        DeviceStep::Enrol {
            csrf_token,
            user_code,
            pending,
            enrolment,
            error,
        } => {
            let hidden = [
                ("action", "sign_in_totp_confirm"),
                ("user_code", user_code.as_str()),
                ("pending", pending.as_str()),
            ];
            let html = render_totp_enrol(&TotpEnrolPage {
                action: DEVICE_PATH,
                csrf_token: &csrf_token,
                otpauth_uri: &enrolment.otpauth_uri,
                secret: &enrolment.secret_base32,
                sealed: &enrolment.sealed,
                error,
                hidden: &hidden,
                required: true,
            });
            (html, None, None)
        }
        DeviceStep::RecoveryCodes {
            csrf_token,
            user_code,
            pending,
            codes,
        } => {
            let hidden = [
                ("action", "sign_in_enrolled"),
                ("user_code", user_code.as_str()),
                ("pending", pending.as_str()),
            ];
            let form = ContinueForm {
                csrf_token: &csrf_token,
                hidden: &hidden,
            };
            (
                render_recovery_codes(DEVICE_PATH, &codes, Some(form)),
                None,
                None,
            )
        }
        DeviceStep::Consent {
            csrf_token,
            user_code,
            app_name,
            scopes,
            session_cookie,
        } => (
            render_device_consent(&app_name, DEVICE_PATH, &csrf_token, &user_code, &scopes),
            None,
            session_cookie,
        ),
        DeviceStep::Done { approved } => (render_device_done(approved), None, None),
    };
    let mut response = html_response(StatusCode::OK, None, html);
    let mut jar = Jar::for_site(services);
    if let Some(nonce) = nonce {
        jar = jar.device_nonce(&nonce);
    }
    if let Some(value) = session {
        jar = jar.session(&value, services.policy.sessions);
    }
    jar.apply(&mut response);
    Outcome::Code(200).attach(response)
}

/// A page with status 400, or 429 with `Retry-After` for the address limits.
impl ErrorResponse for DeviceDenial {
    fn into_response(self) -> Response {
        let html = render_error(&self.to_string());
        let Self::SlowDown { retry_after } = self else {
            return Outcome::Code(400).attach(html_response(StatusCode::BAD_REQUEST, None, html));
        };
        let mut response = html_response(StatusCode::TOO_MANY_REQUESTS, None, html);
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(retry_after.max(1)));
        Outcome::Code(429).attach(response)
    }
}
