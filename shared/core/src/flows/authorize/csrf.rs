//! CSRF tokens for the sign-in and consent forms: an HMAC of the form's name and the pending
//! request's id. A token is useless for another pending request or the other form, and only
//! this service can make one.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::keys::AuthorizeKeys;
use super::pending::PendingAuthorization;

/// The hidden field that carries the token in both forms.
pub const CSRF_FIELD: &str = "csrf_token";

/// Which form a token was made for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    SignIn,
    Consent,
}

impl Form {
    fn label(self) -> &'static [u8] {
        match self {
            Self::SignIn => b"sign-in",
            Self::Consent => b"consent",
        }
    }
}

fn mac(keys: &AuthorizeKeys, form: Form, pending: &PendingAuthorization) -> Hmac<Sha256> {
    let mut mac = Hmac::<Sha256>::new_from_slice(&keys.csrf).expect("HMAC takes any key length");
    mac.update(form.label());
    // A separator no label or id contains, so (form, id) pairs cannot run into each other.
    mac.update(b"\0");
    mac.update(pending.id.as_bytes());
    mac
}

pub fn csrf_token(keys: &AuthorizeKeys, form: Form, pending: &PendingAuthorization) -> String {
    URL_SAFE_NO_PAD.encode(mac(keys, form, pending).finalize().into_bytes())
}

/// Constant-time check of a submitted token.
pub fn verify_csrf_token(
    keys: &AuthorizeKeys,
    form: Form,
    pending: &PendingAuthorization,
    submitted: &str,
) -> bool {
    match URL_SAFE_NO_PAD.decode(submitted) {
        Ok(tag) => mac(keys, form, pending).verify_slice(&tag).is_ok(),
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
}
