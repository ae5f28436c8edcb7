//! The device grant's verification page (`crate::flows::device`): enter the code, sign in,
//! consent, and "return to your device".

use askama::Template;

use super::{render, scope_sentences, STYLESHEET};
use crate::flows::authorize::CSRF_FIELD;
use crate::flows::sign_in::IdpChoice;

#[derive(Template)]
#[template(path = "device_code.html")]
struct CodeTemplate<'a> {
    stylesheet: &'static str,
    action: &'a str,
    csrf_field: &'static str,
    csrf_token: &'a str,
    user_code: &'a str,
    error: Option<&'a str>,
}

#[derive(Template)]
#[template(path = "device_sign_in.html")]
struct SignInTemplate<'a> {
    stylesheet: &'static str,
    app_name: &'a str,
    action: &'a str,
    csrf_field: &'static str,
    csrf_token: &'a str,
    user_code: &'a str,
    login: &'a str,
    error: Option<&'a str>,
    idp_choices: &'a [IdpChoice],
    passkey_options: &'static str,
    passkey_script: &'static str,
}

#[derive(Template)]
#[template(path = "device_consent.html")]
struct ConsentTemplate<'a> {
    stylesheet: &'static str,
    app_name: &'a str,
    action: &'a str,
    csrf_field: &'static str,
    csrf_token: &'a str,
    user_code: &'a str,
    scope_sentences: Vec<String>,
    /// Part 17's mark: an app that registered itself is shown as not verified.
    self_registered: bool,
}

#[derive(Template)]
#[template(path = "device_done.html")]
struct DoneTemplate {
    stylesheet: &'static str,
    approved: bool,
}

/// The form to type the code; `error` a readable message.
pub fn render_device_code(
    action: &str,
    csrf_token: &str,
    user_code: &str,
    error: Option<&str>,
) -> String {
    render(&CodeTemplate {
        stylesheet: STYLESHEET,
        action,
        csrf_field: CSRF_FIELD,
        csrf_token,
        user_code,
        error,
    })
}

/// What the device page's sign-in form shows.
#[derive(Debug, Clone, Copy)]
pub struct DeviceSignInPage<'a> {
    pub app_name: &'a str,
    pub form_action: &'a str,
    pub csrf_token: &'a str,
    pub user_code: &'a str,
    pub login: &'a str,
    pub error: Option<&'a str>,
    pub idp_choices: &'a [IdpChoice],
}

pub fn render_device_sign_in(page: &DeviceSignInPage<'_>) -> String {
    render(&SignInTemplate {
        stylesheet: STYLESHEET,
        app_name: page.app_name,
        action: page.form_action,
        csrf_field: CSRF_FIELD,
        csrf_token: page.csrf_token,
        user_code: page.user_code,
        login: page.login,
        error: page.error,
        idp_choices: page.idp_choices,
        passkey_options: crate::passkeys::SIGN_IN_OPTIONS_PATH,
        passkey_script: crate::passkeys::SCRIPT_PATH,
    })
}

pub fn render_device_consent(
    app_name: &str,
    action: &str,
    csrf_token: &str,
    user_code: &str,
    scopes: &[String],
    self_registered: bool,
) -> String {
    render(&ConsentTemplate {
        stylesheet: STYLESHEET,
        app_name,
        action,
        csrf_field: CSRF_FIELD,
        csrf_token,
        user_code,
        scope_sentences: scope_sentences(scopes.iter().map(String::as_str)),
        self_registered,
    })
}

/// "Return to your device", after an approval or a denial.
pub fn render_device_done(approved: bool) -> String {
    render(&DoneTemplate {
        stylesheet: STYLESHEET,
        approved,
    })
}
