//! The sign-in interaction's own pages (`sign_in::Step`: the code, the enrolment, the recovery
//! codes), rendered once for every page that runs it. What differs between pages is only where
//! the form posts, the page's own fields, and how the form says which step it answers.

use super::{
    render_recovery_codes, render_second_factor, render_totp_enrol, ContinueForm, TotpEnrolPage,
};
use crate::flows::sign_in::Step;

/// The page a step is shown on.
#[derive(Debug, Clone, Copy)]
pub struct StepForm<'a> {
    pub app_name: &'a str,
    /// Where the form posts.
    pub action: &'a str,
    pub csrf_token: &'a str,
    pub fields: StepFields<'a>,
}

/// How a page's forms say which step they answer.
#[derive(Debug, Clone, Copy)]
pub enum StepFields<'a> {
    /// The authorize page: the carried state is in the pending-request cookie and each form's
    /// CSRF token names its step; the recovery codes' button posts `enrolled`.
    InCookie,
    /// The account and device pages: an `action` field, the page's own fields, and the carried
    /// state in `pending`.
    InForm {
        page_fields: &'a [(&'a str, &'a str)],
        carried: &'a str,
    },
}

impl StepFields<'_> {
    fn hidden(&self, action: &'static str) -> Vec<(&str, &str)> {
        match *self {
            Self::InCookie if action == "sign_in_enrolled" => vec![("enrolled", "continue")],
            Self::InCookie => Vec::new(),
            Self::InForm {
                page_fields,
                carried,
            } => std::iter::once(("action", action))
                .chain(page_fields.iter().copied())
                .chain(std::iter::once(("pending", carried)))
                .collect(),
        }
    }
}

pub fn render_sign_in_step(form: &StepForm<'_>, step: &Step) -> String {
    match step {
        Step::SecondFactor { error } => {
            let hidden = form.fields.hidden("sign_in_code");
            render_second_factor(form.app_name, form.action, form.csrf_token, &hidden, *error)
        }
        Step::Enrol { enrolment, error } => {
            let hidden = form.fields.hidden("sign_in_totp_confirm");
            render_totp_enrol(&TotpEnrolPage {
                action: form.action,
                csrf_token: form.csrf_token,
                otpauth_uri: &enrolment.otpauth_uri,
                secret: &enrolment.secret_base32,
                sealed: &enrolment.sealed,
                error: *error,
                hidden: &hidden,
                required: true,
            })
        }
        Step::RecoveryCodes { codes } => {
            let hidden = form.fields.hidden("sign_in_enrolled");
            let button = ContinueForm {
                csrf_token: form.csrf_token,
                hidden: &hidden,
            };
            render_recovery_codes(form.action, codes, Some(button))
        }
    }
}
