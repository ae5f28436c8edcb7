//! The sign-in's second step (docs/decisions.md, "Second factors"): a user with an
//! authenticator app, after a correct password, types a code or a recovery code before the
//! session starts. The password's success is kept in the sealed pending-request cookie (its
//! 10-minute expiry, its per-request post limit); each code is accepted once, so a replayed
//! cookie and form get nothing more, and a wrong code counts toward the login's lockout. A user
//! whose company requires a second factor and who has none sets up an authenticator app here
//! (bound to the pending request), sees the recovery codes, and only then is signed in.

use super::steps::{AuthorizeError, AuthorizeStep, FormPage, RefusalReason};
use super::{csrf_token, sign_in_message, AuthorizeKeys, Form, PendingAuthorization};
use crate::domain::{AuthMethod, Client, User};
use crate::errors::{ErrorCode, Refusal};
use crate::flows::second_factor::{
    self, AfterPassword, CodeCheck, Confirmation, Enrolment, EnrolmentBinding, PasswordStep,
    SpentStep,
};
use crate::services::Services;

use crate::flows::sign_in::WRONG_CODE;

/// After a correct password: the code page when the user has an authenticator app; when their
/// company requires a second factor and they have none, the enrolment page (or the sign-in page
/// asking for their passkey); else `None` (the session starts with the password alone).
pub(super) async fn after_password(
    services: &Services,
    keys: &AuthorizeKeys,
    client: &Client,
    pending: &mut PendingAuthorization,
    user: &User,
) -> Result<Option<AuthorizeStep>, AuthorizeError> {
    match second_factor::after_password(services, user).await? {
        AfterPassword::SignedIn => Ok(None),
        AfterPassword::Code => {
            pending.password_user = Some(user.id);
            pending.password_step = Some(second_factor::new_step_id(services.ctx.random.as_ref()));
            Ok(Some(code_page(services, keys, client, pending, None)?))
        }
        AfterPassword::Enrol => {
            pending.password_user = Some(user.id);
            let binding = EnrolmentBinding::SignIn(&pending.id);
            let enrolment = second_factor::begin_enrolment(services, binding, user).await?;
            Ok(Some(enrol_page(
                services, keys, client, pending, enrolment, None,
            )?))
        }
        AfterPassword::UsePasskey => Ok(Some(AuthorizeStep::SignIn(FormPage {
            unverified_host: None,
            app_name: client.name.clone(),
            redirect_uri: pending.request.redirect_uri.clone(),
            csrf_token: csrf_token(keys, Form::SignIn, pending),
            sealed: None,
            scopes: Vec::new(),
            login: user.login.as_str().to_owned(),
            error: Some(second_factor::USE_YOUR_PASSKEY),
        }))),
    }
}

/// The enrolment form's post (its first code): stored, the recovery codes page; a wrong code,
/// the same enrolment again. The session starts only from the recovery codes page.
pub(super) async fn confirm_enrolment(
    services: &Services,
    keys: &AuthorizeKeys,
    client: &Client,
    mut pending: PendingAuthorization,
    sealed: &str,
    code: &str,
) -> Result<AuthorizeStep, AuthorizeError> {
    let Some(user_id) = pending.password_user else {
        return Err(Refusal::Denied(RefusalReason::BadForm));
    };
    let Some(user) = services.ctx.store.principals().get_user(&user_id).await? else {
        return Err(Refusal::Denied(RefusalReason::BadForm));
    };
    let binding = EnrolmentBinding::SignIn(&pending.id);
    match second_factor::confirm_enrolment(services, binding, &user, sealed, code).await? {
        Confirmation::Enrolled(codes) => {
            pending.password_user = None;
            pending.enrolled_user = Some(user.id);
            let sealed = pending
                .seal(keys, services.ctx.random.as_ref())
                .map_err(|_| Refusal::Denied(RefusalReason::TooLarge))?;
            Ok(AuthorizeStep::RecoveryCodes {
                page: FormPage {
                    unverified_host: None,
                    app_name: client.name.clone(),
                    redirect_uri: pending.request.redirect_uri.clone(),
                    csrf_token: csrf_token(keys, Form::Enrolled, &pending),
                    sealed: Some(sealed),
                    scopes: Vec::new(),
                    login: String::new(),
                    error: None,
                },
                codes,
            })
        }
        Confirmation::WrongCode(enrolment) => enrol_page(
            services,
            keys,
            client,
            &pending,
            enrolment,
            Some("That code was not right. Please type the code your app shows now."),
        ),
        // Too old, or an app set up meanwhile (another tab): the code page, for that app.
        Confirmation::Stale if second_factor::is_enrolled(services, &user).await? => {
            pending.password_step = Some(second_factor::new_step_id(services.ctx.random.as_ref()));
            code_page(services, keys, client, &pending, None)
        }
        Confirmation::Stale => Err(Refusal::Denied(RefusalReason::BadForm)),
    }
}

/// The user the recovery codes page starts the session for, once they proved both factors.
pub(super) async fn enrolled_user(
    services: &Services,
    pending: &PendingAuthorization,
) -> Result<Option<User>, AuthorizeError> {
    let Some(user_id) = pending.enrolled_user else {
        return Ok(None);
    };
    Ok(services.ctx.store.principals().get_user(&user_id).await?)
}

fn enrol_page(
    services: &Services,
    keys: &AuthorizeKeys,
    client: &Client,
    pending: &PendingAuthorization,
    enrolment: Enrolment,
    error: Option<&'static str>,
) -> Result<AuthorizeStep, AuthorizeError> {
    let sealed = pending
        .seal(keys, services.ctx.random.as_ref())
        .map_err(|_| Refusal::Denied(RefusalReason::TooLarge))?;
    Ok(AuthorizeStep::Enrol {
        page: FormPage {
            unverified_host: None,
            app_name: client.name.clone(),
            redirect_uri: pending.request.redirect_uri.clone(),
            csrf_token: csrf_token(keys, Form::Enrolment, pending),
            sealed: Some(sealed),
            scopes: Vec::new(),
            login: String::new(),
            error,
        },
        enrolment,
    })
}

/// The code form's post: the user, the methods the session starts with and the step to give
/// back if the session cannot be written; or the page to show instead.
pub(super) async fn submit_code(
    services: &Services,
    keys: &AuthorizeKeys,
    client: &Client,
    pending: &PendingAuthorization,
    code: &str,
) -> Result<Result<(User, &'static [AuthMethod], Option<SpentStep>), AuthorizeStep>, AuthorizeError>
{
    let Some(user_id) = pending.password_user else {
        return Err(Refusal::Denied(RefusalReason::BadForm));
    };
    let Some(user) = services.ctx.store.principals().get_user(&user_id).await? else {
        return Err(Refusal::Denied(RefusalReason::BadForm));
    };
    let step = PasswordStep {
        id: pending.password_step.as_deref().unwrap_or(&pending.id),
        expires_at: pending.expires_at,
    };
    match second_factor::check_code_after(services, &user, code, step).await? {
        CodeCheck::Totp(spent) => Ok(Ok((user, AuthMethod::PASSWORD_AND_CODE, Some(spent)))),
        CodeCheck::Recovery => Ok(Ok((user, AuthMethod::PASSWORD_AND_CODE, None))),
        CodeCheck::Wrong => Ok(Err(code_page(
            services,
            keys,
            client,
            pending,
            Some(WRONG_CODE),
        )?)),
        check @ (CodeCheck::Locked | CodeCheck::TooManyCodes) => {
            let mut again = pending.clone();
            again.password_user = None;
            again.password_step = None;
            let sealed = again
                .seal(keys, services.ctx.random.as_ref())
                .map_err(|_| Refusal::Denied(RefusalReason::TooLarge))?;
            Ok(Err(AuthorizeStep::SignIn(FormPage {
                unverified_host: None,
                app_name: client.name.clone(),
                redirect_uri: again.request.redirect_uri.clone(),
                csrf_token: csrf_token(keys, Form::SignIn, &again),
                sealed: Some(sealed),
                scopes: Vec::new(),
                login: String::new(),
                error: Some(if check == CodeCheck::Locked {
                    sign_in_message(ErrorCode::AccountLocked)
                } else {
                    crate::flows::sign_in::TOO_MANY_CODES
                }),
            })))
        }
    }
}

fn code_page(
    services: &Services,
    keys: &AuthorizeKeys,
    client: &Client,
    pending: &PendingAuthorization,
    error: Option<&'static str>,
) -> Result<AuthorizeStep, AuthorizeError> {
    let sealed = pending
        .seal(keys, services.ctx.random.as_ref())
        .map_err(|_| Refusal::Denied(RefusalReason::TooLarge))?;
    Ok(AuthorizeStep::SecondFactor(FormPage {
        unverified_host: None,
        app_name: client.name.clone(),
        redirect_uri: pending.request.redirect_uri.clone(),
        csrf_token: csrf_token(keys, Form::SecondFactor, pending),
        sealed: Some(sealed),
        scopes: Vec::new(),
        login: String::new(),
        error,
    }))
}
