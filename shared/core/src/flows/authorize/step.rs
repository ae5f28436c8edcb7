//! What one step of the authorization code flow answers: a page, a redirect, or a refusal. Its
//! own file so that the steps, the consent and the pushed requests share these types without
//! importing one another.

use super::csrf::{csrf_token, Form};
use super::pending::PendingAuthorization;
use super::redirect::ErrorRedirect;
use super::request::UntrustedRedirect;
use crate::domain::Client;
use crate::errors::{Denial, Refusal};
use crate::flows::sign_in::{IdpChoice, PageKeys as AuthorizeKeys, Step};
use crate::limits::Exceeded;
use crate::services::Services;

/// What the browser is shown or sent to next.
#[derive(Debug)]
pub enum AuthorizeStep {
    /// The sign-in page. `sealed` is the pending request for the cookie when it changed.
    SignIn(FormPage),
    /// The consent page for a signed-in user.
    Consent(FormPage),
    /// One of the sign-in interaction's own pages (the code, the enrolment, the recovery
    /// codes); its state is in the pending-request cookie.
    SignInStep { page: FormPage, step: Step },
    /// `302` to the client's registered address (a code or an error); the cookie is cleared.
    Redirect(String),
    /// `303` to the company's identity provider; the pending request's cookie stays (`sealed`:
    /// its new value, when it changed), for the sign-in to continue when the browser is back.
    Upstream {
        location: String,
        sealed: Option<String>,
    },
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
    /// Consent: the resources (RFC 8707) asked for, in their normal form. Otherwise empty.
    pub resources: Vec<String>,
    /// Sign-in: the login typed before a refused attempt, and why it was refused.
    pub login: String,
    pub error: Option<&'static str>,
    /// Sign-in: the company identity providers the login may continue with, a button each.
    pub idp_choices: Vec<IdpChoice>,
    /// Consent for a self-registered client: the host of its redirect address, shown with the
    /// app marked as not verified. `None` otherwise.
    pub unverified_host: Option<String>,
    /// Consent for a self-registered client: its registered privacy policy and terms of
    /// service (`https`), shown as links. Its `logo_uri` is never here: no image of a client
    /// nobody verified is loaded.
    pub policy_uri: Option<String>,
    pub tos_uri: Option<String>,
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

/// The sign-in interaction's refusal: the page's 429.
impl From<crate::flows::sign_in::SlowDown> for RefusalReason {
    fn from(slow: crate::flows::sign_in::SlowDown) -> Self {
        Self::SlowDown {
            retry_after: slow.retry_after,
        }
    }
}

/// An error back to the client, with this deployment as `iss` (RFC 9207).
pub(super) fn redirect_to(services: &Services, redirect: &ErrorRedirect) -> AuthorizeStep {
    AuthorizeStep::Redirect(redirect.location(services.geolocation()))
}

impl FormPage {
    /// A page of `form` for `pending`, with the cookie value `sealed` when it changed.
    pub(super) fn of(
        keys: &AuthorizeKeys,
        client: &Client,
        pending: &PendingAuthorization,
        form: Form,
        sealed: Option<String>,
    ) -> Self {
        Self {
            unverified_host: None,
            policy_uri: None,
            tos_uri: None,
            app_name: client.name.clone(),
            redirect_uri: pending.request.redirect_uri.clone(),
            csrf_token: csrf_token(keys, form, pending),
            sealed,
            scopes: Vec::new(),
            resources: Vec::new(),
            login: String::new(),
            error: None,
            idp_choices: Vec::new(),
        }
    }
}

/// The pending request sealed for the cookie; too large for one: the error page.
pub(super) fn sealed(
    services: &Services,
    keys: &AuthorizeKeys,
    pending: &PendingAuthorization,
) -> Result<String, AuthorizeError> {
    pending
        .seal(keys, services.ctx.random.as_ref())
        .map_err(|_| Refusal::Denied(RefusalReason::TooLarge))
}

/// The sign-in page, `login` filled in, with why the last try was refused.
pub(super) fn sign_in_page(
    services: &Services,
    keys: &AuthorizeKeys,
    client: &Client,
    pending: &PendingAuthorization,
    new_cookie: bool,
    login: &str,
    error: Option<&'static str>,
) -> Result<AuthorizeStep, AuthorizeError> {
    let sealed = new_cookie
        .then(|| sealed(services, keys, pending))
        .transpose()?;
    Ok(AuthorizeStep::SignIn(FormPage {
        login: login.to_owned(),
        error,
        ..FormPage::of(keys, client, pending, Form::SignIn, sealed)
    }))
}
