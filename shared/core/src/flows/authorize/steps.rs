//! The authorization code flow's steps (docs/decisions.md, "Authorization code flow"), independent
//! of HTTP: the authorize request, the sign-in form, the consent form. Each step answers what to
//! show next (a page, with the pending request to keep in the browser's cookie) or where to send
//! the browser.
//!
//! Sign-in runs the password grant's own check ([`authenticate_user_from`]: Argon2id, status,
//! home geolocation; attempts counted per login and source address rather than toward the
//! account's lockout, which strangers could reach here) and shows its refusal as a sentence
//! ([`sign_in_message`]), never a code.

use std::net::IpAddr;

use super::signed_in;
use super::{
    csrf_token, sign_in_message, verify_csrf_token, AuthorizeKeys, AuthorizeParams,
    AuthorizeRejection, ErrorRedirect, Form, PendingAuthorization, PendingCookieError,
    RegisteredClient, UntrustedRedirect, NOT_THE_EXPECTED_ACCOUNT,
};
use crate::auth::authenticate_user_from;
use crate::client_documents::DocumentError;
use crate::clock::UnixTime;
use crate::domain::{AuthMethod, Client, GrantType, PrincipalId, SignInSession, User};
use crate::errors::{Denial, GrantError, Refusal};
use crate::flows::{passkeys, sessions};

use crate::limits::Exceeded;
use crate::services::Services;
use crate::signing::SigningError;

/// What the browser is shown or sent to next.
#[derive(Debug)]
pub enum AuthorizeStep {
    /// The sign-in page. `sealed` is the pending request for the cookie when it changed.
    SignIn(FormPage),
    /// The consent page for a signed-in user.
    Consent(FormPage),
    /// The sign-in's second step: a code from the user's authenticator app.
    SecondFactor(FormPage),
    /// The user's company requires a second factor and they have none: set up an
    /// authenticator app (the QR code and the key), confirmed by its first code.
    Enrol {
        page: FormPage,
        enrolment: crate::flows::second_factor::Enrolment,
    },
    /// That enrolment is stored: its recovery codes, shown once, and the button that starts
    /// the session.
    RecoveryCodes { page: FormPage, codes: Vec<String> },
    /// `302` to the client's registered address (a code or an error); the cookie is cleared.
    Redirect(String),
    /// The user signed in with a credential: `then`, setting the new sign-in session's cookie
    /// (`session_cookie` is its value).
    SignedIn {
        session_cookie: String,
        then: Box<AuthorizeStep>,
    },
}

/// What a step answers instead: the error page (400, or 429 for the rate limits,
/// [`RefusalReason::SlowDown`], [`RefusalReason::TooManyPosts`] and
/// [`RefusalReason::TooManyDocuments`]; never a redirect, the
/// address is not or no longer trusted), or our failure.
pub type AuthorizeError = Refusal<RefusalReason>;

/// What a sign-in or consent page needs.
#[derive(Debug)]
pub struct FormPage {
    pub app_name: String,
    /// The client's registered address, for the page's `form-action` policy.
    pub redirect_uri: String,
    pub csrf_token: String,
    /// The new cookie value, when the pending request was created or changed.
    pub sealed: Option<String>,
    /// Consent: the requested scopes. Sign-in: empty.
    pub scopes: Vec<String>,
    /// Sign-in: the login typed before a refused attempt, and why it was refused.
    pub login: String,
    pub error: Option<&'static str>,
    /// Consent for a self-registered client: the host of its redirect address, shown with the
    /// app marked as not verified. `None` otherwise.
    pub unverified_host: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RefusalReason {
    #[error("{0}")]
    Untrusted(UntrustedRedirect),
    #[error("This sign-in took too long or was started in another window. Please go back to the application and start again.")]
    NoPendingRequest,
    #[error("The form could not be accepted. Please go back to the application and start again.")]
    BadForm,
    #[error(
        "The request is too long to be handled. Please go back to the application and try again."
    )]
    TooLarge,
    /// The sign-in form was posted too often for this request, which has ended: 429 like every
    /// rate limit, `Retry-After` the seconds until the request would have expired, when its
    /// count is forgotten.
    #[error("Too many sign-in attempts. Please go back to the application and start again.")]
    TooManyPosts { retry_after: i64 },
    /// Too many password attempts from the caller's address: 429, `Retry-After` seconds.
    #[error("Too many sign-in attempts from your network. Please wait a minute and try again.")]
    SlowDown { retry_after: i64 },
    /// Too many client ID metadata documents fetched for the caller's address: 429,
    /// `Retry-After` seconds.
    #[error("Too many new applications were looked up from your network. Please try again later.")]
    TooManyDocuments { retry_after: i64 },
}

impl Denial for RefusalReason {}

impl From<Exceeded> for RefusalReason {
    fn from(exceeded: Exceeded) -> Self {
        Self::SlowDown {
            retry_after: exceeded.retry_after,
        }
    }
}

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
}

/// `GET /oauth2/v0/authorize`: checks the request and opens the sign-in page.
///
/// `session_cookie` is the browser's sign-in session cookie: a live session of the right user,
/// recent enough for `prompt` and `max_age`, skips the sign-in page (single sign-on), and a
/// consent remembered for the scopes skips the consent page too.
pub async fn start(
    services: &Services,
    keys: &AuthorizeKeys,
    params: &AuthorizeParams,
    session_cookie: Option<&str>,
) -> Result<AuthorizeStep, AuthorizeError> {
    let client = match requested_client(services, params).await? {
        Ok(client) => client,
        Err(rejection) => return rejected(services, rejection),
    };
    // A pushed request or a request object stands for the parameters it holds.
    let params = match super::pushed::resolve(services, params, &client).await? {
        Ok(params) => params,
        Err(rejection) => return rejected(services, rejection),
    };
    let params = params.as_ref();
    let mut request = match params.validate(&registered(&client)) {
        Ok(request) => request,
        Err(rejection) => return rejected(services, rejection),
    };
    if let Err(rejection) =
        super::resources::check_resources(&services.policy, &client, params, &mut request)
    {
        return rejected(services, rejection);
    }
    if let Some(redirect) = super::pushed::profile_refusal(&client, params, &request) {
        return Ok(redirect_to(services, &redirect));
    }
    let expected_user = match hinted_user(services, params, &client).await? {
        Ok(user) => user,
        Err(refusal) => {
            let redirect = ErrorRedirect::openid(
                &request.redirect_uri,
                request.state.as_deref(),
                "invalid_request",
                refusal,
            );
            return Ok(redirect_to(services, &redirect));
        }
    };
    let now = services.ctx.clock.now();
    let session = sessions::current(services, session_cookie)
        .await?
        // A hint naming another user: this browser's session does not answer for them.
        .filter(|session| expected_user.is_none_or(|user| user == session.principal_id))
        .filter(|session| !request.prompt.login && is_recent_enough(session, request.max_age, now));
    let login_hint = request.login_hint.clone().unwrap_or_default();
    let mut pending = PendingAuthorization::new(request, services.ctx.random.as_ref(), now);
    pending.expected_user = expected_user;
    if client.is_fapi2() {
        pending.code_ttl = Some(crate::domain::FAPI2_CODE_TTL_SECONDS);
    }
    if let Some(session) = session {
        pending.signed_in_user = Some(session.principal_id);
        pending.signed_in_at = Some(session.authenticated_at);
        pending.session_lists_client = session.clients.contains(&pending.request.client_id);
        pending.sid = Some(session.sid);
        pending.amr = session.amr;
        return signed_in::proceed(services, keys, &client, pending).await;
    }
    if pending.request.prompt.none {
        let request = &pending.request;
        let redirect =
            ErrorRedirect::login_required(&request.redirect_uri, request.state.as_deref());
        return Ok(redirect_to(services, &redirect));
    }
    sign_in_page(services, keys, &client, &pending, true, &login_hint, None)
}

/// The client `client_id` names: a registered one, or the client of the metadata document a URL
/// names (fetched unless kept and fresh). Unknown, or a document that cannot be fetched or does
/// not pass: the error page, since no address of the client can be trusted; a fetch past the
/// source address's limit: its 429 page.
async fn requested_client(
    services: &Services,
    params: &AuthorizeParams,
) -> Result<Result<Client, AuthorizeRejection>, AuthorizeError> {
    let page = |reason| Ok(Err(AuthorizeRejection::Page(reason)));
    let text = match params.client_id_text() {
        Ok(text) => text,
        Err(rejection) => return Ok(Err(rejection)),
    };
    if services.client_documents.names_document(text) {
        return match services.document_client(text).await {
            Ok(client) => Ok(Ok(client)),
            Err(DocumentError::Store(error)) => Err(error.into()),
            Err(DocumentError::Limited(exceeded)) => Err(RefusalReason::TooManyDocuments {
                retry_after: exceeded.retry_after,
            }
            .into()),
            Err(DocumentError::Unusable(_)) => page(UntrustedRedirect::ClientDocumentUnusable),
        };
    }
    let Ok(id) = params.client_id() else {
        return page(UntrustedRedirect::UnknownClient);
    };
    match services.ctx.store.clients().get_client(&id).await? {
        Some(client) => Ok(Ok(client)),
        None => page(UntrustedRedirect::UnknownClient),
    }
}

/// OpenID Connect Core §3.1.2.1: past `max_age` seconds since the user last signed in with a
/// credential, they must again; `max_age=0` is `prompt=login`.
fn is_recent_enough(session: &SignInSession, max_age: Option<u64>, now: UnixTime) -> bool {
    match max_age {
        None => true,
        Some(0) => false,
        // Whole seconds on both sides: `age == max` may be up to a second more, so it is
        // already too old.
        Some(max) => u64::try_from(session.age(now)).is_ok_and(|age| age < max),
    }
}

/// The user an `id_token_hint` names, when one was sent. A hint that is not an ID token this
/// deployment issued to this client is refused with one description, whatever failed.
async fn hinted_user(
    services: &Services,
    params: &AuthorizeParams,
    client: &Client,
) -> Result<Result<Option<PrincipalId>, &'static str>, SigningError> {
    let Some(hint) = params.id_token_hint.as_deref().filter(|h| !h.is_empty()) else {
        return Ok(Ok(None));
    };
    Ok(match services.codec.verify_id_token_hint(hint).await? {
        Ok(hinted) if hinted.client_id == client.id => Ok(Some(hinted.principal)),
        _ => Err("id_token_hint is not valid"),
    })
}

/// `POST /oauth2/v0/authorize`: the sign-in form, or the consent form once signed in.
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
    let cookie = cookies.pending;
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
    // Looked up again: the name is shown, and a client disabled meanwhile gets no code. A
    // document's client is the one kept when the request was checked, fresh or not.
    let client = match services.known_client(&pending.request.client_id).await? {
        Some(client) if client.enabled => client,
        Some(_) => {
            let request = &pending.request;
            let redirect = ErrorRedirect::from_code(
                &request.redirect_uri,
                request.state.as_deref(),
                crate::errors::ErrorCode::ClientDisabled,
            );
            return Ok(redirect_to(services, &redirect));
        }
        None => {
            return Err(Refusal::Denied(RefusalReason::Untrusted(
                UntrustedRedirect::UnknownClient,
            )))
        }
    };
    let csrf = form.csrf_token.as_deref().unwrap_or_default();
    match (&form.decision, pending.signed_in_user) {
        (Some(decision), Some(user)) if verify_csrf_token(keys, Form::Consent, &pending, csrf) => {
            signed_in::decide(services, pending, user, decision == "approve").await
        }
        (None, _)
            if form.enrolment.is_some()
                && verify_csrf_token(keys, Form::Enrolment, &pending, csrf) =>
        {
            count_sign_in_post(services, &pending, source).await?;
            let sealed = form.enrolment.as_deref().unwrap_or_default();
            let code = form.code.as_deref().unwrap_or_default();
            super::second_step::confirm_enrolment(services, keys, &client, pending, sealed, code)
                .await
        }
        (None, _)
            if form.enrolled.is_some()
                && verify_csrf_token(keys, Form::Enrolled, &pending, csrf) =>
        {
            let Some(user) = super::second_step::enrolled_user(services, &pending).await? else {
                return Err(Refusal::Denied(RefusalReason::BadForm));
            };
            let amr = AuthMethod::PASSWORD_AND_CODE;
            signed_in_with(
                services,
                keys,
                &client,
                pending,
                &user,
                amr,
                cookies.session,
            )
            .await
        }
        (None, _)
            if form.code.is_some()
                && verify_csrf_token(keys, Form::SecondFactor, &pending, csrf) =>
        {
            count_sign_in_post(services, &pending, source).await?;
            let code = form.code.as_deref().unwrap_or_default();
            match super::second_step::submit_code(services, keys, &client, &pending, code).await? {
                Ok((user, amr, spent)) => {
                    let answer = signed_in_with(
                        services,
                        keys,
                        &client,
                        pending,
                        &user,
                        amr,
                        cookies.session,
                    )
                    .await;
                    // A 503 must not spend the code: the user's retry types the same one.
                    if let (Err(Refusal::Server(_)), Some(spent)) = (&answer, spent) {
                        crate::flows::second_factor::give_back(services, &user, spent).await;
                    }
                    answer
                }
                Err(page) => Ok(page),
            }
        }
        (None, _) if verify_csrf_token(keys, Form::SignIn, &pending, csrf) => {
            count_sign_in_post(services, &pending, source).await?;
            sign_in(
                services,
                keys,
                &client,
                pending,
                form,
                cookies.session,
                source,
            )
            .await
        }
        _ => Err(Refusal::Denied(RefusalReason::BadForm)),
    }
}

/// The abuse limits of a sign-in post, before the password is hashed: the per-address limit shared
/// with password grants, and [`crate::limits::SIGN_IN_POSTS_PER_REQUEST`] posts per pending request
/// (each post costs an Argon2id hash: a cookie replayed in a loop would be a password oracle and a
/// CPU amplifier).
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

async fn sign_in(
    services: &Services,
    keys: &AuthorizeKeys,
    client: &Client,
    mut pending: PendingAuthorization,
    form: &SubmittedForm,
    session_cookie: Option<&str>,
    source: Option<IpAddr>,
) -> Result<AuthorizeStep, AuthorizeError> {
    let login = form.login.as_deref().unwrap_or_default();
    let password = form.password.as_deref().unwrap_or_default();
    let passkey = form
        .passkey_ceremony
        .as_deref()
        .zip(form.passkey_answer.as_deref());
    // Either refusal shows the sign-in page again, with its message.
    let signed_in = match passkey {
        Some((ceremony, answer)) => {
            match passkeys::authenticate(services, ceremony, answer).await {
                Ok(user) => Ok(user),
                Err(Refusal::Denied(denial)) => Err(denial.message()),
                Err(Refusal::Server(error)) => return Err(error.into()),
            }
        }
        None => match authenticate_user_from(services, login, password, source).await {
            Ok(user) => Ok(user),
            Err(GrantError::Denied(denial)) => Err(sign_in_message(denial.code)),
            Err(GrantError::Server(error)) => return Err(error.into()),
        },
    }
    .and_then(|user| match pending.expected_user {
        Some(expected) if expected != user.id => Err(NOT_THE_EXPECTED_ACCOUNT),
        _ => Ok(user),
    });
    let user = match signed_in {
        Ok(user) => user,
        Err(message) => {
            return sign_in_page(
                services,
                keys,
                client,
                &pending,
                false,
                login,
                Some(message),
            )
        }
    };
    if passkey.is_some() {
        let amr = passkeys::PASSKEY_AMR;
        return signed_in_with(services, keys, client, pending, &user, amr, session_cookie).await;
    }
    if let Some(page) =
        super::second_step::after_password(services, keys, client, &mut pending, &user).await?
    {
        return Ok(page);
    }
    let amr = AuthMethod::PASSWORD;
    signed_in_with(services, keys, client, pending, &user, amr, session_cookie).await
}

/// The user proved who they are with `amr`: the session starts (or signs in again), then the
/// consent or the code.
async fn signed_in_with(
    services: &Services,
    keys: &AuthorizeKeys,
    client: &Client,
    mut pending: PendingAuthorization,
    user: &User,
    amr: &[AuthMethod],
    session_cookie: Option<&str>,
) -> Result<AuthorizeStep, AuthorizeError> {
    let started =
        crate::flows::sign_in::session_for(services, user.id, amr, session_cookie).await?;
    pending.password_user = None;
    pending.password_step = None;
    pending.enrolled_user = None;
    pending.signed_in_user = Some(user.id);
    pending.signed_in_at = Some(started.session.authenticated_at);
    pending.sid = Some(started.session.sid.clone());
    pending.amr = started.session.amr.clone();
    let then = signed_in::proceed(services, keys, client, pending).await?;
    Ok(AuthorizeStep::SignedIn {
        session_cookie: started.cookie,
        then: Box::new(then),
    })
}

fn sign_in_page(
    services: &Services,
    keys: &AuthorizeKeys,
    client: &Client,
    pending: &PendingAuthorization,
    new_cookie: bool,
    login: &str,
    error: Option<&'static str>,
) -> Result<AuthorizeStep, AuthorizeError> {
    let sealed = if new_cookie {
        match pending.seal(keys, services.ctx.random.as_ref()) {
            Ok(sealed) => Some(sealed),
            Err(_) => return Err(RefusalReason::TooLarge.into()),
        }
    } else {
        None
    };
    Ok(AuthorizeStep::SignIn(FormPage {
        unverified_host: None,
        app_name: client.name.clone(),
        redirect_uri: pending.request.redirect_uri.clone(),
        csrf_token: csrf_token(keys, Form::SignIn, pending),
        sealed,
        scopes: Vec::new(),
        login: login.to_owned(),
        error,
    }))
}

pub(super) fn registered(client: &Client) -> RegisteredClient<'_> {
    RegisteredClient {
        id: client.id,
        enabled: client.enabled,
        allowed_scopes: &client.allowed_scopes,
        redirect_uris: &client.redirect_uris,
        may_use_authorization_code: client.may_use(GrantType::AuthorizationCode),
        // Public clients (nothing else binds their codes) and the FAPI 2.0 profile.
        requires_pkce: client.is_public() || client.is_fapi2(),
    }
}

fn rejected(
    services: &Services,
    rejection: AuthorizeRejection,
) -> Result<AuthorizeStep, AuthorizeError> {
    match rejection {
        AuthorizeRejection::Page(reason) => Err(RefusalReason::Untrusted(reason).into()),
        AuthorizeRejection::Redirect(redirect) => Ok(redirect_to(services, &redirect)),
    }
}

/// An error back to the client, with this deployment as `iss` (RFC 9207).
pub(super) fn redirect_to(services: &Services, redirect: &ErrorRedirect) -> AuthorizeStep {
    AuthorizeStep::Redirect(redirect.location(services.geolocation()))
}
