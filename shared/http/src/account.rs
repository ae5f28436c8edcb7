//! `GET` and `POST /oauth2/v0/account`: the account page ([`crate::flows::account`]) as HTML with
//! the pages' security headers, `303` back to itself after an action (so a reload never posts
//! twice), and the signed-out page when the browser's own session ended.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode};

use super::authorize::{cookie, is_form, upstream_step};
use super::error_response::ServerErrorBody;
use super::pages::{
    render_account, render_recovery_codes, render_sign_in, render_sign_in_step, render_signed_out,
    render_totp_enrol, scope_sentences, AccountPage, AppRow, PageAnswer, PasskeyRow, SessionRow,
    SignInPage, StepFields, StepForm, TotpEnrolPage,
};
use super::source_address::SourceAddress;
use crate::cookies::Jar;
use crate::domain::audit::rfc3339;
use crate::error_response::ErrorResponse;
use crate::errors::Refusal;
use crate::flows::account::{
    self, AccountCookies, AccountDenial, AccountError, AccountForm, AccountStep, Overview,
    ACCOUNT_PATH, SIGN_IN_NONCE_COOKIE,
};
use crate::flows::authorize::authorize_keys;
use crate::flows::sessions::SESSION_COOKIE_NAME;
use crate::services::Services;

#[utoipa::path(
    get,
    path = "/oauth2/v0/account",
    operation_id = "account_page",
    tag = "account",
    params(
        ("upstream" = Option<String>, Query, description = "Back from a company identity provider: the sealed sign-in step this browser started here"),
        ("__Host-session" = Option<String>, Cookie, description = "The sign-in session; without one, the sign-in form"),
        ("account_sign_in" = Option<String>, Cookie, description = "The sign-in form's nonce"),
    ),
    responses(
        (status = 200, description = "The account page (sessions and connected apps), or the sign-in form",
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
    let step = match upstream_step(query.as_deref()) {
        Some(carried) => {
            account::resume_upstream(&services, &keys, cookies(&headers), &carried).await
        }
        None => account::show(&services, &keys, cookies(&headers)).await,
    };
    respond(&services, step)
}

#[utoipa::path(
    post,
    path = "/oauth2/v0/account",
    operation_id = "account_forms",
    tag = "account",
    params(
        ("__Host-session" = Option<String>, Cookie, description = "The sign-in session the actions apply to"),
        ("account_sign_in" = Option<String>, Cookie, description = "The sign-in form's nonce"),
    ),
    request_body(content((AccountForm = "application/x-www-form-urlencoded"))),
    responses(
        (status = 200, description = "The sign-in form again (a readable message), or the signed-out page",
            content_type = "text/html", body = String),
        (status = 303, description = "Back to the account page after an action or a sign-in",
            headers(("Location" = String), ("Set-Cookie" = String))),
        (status = 400, description = "A form without its CSRF token, or unreadable",
            content_type = "text/html", body = String),
        (status = 429, description = "Too many password attempts from this address",
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
    let form = Some(&body)
        .filter(|_| is_form(&headers))
        .and_then(|body| serde_urlencoded::from_bytes::<AccountForm>(body).ok());
    let Some(form) = form else {
        return AccountDenial::BadForm.into_response();
    };
    let keys = match authorize_keys(&services).await {
        Ok(keys) => keys,
        Err(error) => return respond(&services, Err(error.into())),
    };
    let step = account::act(&services, &keys, cookies(&headers), &form, source).await;
    respond(&services, step)
}

fn cookies(headers: &HeaderMap) -> AccountCookies<'_> {
    AccountCookies {
        session: cookie(headers, SESSION_COOKIE_NAME),
        sign_in_nonce: cookie(headers, SIGN_IN_NONCE_COOKIE),
    }
}

fn respond(services: &Services, step: Result<AccountStep, AccountError>) -> Response {
    match step {
        Ok(step) => answer(services, step).into_response(),
        Err(Refusal::Denied(denial)) => denial.into_response(),
        Err(Refusal::Server(error)) => error.into_response(),
    }
}

fn answer(services: &Services, step: AccountStep) -> PageAnswer {
    let jar = Jar::for_site(services);
    match step {
        AccountStep::SignIn {
            csrf_token,
            new_nonce,
            login,
            error,
            idp_choices,
        } => {
            let html = render_sign_in(&SignInPage {
                app_name: "your account",
                form_action: ACCOUNT_PATH,
                csrf_token: &csrf_token,
                login: &login,
                error,
                action_field: Some("sign_in"),
                idp_choices: &idp_choices,
            });
            let page = PageAnswer::page(html).sign_in_page(services);
            match new_nonce {
                Some(nonce) => page.cookies(jar.account_nonce(&nonce)),
                None => page,
            }
        }
        AccountStep::Upstream { location } => PageAnswer::redirect(StatusCode::SEE_OTHER, location),
        AccountStep::Overview(overview) => {
            // Signing out of a session a company's IdP started continues at the IdP's own
            // sign-out (a redirect after the form, which `form-action` governs).
            let via_idp = overview
                .sessions
                .iter()
                .any(|listed| listed.current && listed.session.upstream.is_some());
            let page = PageAnswer::page(rendered(&overview));
            if via_idp {
                page.sign_in_page(services)
            } else {
                page
            }
        }
        AccountStep::Reload { session_cookie } => {
            let reload = PageAnswer::redirect(StatusCode::SEE_OTHER, ACCOUNT_PATH.to_owned());
            match session_cookie {
                Some(value) => reload.cookies(jar.session(&value, services.policy.sessions)),
                None => reload,
            }
        }
        AccountStep::TotpEnrol {
            csrf_token,
            enrolment,
            error,
        } => PageAnswer::page(render_totp_enrol(&TotpEnrolPage {
            action: ACCOUNT_PATH,
            csrf_token: &csrf_token,
            otpauth_uri: &enrolment.otpauth_uri,
            secret: &enrolment.secret_base32,
            sealed: &enrolment.sealed,
            error,
            hidden: &[("action", "totp_confirm")],
            required: false,
        })),
        AccountStep::SignInStep {
            csrf_token,
            carried,
            step,
        } => {
            let form = StepForm {
                app_name: "your account",
                action: ACCOUNT_PATH,
                csrf_token: &csrf_token,
                fields: StepFields::InForm {
                    page_fields: &[],
                    carried: &carried,
                },
            };
            PageAnswer::page(render_sign_in_step(&form, &step))
        }
        AccountStep::RecoveryCodes(codes) => {
            PageAnswer::page(render_recovery_codes(ACCOUNT_PATH, &codes, None))
        }
        AccountStep::SignedOut => PageAnswer::page(render_signed_out()).cookies(jar.end_session()),
        AccountStep::SignedOutVia { location } => {
            PageAnswer::redirect(StatusCode::SEE_OTHER, location).cookies(jar.end_session())
        }
    }
}

fn rendered(overview: &Overview) -> String {
    let sessions: Vec<SessionRow> = overview
        .sessions
        .iter()
        .map(|listed| {
            let session = &listed.session;
            SessionRow {
                sid: session.sid.to_string(),
                browser: session
                    .user_agent
                    .clone()
                    .unwrap_or_else(|| "An unnamed browser".to_owned()),
                source: session.source.clone().unwrap_or_else(|| "-".to_owned()),
                started: rfc3339::format(session.started_at),
                last_seen: rfc3339::format(session.last_seen),
                current: listed.current,
                started_with: listed.started_with.clone(),
            }
        })
        .collect();
    let apps: Vec<AppRow> = overview
        .apps
        .iter()
        .map(|app| AppRow {
            client_id: app.client_id.to_string(),
            name: app.name.clone(),
            scope_sentences: scope_sentences(app.scopes.iter().map(String::as_str)),
        })
        .collect();
    let passkeys: Vec<PasskeyRow> = overview
        .passkeys
        .iter()
        .map(|passkey| PasskeyRow {
            credential_id: passkey.credential_id.clone(),
            name: passkey.name.clone(),
            created: rfc3339::format(passkey.created_at),
            last_used: passkey
                .last_used_at
                .map_or_else(|| "never".to_owned(), rfc3339::format),
        })
        .collect();
    render_account(&AccountPage {
        action: ACCOUNT_PATH,
        csrf_token: &overview.csrf_token,
        sessions: &sessions,
        apps: &apps,
        totp_enrolled: overview.totp_enrolled,
        passkeys: &passkeys,
        error: overview.error,
        factors_unlocked: overview.factors_unlocked,
    })
}

/// A page with status 400, or 429 with `Retry-After` for the address limit.
impl ErrorResponse for AccountDenial {
    fn into_response(self) -> Response {
        let retry_after = match self {
            Self::SlowDown { retry_after } => Some(retry_after),
            _ => None,
        };
        PageAnswer::refused(&self.to_string(), retry_after).into_response()
    }
}
