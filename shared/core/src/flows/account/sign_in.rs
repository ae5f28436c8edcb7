//! The account page's sign-in, for a browser without a session: the pages' one interaction
//! ([`crate::flows::sign_in`]) continuing with the overview. Its forms are bound to a nonce the
//! browser holds in a cookie of this path.

use std::net::IpAddr;

use super::page::{AccountError, AccountForm, AccountStep, SIGN_IN_FORM};
use crate::errors::Refusal;
use crate::flows::sign_in::{
    self, form_token, nonce_form_token, Continue, Input, Interaction, Next, PageKeys, Shown,
};
use crate::services::Services;

/// The browser signing in: the nonce its sign-in forms are bound to, and its session cookie,
/// if any (a sign-in again, before a factor change, renews that session).
pub(super) struct SigningIn<'a> {
    pub nonce: &'a str,
    pub session_cookie: Option<&'a str>,
}

/// One of the sign-in's forms (`action` `sign_in`, `sign_in_code`, `sign_in_totp_confirm` or
/// `sign_in_enrolled`), its CSRF token checked by the caller.
pub(super) async fn sign_in(
    services: &Services,
    keys: &PageKeys,
    SigningIn {
        nonce,
        session_cookie,
    }: SigningIn<'_>,
    action: &str,
    form: &AccountForm,
    source: Option<IpAddr>,
) -> Result<AccountStep, AccountError> {
    let carried = form.pending.as_deref().unwrap_or_default();
    let code = form.code.as_deref().unwrap_or_default();
    let input = match action {
        "sign_in" => Input::identify(
            &form.login,
            &form.password,
            &form.passkey_ceremony,
            &form.passkey_answer,
        )
        .choosing(&form.idp),
        "sign_in_code" => Input::Code { carried, code },
        "sign_in_totp_confirm" => Input::Enrol {
            carried,
            enrolment: form.enrolment.as_deref().unwrap_or_default(),
            code,
        },
        _ => Input::Enrolled { carried },
    };
    let interaction = Interaction {
        browser: nonce,
        then: &Continue::Account,
        session_cookie,
        expected_user: None,
        resume: None,
    };
    let next = sign_in::advance(services, interaction, input, source)
        .await
        .map_err(Refusal::widen)?;
    Ok(step_of(services, keys, nonce, next))
}

/// `GET /oauth2/v0/account?upstream=…`: back from the company's identity provider, the sign-in
/// this browser started here continues.
pub(super) async fn resume_upstream(
    services: &Services,
    keys: &PageKeys,
    SigningIn {
        nonce,
        session_cookie,
    }: SigningIn<'_>,
    carried: &str,
) -> Result<AccountStep, AccountError> {
    let interaction = Interaction {
        browser: nonce,
        then: &Continue::Account,
        session_cookie,
        expected_user: None,
        resume: None,
    };
    let input = Input::Upstream { carried };
    let next = sign_in::advance_counted(services, interaction, input, None)
        .await
        .map_err(Refusal::widen)?;
    Ok(step_of(services, keys, nonce, next))
}

fn step_of(services: &Services, keys: &PageKeys, nonce: &str, next: Next) -> AccountStep {
    match next {
        Next::SignedIn(signed_in) => AccountStep::Reload {
            session_cookie: Some(signed_in.started.cookie),
        },
        Next::Upstream { location } => AccountStep::Upstream { location },
        Next::Show(Shown::Identify { login, error }) => {
            sign_in_form(services, keys, Some(nonce), login, error)
        }
        Next::Show(Shown::ChooseIdp { login, choices }) => {
            match sign_in_form(services, keys, Some(nonce), login, None) {
                AccountStep::SignIn {
                    csrf_token,
                    new_nonce,
                    login,
                    error,
                    ..
                } => AccountStep::SignIn {
                    csrf_token,
                    new_nonce,
                    login,
                    error,
                    idp_choices: choices,
                },
                other => other,
            }
        }
        Next::Restart => sign_in_form(services, keys, Some(nonce), String::new(), None),
        Next::Show(Shown::Step { carried, step }) => AccountStep::SignInStep {
            csrf_token: form_token(keys, SIGN_IN_FORM, nonce),
            carried,
            step,
        },
    }
}

pub(super) fn sign_in_form(
    services: &Services,
    keys: &PageKeys,
    nonce: Option<&str>,
    login: String,
    error: Option<&'static str>,
) -> AccountStep {
    let (csrf_token, new_nonce) =
        nonce_form_token(keys, SIGN_IN_FORM, nonce, services.ctx.random.as_ref());
    AccountStep::SignIn {
        csrf_token,
        new_nonce,
        login,
        error,
        idp_choices: Vec::new(),
    }
}
