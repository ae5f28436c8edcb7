//! CSRF tokens for the sign-in and consent forms: an HMAC of the form's name and the pending
//! request's id. A token is useless for another pending request or the other form, and only
//! this service can make one.

use super::pending::PendingAuthorization;
use crate::flows::sign_in::{form_token, verify_form_token, PageKeys as AuthorizeKeys};

/// Which form a token was made for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    SignIn,
    Consent,
    /// The sign-in's second step: an authenticator-app or recovery code.
    SecondFactor,
    /// The enrolment a company's policy requires before the session: its first code.
    Enrolment,
    /// After that enrolment's recovery codes: start the session.
    Enrolled,
}

impl Form {
    fn label(self) -> &'static [u8] {
        match self {
            Self::SignIn => b"sign-in",
            Self::Consent => b"consent",
            Self::SecondFactor => b"second-factor",
            Self::Enrolment => b"enrolment",
            Self::Enrolled => b"enrolled",
        }
    }
}

pub fn csrf_token(keys: &AuthorizeKeys, form: Form, pending: &PendingAuthorization) -> String {
    form_token(keys, form.label(), &pending.id)
}

/// Constant-time check of a submitted token.
pub fn verify_csrf_token(
    keys: &AuthorizeKeys,
    form: Form,
    pending: &PendingAuthorization,
    submitted: &str,
) -> bool {
    verify_form_token(keys, form.label(), &pending.id, submitted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flows::authorize::ValidatedAuthorization;
    use crate::random::OsRandom;

    fn pending() -> PendingAuthorization {
        let request = ValidatedAuthorization::for_tests("");
        PendingAuthorization::new(request, &OsRandom, 0)
    }

    #[test]
    fn bound_to_form_pending_request_and_key() {
        let keys = AuthorizeKeys::derive(&[3; 32]).unwrap();
        let (a, b) = (pending(), pending());
        let token = csrf_token(&keys, Form::SignIn, &a);
        assert!(verify_csrf_token(&keys, Form::SignIn, &a, &token));
        assert!(!verify_csrf_token(&keys, Form::Consent, &a, &token));
        assert!(!verify_csrf_token(&keys, Form::SignIn, &b, &token));
        let other_keys = AuthorizeKeys::derive(&[4; 32]).unwrap();
        assert!(!verify_csrf_token(&other_keys, Form::SignIn, &a, &token));
        assert!(!verify_csrf_token(&keys, Form::SignIn, &a, ""));
        assert!(!verify_csrf_token(&keys, Form::SignIn, &a, "not base64!"));
    }
}
