//! The account page's own sign-in, for a browser without a session: the password (or a
//! passkey) with the sign-in page's checks and limits, then, when the user has or must have a
//! second factor, the code or the authenticator-app enrolment and its recovery codes before the
//! session starts. The forms are bound to a nonce the browser holds in a cookie of this path.

use std::net::IpAddr;

use super::{AccountError, AccountForm, AccountStep, SIGN_IN_FORM};
use crate::auth::authenticate_user_from;
use crate::domain::{AuthMethod, User};
use crate::errors::GrantError;
use crate::flows::authorize::{form_token, nonce_form_token, sign_in_message, AuthorizeKeys};
use crate::flows::passkeys::{self, PasskeySignIn};
use crate::flows::second_factor::{self, AfterPassword, CodeCheck, Confirmation, EnrolmentBinding};
use crate::flows::sessions;
use crate::services::Services;

pub(super) async fn sign_in(
    services: &Services,
    keys: &AuthorizeKeys,
    nonce: &str,
    form: &AccountForm,
    source: Option<IpAddr>,
) -> Result<AccountStep, AccountError> {
    let now = services.ctx.clock.now();
    services
        .limiter()
        .count_sign_in_attempt(source, now)
        .await?;
    let login = form.login.as_deref().unwrap_or_default();
    let (ceremony, answer) = (&form.passkey_ceremony, &form.passkey_answer);
    match passkeys::sign_in(services, ceremony.as_deref(), answer.as_deref()).await? {
        Some(PasskeySignIn::Started(started)) => {
            return Ok(AccountStep::Reload {
                session_cookie: Some(started.cookie),
            })
        }
        Some(PasskeySignIn::Refused(message)) => {
            return Ok(sign_in_again(services, keys, nonce, login, message))
        }
        None => {}
    }
    let password = form.password.as_deref().unwrap_or_default();
    match authenticate_user_from(services, login, password, source).await {
        Ok(user) => match second_factor::after_password(services, &user).await? {
            AfterPassword::SignedIn => {
                let started = sessions::start(services, user.id, AuthMethod::PASSWORD).await?;
                Ok(AccountStep::Reload {
                    session_cookie: Some(started.cookie),
                })
            }
            AfterPassword::Code => {
                let pending = second_factor::seal_password_step(services, nonce, &user).await?;
                Ok(AccountStep::SecondFactor {
                    csrf_token: form_token(keys, SIGN_IN_FORM, nonce),
                    pending,
                    error: None,
                })
            }
            AfterPassword::Enrol => {
                let pending = second_factor::seal_password_step(services, nonce, &user).await?;
                let binding = EnrolmentBinding::SignIn(nonce);
                let enrolment = second_factor::begin_enrolment(services, binding, &user).await?;
                Ok(AccountStep::SignInEnrol {
                    csrf_token: form_token(keys, SIGN_IN_FORM, nonce),
                    pending,
                    enrolment,
                    error: None,
                })
            }
            AfterPassword::UsePasskey => Ok(sign_in_again(
                services,
                keys,
                nonce,
                login,
                second_factor::USE_YOUR_PASSKEY,
            )),
        },
        Err(GrantError::Denied(denial)) => {
            let message = sign_in_message(denial.code);
            Ok(sign_in_again(services, keys, nonce, login, message))
        }
        Err(GrantError::Server(error)) => Err(error.into()),
    }
}

/// The code after a correct password: the session starts with both factors.
pub(super) async fn sign_in_code(
    services: &Services,
    keys: &AuthorizeKeys,
    nonce: &str,
    form: &AccountForm,
) -> Result<AccountStep, AccountError> {
    let pending = form.pending.as_deref().unwrap_or_default();
    let user = match password_step_user(services, keys, nonce, nonce, pending).await? {
        Ok(user) => user,
        Err(again) => return Ok(again),
    };
    let code = form.code.as_deref().unwrap_or_default();
    match second_factor::check_code(services, &user, code).await? {
        check @ (CodeCheck::Totp(_) | CodeCheck::Recovery) => {
            let amr = AuthMethod::PASSWORD_AND_CODE;
            let started = match sessions::start(services, user.id, amr).await {
                Ok(started) => started,
                Err(error) => {
                    if let CodeCheck::Totp(spent) = check {
                        second_factor::give_back(services, &user, spent).await;
                    }
                    return Err(error.into());
                }
            };
            Ok(AccountStep::Reload {
                session_cookie: Some(started.cookie),
            })
        }
        CodeCheck::Wrong => Ok(AccountStep::SecondFactor {
            csrf_token: form_token(keys, SIGN_IN_FORM, nonce),
            pending: pending.to_owned(),
            error: Some("That code was not right. Please type the code your app shows now, or a recovery code."),
        }),
        CodeCheck::Locked => {
            let message = sign_in_message(crate::errors::ErrorCode::AccountLocked);
            Ok(sign_in_again(services, keys, nonce, "", message))
        }
    }
}

/// The enrolment's first code, for a user who must enrol before their session starts: stored,
/// the recovery codes are shown with the form that then starts the session.
pub(super) async fn sign_in_enrol(
    services: &Services,
    keys: &AuthorizeKeys,
    nonce: &str,
    form: &AccountForm,
) -> Result<AccountStep, AccountError> {
    let pending = form.pending.as_deref().unwrap_or_default();
    let user = match password_step_user(services, keys, nonce, nonce, pending).await? {
        Ok(user) => user,
        Err(again) => return Ok(again),
    };
    let sealed = form.enrolment.as_deref().unwrap_or_default();
    let code = form.code.as_deref().unwrap_or_default();
    let binding = EnrolmentBinding::SignIn(nonce);
    let csrf_token = form_token(keys, SIGN_IN_FORM, nonce);
    match second_factor::confirm_enrolment(services, binding, &user, sealed, code).await? {
        Confirmation::Enrolled(codes) => {
            let context = enrolled_context(nonce);
            let pending = second_factor::seal_password_step(services, &context, &user).await?;
            Ok(AccountStep::SignInRecoveryCodes {
                csrf_token,
                pending,
                codes,
            })
        }
        Confirmation::WrongCode(enrolment) => Ok(AccountStep::SignInEnrol {
            csrf_token,
            pending: pending.to_owned(),
            enrolment,
            error: Some("That code was not right. Please type the code your app shows now."),
        }),
        // Too old, or enrolled meanwhile (in another tab): sign in again, with a code now.
        Confirmation::Stale => Ok(sign_in_form(
            services,
            keys,
            Some(nonce),
            String::new(),
            None,
        )),
    }
}

/// What the recovery-codes page's form is bound to: this browser's sign-in, both factors done.
fn enrolled_context(nonce: &str) -> String {
    format!("enrolled\0{nonce}")
}

/// After the recovery codes: the session starts with both factors (the password and the
/// enrolment's first code).
pub(super) async fn sign_in_enrolled(
    services: &Services,
    keys: &AuthorizeKeys,
    nonce: &str,
    form: &AccountForm,
) -> Result<AccountStep, AccountError> {
    let pending = form.pending.as_deref().unwrap_or_default();
    let context = enrolled_context(nonce);
    let user = match password_step_user(services, keys, nonce, &context, pending).await? {
        Ok(user) => user,
        Err(again) => return Ok(again),
    };
    let started = sessions::start(services, user.id, AuthMethod::PASSWORD_AND_CODE).await?;
    Ok(AccountStep::Reload {
        session_cookie: Some(started.cookie),
    })
}

/// The sign-in form again, for this browser's sign-in, with `login` filled in and `message`.
fn sign_in_again(
    services: &Services,
    keys: &AuthorizeKeys,
    nonce: &str,
    login: &str,
    message: &'static str,
) -> AccountStep {
    sign_in_form(services, keys, Some(nonce), login.to_owned(), Some(message))
}

pub(super) fn sign_in_form(
    services: &Services,
    keys: &AuthorizeKeys,
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

/// The user whose correct password the sealed `pending` step (bound to `context`) carries, or
/// the sign-in form again when it does not open: too old, forged, or another browser's.
async fn password_step_user(
    services: &Services,
    keys: &AuthorizeKeys,
    nonce: &str,
    context: &str,
    pending: &str,
) -> Result<Result<User, AccountStep>, AccountError> {
    Ok(
        match second_factor::open_password_step(services, context, pending).await? {
            Some(user) => Ok(user),
            None => Err(sign_in_form(
                services,
                keys,
                Some(nonce),
                String::new(),
                None,
            )),
        },
    )
}
