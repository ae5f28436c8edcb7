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
        ),
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
    };
    let next = sign_in::advance(services, interaction, input, source)
        .await
        .map_err(Refusal::widen)?;
    let csrf_token = || form_token(keys, SIGN_IN_FORM, nonce);
    Ok(match next {
        Next::SignedIn(signed_in) => AccountStep::Reload {
            session_cookie: Some(signed_in.started.cookie),
        },
        Next::Show(Shown::Identify { login, error }) => {
            sign_in_form(services, keys, Some(nonce), login, error)
        }
        Next::Restart => sign_in_form(services, keys, Some(nonce), String::new(), None),
        Next::Show(Shown::Step { carried, step }) => AccountStep::SignInStep {
            csrf_token: csrf_token(),
            carried,
            step,
        },
    })
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
    }
}
