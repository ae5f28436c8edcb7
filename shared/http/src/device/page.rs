//! `GET` and `POST /oauth2/v0/device`: the device grant's verification page
//! ([`crate::flows::device`]) as HTML with the pages' security headers.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode};
use serde::Deserialize;
use utoipa::IntoParams;

use crate::authorize::cookie;
use crate::cookies::Jar;
use crate::error_response::{ErrorResponse, ServerErrorBody};
use crate::errors::Refusal;
use crate::flows::authorize::authorize_keys;
use crate::flows::device::{
    self, DeviceCookies, DeviceDenial, DeviceForm, DevicePageError, DeviceStep,
    DEVICE_NONCE_COOKIE, DEVICE_PATH,
};
use crate::flows::sessions::SESSION_COOKIE_NAME;
use crate::pages::{
    render_device_code, render_device_consent, render_device_done, render_device_sign_in,
    render_sign_in_step, DeviceSignInPage, PageAnswer, StepFields, StepForm,
};
use crate::services::Services;
use crate::source_address::SourceAddress;

/// The verification URI's query: `verification_uri_complete` fills in the code.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DevicePageQuery {
    /// The code the device shows, pre-filled in the form.
    pub user_code: Option<String>,
    /// Back from a company identity provider: the sealed sign-in step this browser started
    /// here for `user_code`.
    pub upstream: Option<String>,
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
pub async fn show(
    State(services): State<Arc<Services>>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let keys = match authorize_keys(&services).await {
        Ok(keys) => keys,
        Err(error) => return respond(&services, Err(error.into())),
    };
    // An unreadable query pre-fills nothing rather than refusing the page.
    let query = query
        .and_then(|query| serde_urlencoded::from_str::<DevicePageQuery>(&query).ok())
        .unwrap_or(DevicePageQuery {
            user_code: None,
            upstream: None,
        });
    let user_code = query.user_code.as_deref();
    if let Some(carried) = query.upstream.as_deref().filter(|step| !step.is_empty()) {
        let step = device::resume_upstream(&services, &keys, cookies(&headers), carried, user_code);
        return respond(&services, step.await);
    }
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
    let step = device::act(&services, &keys, cookies(&headers), &form, source).await;
    respond(&services, step)
}

fn cookies(headers: &HeaderMap) -> DeviceCookies<'_> {
    DeviceCookies {
        session: cookie(headers, SESSION_COOKIE_NAME),
        nonce: cookie(headers, DEVICE_NONCE_COOKIE),
    }
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
            idp_choices,
        } => (
            render_device_sign_in(&DeviceSignInPage {
                app_name: &app_name,
                form_action: DEVICE_PATH,
                csrf_token: &csrf_token,
                user_code: &user_code,
                login: &login,
                error,
                idp_choices: &idp_choices,
            }),
            new_nonce,
            None,
        ),
        DeviceStep::Upstream { location } => {
            return PageAnswer::redirect(StatusCode::SEE_OTHER, location).into_response()
        }
        DeviceStep::SignInStep {
            csrf_token,
            user_code,
            app_name,
            carried,
            step,
        } => {
            let page_fields = [("user_code", user_code.as_str())];
            let form = StepForm {
                app_name: &app_name,
                action: DEVICE_PATH,
                csrf_token: &csrf_token,
                fields: StepFields::InForm {
                    page_fields: &page_fields,
                    carried: &carried,
                },
            };
            (render_sign_in_step(&form, &step), None, None)
        }
        DeviceStep::Consent {
            csrf_token,
            user_code,
            app_name,
            scopes,
            self_registered,
            session_cookie,
        } => (
            render_device_consent(
                &app_name,
                DEVICE_PATH,
                &csrf_token,
                &user_code,
                &scopes,
                self_registered,
            ),
            None,
            session_cookie,
        ),
        DeviceStep::Done { approved } => (render_device_done(approved), None, None),
    };
    let mut jar = Jar::for_site(services);
    if let Some(nonce) = nonce {
        jar = jar.device_nonce(&nonce);
    }
    if let Some(value) = session {
        jar = jar.session(&value, services.policy.sessions);
    }
    // Its sign-in form may lead on to a company's identity provider.
    PageAnswer::page(html)
        .sign_in_page(services)
        .cookies(jar)
        .into_response()
}

/// A page with status 400, or 429 with `Retry-After` for the address limits.
impl ErrorResponse for DeviceDenial {
    fn into_response(self) -> Response {
        let retry_after = match self {
            Self::SlowDown { retry_after } => Some(retry_after),
            _ => None,
        };
        PageAnswer::refused(&self.to_string(), retry_after).into_response()
    }
}
