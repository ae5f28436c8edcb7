//! The authorization code flow's pages (docs/decisions.md, "Authorization code flow"): sign-in,
//! consent and the error page, and RP-initiated logout's signed-out and refusal pages,
//! server-rendered from the askama templates in `shared/http/templates/`. Every form works
//! without JavaScript; only the passkey buttons need the one script, served from our own origin
//! (`crate::passkeys`); one small inlined stylesheet allowed by hash (see [`security_headers`]). What a page says is decided
//! by the flow ([`crate::flows::authorize`]); this module only renders it.

mod answer;
mod device;
mod headers;
mod scopes;
mod second_factor;
mod sign_in_steps;

use askama::Template;

use crate::flows::authorize::CSRF_FIELD;
use crate::flows::logout::LogoutConfirmation;
use crate::flows::sign_in::IdpChoice;
use crate::metadata::paths::LOGOUT as LOGOUT_PATH;

pub use answer::PageAnswer;
pub use device::{
    render_device_code, render_device_consent, render_device_done, render_device_sign_in,
    DeviceSignInPage,
};
pub use headers::{security_headers, CONTENT_TYPE_HTML};
pub use scopes::scope_sentences;
pub use second_factor::{
    render_recovery_codes, render_second_factor, render_totp_enrol, ContinueForm, TotpEnrolPage,
};
pub use sign_in_steps::{render_sign_in_step, StepFields, StepForm};

/// The stylesheet inlined in every page; its hash is in the Content-Security-Policy.
pub const STYLESHEET: &str = include_str!("../../templates/pages.css");

/// What the sign-in page shows.
#[derive(Debug, Clone, Copy)]
pub struct SignInPage<'a> {
    pub app_name: &'a str,
    /// Where the form posts (the authorize endpoint).
    pub form_action: &'a str,
    pub csrf_token: &'a str,
    /// The login typed before a failed attempt, so the user need not type it again.
    pub login: &'a str,
    /// A readable message ([`crate::flows::authorize::sign_in_message`]), never a raw code.
    pub error: Option<&'a str>,
    /// The form's `action` field, for a page whose forms say which one was posted.
    pub action_field: Option<&'a str>,
    /// The company identity providers the login may continue with, a button each.
    pub idp_choices: &'a [IdpChoice],
}

/// What the consent page shows.
#[derive(Debug, Clone, Copy)]
pub struct ConsentPage<'a> {
    pub app_name: &'a str,
    pub form_action: &'a str,
    pub csrf_token: &'a str,
    /// The requested scope names; shown as sentences ([`scope_sentences`]).
    pub scopes: &'a [&'a str],
    /// A self-registered app: the host it returns to, shown with "not verified".
    pub unverified_host: Option<&'a str>,
    /// The resources (RFC 8707) the access is asked for: each named on the page.
    pub resources: &'a [String],
    /// A self-registered app's privacy policy and terms of service, shown as links.
    pub policy_uri: Option<&'a str>,
    pub tos_uri: Option<&'a str>,
}

#[derive(Template)]
#[template(path = "sign_in.html")]
struct SignInTemplate<'a> {
    stylesheet: &'static str,
    app_name: &'a str,
    action: &'a str,
    csrf_field: &'static str,
    csrf_token: &'a str,
    login: &'a str,
    error: Option<&'a str>,
    action_field: Option<&'a str>,
    idp_choices: &'a [IdpChoice],
    passkey_options: &'static str,
    passkey_script: &'static str,
}

#[derive(Template)]
#[template(path = "consent.html")]
struct ConsentTemplate<'a> {
    stylesheet: &'static str,
    app_name: &'a str,
    action: &'a str,
    csrf_field: &'static str,
    csrf_token: &'a str,
    scope_sentences: Vec<String>,
    unverified_host: Option<&'a str>,
    resources: &'a [String],
    policy_uri: Option<&'a str>,
    tos_uri: Option<&'a str>,
}

#[derive(Template)]
#[template(path = "error.html")]
struct ErrorTemplate<'a> {
    stylesheet: &'static str,
    message: &'a str,
}

#[derive(Template)]
#[template(path = "signed_out.html")]
struct SignedOutTemplate {
    stylesheet: &'static str,
}

#[derive(Template)]
#[template(path = "logout_confirm.html")]
struct LogoutConfirmTemplate<'a> {
    stylesheet: &'static str,
    action: &'static str,
    csrf_field: &'static str,
    confirmation: &'a LogoutConfirmation,
}

#[derive(Template)]
#[template(path = "logout_refused.html")]
struct LogoutRefusedTemplate<'a> {
    stylesheet: &'static str,
    message: &'a str,
}

/// Rendering writes only strings into a `String`, which cannot fail.
fn render(template: &impl Template) -> String {
    template
        .render()
        .expect("rendering into a String cannot fail")
}

pub fn render_sign_in(page: &SignInPage<'_>) -> String {
    render(&SignInTemplate {
        stylesheet: STYLESHEET,
        app_name: page.app_name,
        action: page.form_action,
        csrf_field: CSRF_FIELD,
        csrf_token: page.csrf_token,
        login: page.login,
        error: page.error,
        action_field: page.action_field,
        idp_choices: page.idp_choices,
        passkey_options: crate::passkeys::SIGN_IN_OPTIONS_PATH,
        passkey_script: crate::passkeys::SCRIPT_PATH,
    })
}

/// One session on the account page, as shown.
#[derive(Debug, Clone)]
pub struct SessionRow {
    pub sid: String,
    pub browser: String,
    pub source: String,
    pub started: String,
    pub last_seen: String,
    pub current: bool,
    /// The company identity provider that started the session, by name.
    pub started_with: Option<String>,
}

/// One passkey on the account page.
#[derive(Debug, Clone)]
pub struct PasskeyRow {
    pub credential_id: String,
    pub name: String,
    pub created: String,
    pub last_used: String,
}

/// One connected app on the account page.
#[derive(Debug, Clone)]
pub struct AppRow {
    pub client_id: String,
    pub name: String,
    pub scope_sentences: Vec<String>,
}

#[derive(Template)]
#[template(path = "account.html")]
struct AccountTemplate<'a> {
    stylesheet: &'static str,
    action: &'a str,
    csrf_field: &'static str,
    csrf_token: &'a str,
    sessions: &'a [SessionRow],
    apps: &'a [AppRow],
    totp_enrolled: bool,
    passkeys: &'a [PasskeyRow],
    error: Option<&'a str>,
    factors_unlocked: bool,
    registration_options: &'static str,
    passkey_script: &'static str,
}

/// The account page's content.
#[derive(Debug, Clone, Copy)]
pub struct AccountPage<'a> {
    pub action: &'a str,
    pub csrf_token: &'a str,
    pub sessions: &'a [SessionRow],
    pub apps: &'a [AppRow],
    /// Whether the user has an authenticator app.
    pub totp_enrolled: bool,
    pub passkeys: &'a [PasskeyRow],
    /// Why the last form was refused.
    pub error: Option<&'a str>,
    /// The session's sign-in is fresh enough to add or remove factors: their forms are shown,
    /// else one form to sign in again.
    pub factors_unlocked: bool,
}

/// The account page: the user's sessions, connected apps, authenticator app and passkeys, each
/// with its form.
pub fn render_account(page: &AccountPage<'_>) -> String {
    render(&AccountTemplate {
        stylesheet: STYLESHEET,
        action: page.action,
        csrf_field: CSRF_FIELD,
        csrf_token: page.csrf_token,
        sessions: page.sessions,
        apps: page.apps,
        totp_enrolled: page.totp_enrolled,
        passkeys: page.passkeys,
        error: page.error,
        factors_unlocked: page.factors_unlocked,
        registration_options: crate::passkeys::REGISTRATION_OPTIONS_PATH,
        passkey_script: crate::passkeys::SCRIPT_PATH,
    })
}

pub fn render_consent(page: &ConsentPage<'_>) -> String {
    render(&ConsentTemplate {
        stylesheet: STYLESHEET,
        app_name: page.app_name,
        action: page.form_action,
        csrf_field: CSRF_FIELD,
        csrf_token: page.csrf_token,
        scope_sentences: scope_sentences(page.scopes.iter().copied()),
        unverified_host: page.unverified_host,
        resources: page.resources,
        policy_uri: page.policy_uri,
        tos_uri: page.tos_uri,
    })
}

/// The page for a request whose client and `redirect_uri` do not match: served with status
/// 400 and never redirected. `message` is readable text, e.g. an `UntrustedRedirect`'s.
pub fn render_error(message: &str) -> String {
    render(&ErrorTemplate {
        stylesheet: STYLESHEET,
        message,
    })
}

/// The page after RP-initiated logout when the browser is not sent back to the application.
pub fn render_signed_out() -> String {
    render(&SignedOutTemplate {
        stylesheet: STYLESHEET,
    })
}

/// The page that asks a browser's user to confirm a sign-out no valid hint asked for: its form
/// posts the request's parameters back with the token bound to the session.
pub fn render_logout_confirm(confirmation: &LogoutConfirmation) -> String {
    render(&LogoutConfirmTemplate {
        stylesheet: STYLESHEET,
        action: LOGOUT_PATH,
        csrf_field: CSRF_FIELD,
        confirmation,
    })
}

/// The 400 page of a refused sign-out request: never a redirect.
pub fn render_logout_refused(message: &str) -> String {
    render(&LogoutRefusedTemplate {
        stylesheet: STYLESHEET,
        message,
    })
}

#[cfg(test)]
mod tests;
