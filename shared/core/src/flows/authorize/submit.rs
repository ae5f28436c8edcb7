//! `POST /oauth2/v0/authorize`, independent of HTTP: the consent form once signed in, else a
//! step of the pages' one sign-in interaction ([`crate::flows::sign_in`]), continuing with this
//! pending request. Each form's CSRF token names the step it was made for; the interaction's
//! state between steps is sealed into the pending-request cookie, so the forms stay as they are.
//!
//! A sign-in post counts against the source address's limit shared with password grants, and
//! against [`crate::limits::SIGN_IN_POSTS_PER_REQUEST`] posts per pending request (each post
//! costs an Argon2id hash or a code compared: a cookie replayed in a loop would be a password
//! oracle and a CPU amplifier).

use std::net::IpAddr;

use super::csrf::{verify_csrf_token, Form};
use super::pending::{PendingAuthorization, PendingCookieError};
use super::redirect::ErrorRedirect;
use super::request::UntrustedRedirect;
use super::step::{
    redirect_to, sealed, sign_in_page, AuthorizeError, AuthorizeStep, FormPage, RefusalReason,
};
use crate::domain::Client;
use crate::errors::Refusal;
use crate::flows::sign_in::{
    self, Continue, Input, Interaction, Next, PageKeys as AuthorizeKeys, Shown, Step,
};
use crate::services::Services;

/// The cookies a form post arrives with.
#[derive(Debug, Clone, Copy, Default)]
pub struct SubmittedCookies<'a> {
    /// The sealed pending request.
    pub pending: Option<&'a str>,
    /// The browser's sign-in session, if any.
    pub session: Option<&'a str>,
}

/// The fields the two forms post (unknown ones are ignored). Holds a password: no `Debug`.
#[derive(Default, serde::Deserialize, utoipa::ToSchema)]
pub struct SubmittedForm {
    /// The page's anti-forgery token, checked against the pending-request cookie.
    pub csrf_token: Option<String>,
    /// Sign-in form.
    pub login: Option<String>,
    /// Sign-in form.
    pub password: Option<String>,
    /// The consent form's button: `approve` or `deny`.
    pub decision: Option<String>,
    /// The second step's form: an authenticator-app code or a recovery code (the enrolment's
    /// form: the app's first code).
    pub code: Option<String>,
    /// The enrolment's form: the sealed new secret the page carries.
    pub enrolment: Option<String>,
    /// The recovery codes page's button: any value continues.
    pub enrolled: Option<String>,
    /// A passkey sign-in (the page's script fills them in): the ceremony id and the
    /// browser's answer (JSON), in place of `login` and `password`.
    pub passkey_ceremony: Option<String>,
    pub passkey_answer: Option<String>,
    /// The sign-in form's company identity provider button: its id.
    pub idp: Option<String>,
}

/// `POST /oauth2/v0/authorize`: the sign-in's forms, or the consent form once signed in.
///
/// `source` is the caller's address as the platform saw it: sign-in posts count against the
/// same per-address limit as password grants.
pub async fn submit(
    services: &Services,
    keys: &AuthorizeKeys,
    cookies: SubmittedCookies<'_>,
    form: &SubmittedForm,
    source: Option<IpAddr>,
) -> Result<AuthorizeStep, AuthorizeError> {
    let (pending, client) = match opened(services, keys, cookies.pending).await? {
        Ok(opened) => opened,
        Err(redirect) => return Ok(redirect),
    };
    let csrf = form.csrf_token.as_deref().unwrap_or_default();
    let verified = |form: Form| verify_csrf_token(keys, form, &pending, csrf);
    if let (Some(decision), Some(user)) = (&form.decision, pending.signed_in_user) {
        if !verified(Form::Consent) {
            return Err(Refusal::Denied(RefusalReason::BadForm));
        }
        return super::signed_in::decide(services, pending, user, decision == "approve").await;
    }
    if form.decision.is_some() {
        return Err(Refusal::Denied(RefusalReason::BadForm));
    }
    let code = form.code.as_deref().unwrap_or_default();
    // Which form was posted, its CSRF token says; the later steps need the carried state.
    let later = |field: &Option<String>, posted: Form| {
        let carried = pending.sign_in.as_deref();
        carried.filter(|_| field.is_some() && verified(posted))
    };
    let (input, counted) = if let Some(carried) = later(&form.enrolment, Form::Enrolment) {
        let enrolment = form.enrolment.as_deref().unwrap_or_default();
        let input = Input::Enrol {
            carried,
            enrolment,
            code,
        };
        (input, true)
    } else if let Some(carried) = later(&form.enrolled, Form::Enrolled) {
        (Input::Enrolled { carried }, false)
    } else if let Some(carried) = later(&form.code, Form::SecondFactor) {
        (Input::Code { carried, code }, true)
    } else if verified(Form::SignIn) {
        let input = Input::identify(
            &form.login,
            &form.password,
            &form.passkey_ceremony,
            &form.passkey_answer,
        )
        .choosing(&form.idp);
        (input, true)
    } else {
        return Err(Refusal::Denied(RefusalReason::BadForm));
    };
    if counted {
        count_sign_in_post(services, &pending, source).await?;
    }
    let then = Continue::Authorization(pending.id.clone());
    let interaction = Interaction {
        browser: &pending.id,
        then: &then,
        session_cookie: cookies.session,
        expected_user: pending.expected_user,
        resume: None,
    };
    let next = sign_in::advance_counted(services, interaction, input, source)
        .await
        .map_err(Refusal::widen)?;
    shown(services, keys, &client, pending, next).await
}

/// The pending request of the cookie and its client, looked up again (the name is shown, and a
/// client disabled meanwhile gets no code: `Err` is the client's error redirect).
async fn opened(
    services: &Services,
    keys: &AuthorizeKeys,
    cookie: Option<&str>,
) -> Result<Result<(PendingAuthorization, Client), AuthorizeStep>, AuthorizeError> {
    let now = services.ctx.clock.now();
    let pending = match cookie.map(|value| PendingAuthorization::open(value, keys, now)) {
        Some(Ok(pending)) => pending,
        None | Some(Err(PendingCookieError::Expired | PendingCookieError::Invalid)) => {
            return Err(Refusal::Denied(RefusalReason::NoPendingRequest))
        }
        Some(Err(PendingCookieError::TooLarge)) => {
            return Err(Refusal::Denied(RefusalReason::TooLarge))
        }
    };
    // A document's client is the one kept when the request was checked, fresh or not.
    let client = match services.known_client(&pending.request.client_id).await? {
        Some(client) if client.enabled => client,
        Some(_) => {
            let request = &pending.request;
            let redirect = ErrorRedirect::from_code(
                &request.redirect_uri,
                request.state.as_deref(),
                crate::errors::ErrorCode::ClientDisabled,
            );
            return Ok(Err(redirect_to(services, &redirect)));
        }
        None => {
            return Err(Refusal::Denied(RefusalReason::Untrusted(
                UntrustedRedirect::UnknownClient,
            )))
        }
    };
    Ok(Ok((pending, client)))
}

/// `GET /oauth2/v0/authorize?upstream=…`: back from the company's identity provider, the
/// sign-in continues with this browser's pending request (its consent, or the code).
pub async fn resume_upstream(
    services: &Services,
    keys: &AuthorizeKeys,
    cookies: SubmittedCookies<'_>,
    carried: &str,
) -> Result<AuthorizeStep, AuthorizeError> {
    let (pending, client) = match opened(services, keys, cookies.pending).await? {
        Ok(opened) => opened,
        Err(redirect) => return Ok(redirect),
    };
    let then = Continue::Authorization(pending.id.clone());
    let interaction = Interaction {
        browser: &pending.id,
        then: &then,
        session_cookie: cookies.session,
        expected_user: pending.expected_user,
        resume: None,
    };
    let input = Input::Upstream { carried };
    let next = sign_in::advance_counted(services, interaction, input, None)
        .await
        .map_err(Refusal::widen)?;
    // A step another browser's callback sealed, or one too old: this browser signs in again.
    let next = match next {
        Next::Restart => sign_in::identify("", None),
        next => next,
    };
    shown(services, keys, &client, pending, next).await
}

/// The per-address and per-request limits of a sign-in post, before anything is compared.
async fn count_sign_in_post(
    services: &Services,
    pending: &PendingAuthorization,
    source: Option<IpAddr>,
) -> Result<(), AuthorizeError> {
    let limiter = services.limiter();
    limiter
        .count_sign_in_attempt(source, services.ctx.clock.now())
        .await?;
    if !limiter
        .count_sign_in_post(&pending.id, pending.expires_at)
        .await?
    {
        let retry_after = pending.expires_at - services.ctx.clock.now();
        return Err(RefusalReason::TooManyPosts { retry_after }.into());
    }
    Ok(())
}

/// The page the interaction's next step is shown on, the carried state kept in the cookie; or,
/// signed in, the consent or the code.
async fn shown(
    services: &Services,
    keys: &AuthorizeKeys,
    client: &Client,
    mut pending: PendingAuthorization,
    next: Next,
) -> Result<AuthorizeStep, AuthorizeError> {
    let shown = match next {
        Next::SignedIn(signed_in) => {
            return continued(services, keys, client, pending, *signed_in).await
        }
        Next::Upstream { location } => {
            // The carried step is over; the pending request waits for the browser's return.
            let sealed = match pending.sign_in.take() {
                Some(_) => Some(sealed(services, keys, &pending)?),
                None => None,
            };
            return Ok(AuthorizeStep::Upstream { location, sealed });
        }
        // A step of this page's sign-in that the interaction does not know: not our form.
        Next::Restart => return Err(Refusal::Denied(RefusalReason::BadForm)),
        Next::Show(shown) => shown,
    };
    if let Shown::Identify { login, error } = shown {
        // Back to the password: the cookie forgets the carried step (it was already empty
        // after a refused password, so it is left as it is).
        let new_cookie = pending.sign_in.take().is_some();
        return sign_in_page(services, keys, client, &pending, new_cookie, &login, error);
    }
    if let Shown::ChooseIdp { login, choices } = shown {
        let new_cookie = pending.sign_in.take().is_some();
        let page = sign_in_page(services, keys, client, &pending, new_cookie, &login, None)?;
        return Ok(match page {
            AuthorizeStep::SignIn(page) => AuthorizeStep::SignIn(FormPage {
                idp_choices: choices,
                ..page
            }),
            other => other,
        });
    }
    let Shown::Step { carried, step } = shown else {
        unreachable!("answered above")
    };
    pending.sign_in = Some(carried);
    let sealed = Some(sealed(services, keys, &pending)?);
    let form = match step {
        Step::SecondFactor { .. } => Form::SecondFactor,
        Step::Enrol { .. } => Form::Enrolment,
        Step::RecoveryCodes { .. } => Form::Enrolled,
    };
    Ok(AuthorizeStep::SignInStep {
        page: FormPage::of(keys, client, &pending, form, sealed),
        step,
    })
}

/// Signed in: the session's cookie, then the consent or the code. When that fails (503), the
/// code typed is given back so that the retry may type it again.
async fn continued(
    services: &Services,
    keys: &AuthorizeKeys,
    client: &Client,
    mut pending: PendingAuthorization,
    signed_in: sign_in::SignedIn,
) -> Result<AuthorizeStep, AuthorizeError> {
    let session = &signed_in.started.session;
    pending.sign_in = None;
    pending.signed_in_user = Some(session.principal_id);
    pending.signed_in_at = Some(session.authenticated_at);
    pending.sid = Some(session.sid.clone());
    pending.amr = session.amr.clone();
    pending.idp = session.upstream.as_ref().map(|upstream| upstream.idp);
    match super::signed_in::proceed(services, keys, client, pending).await {
        Ok(then) => Ok(AuthorizeStep::SignedIn {
            session_cookie: signed_in.started.cookie,
            then: Box::new(then),
        }),
        Err(error) => {
            if matches!(error, Refusal::Server(_)) {
                signed_in.give_back_code(services).await;
            }
            Err(error)
        }
    }
}
