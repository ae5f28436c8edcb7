//! CSRF tokens for the sign-in and consent forms: an HMAC of the form's name and the pending
//! request's id. A token is useless for another pending request or the other form, and only
//! this service can make one.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::keys::AuthorizeKeys;
use super::pending::PendingAuthorization;
use crate::random::{RandomExt, RandomSource};

/// The hidden field that carries the token in both forms.
pub const CSRF_FIELD: &str = "csrf_token";

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

fn mac(keys: &AuthorizeKeys, label: &[u8], id: &str) -> Hmac<Sha256> {
    let mut mac = Hmac::<Sha256>::new_from_slice(&keys.csrf).expect("HMAC takes any key length");
    mac.update(label);
    // A separator no label or id contains, so (form, id) pairs cannot run into each other.
    mac.update(b"\0");
    mac.update(id.as_bytes());
    mac
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

/// A CSRF token for another page's form (`label`, e.g. `account`), bound to `id` (what the
/// browser holds: its session, or its sign-in nonce). Labels differ from the authorize forms'.
pub fn form_token(keys: &AuthorizeKeys, label: &[u8], id: &str) -> String {
    URL_SAFE_NO_PAD.encode(mac(keys, label, id).finalize().into_bytes())
}

/// A [`form_token`] for a form shown before sign-in, bound to the nonce the browser holds in a
/// cookie: its `nonce`, or, without one, a new nonce drawn from `random`. Returns the token and
/// the new nonce, which the page sets as the cookie.
pub fn nonce_form_token(
    keys: &AuthorizeKeys,
    label: &[u8],
    nonce: Option<&str>,
    random: &dyn RandomSource,
) -> (String, Option<String>) {
    match nonce {
        Some(nonce) => (form_token(keys, label, nonce), None),
        None => {
            let nonce = random.opaque_token();
            (form_token(keys, label, &nonce), Some(nonce))
        }
    }
}

/// Constant-time check of a token made by [`form_token`].
pub fn verify_form_token(keys: &AuthorizeKeys, label: &[u8], id: &str, submitted: &str) -> bool {
    match URL_SAFE_NO_PAD.decode(submitted) {
        Ok(tag) => mac(keys, label, id).verify_slice(&tag).is_ok(),
        Err(_) => false,
    }
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

    #[test]
    fn a_nonce_form_token_keeps_the_browsers_nonce_or_draws_one() {
        let keys = AuthorizeKeys::derive(&[3; 32]).unwrap();
        let (token, new) = nonce_form_token(&keys, b"device", Some("held"), &OsRandom);
        assert_eq!(token, form_token(&keys, b"device", "held"));
        assert_eq!(new, None);
        let (token, new) = nonce_form_token(&keys, b"device", None, &OsRandom);
        let nonce = new.expect("a new nonce to set");
        assert!(verify_form_token(&keys, b"device", &nonce, &token));
        assert!(!verify_form_token(&keys, b"account", &nonce, &token));
    }
}
