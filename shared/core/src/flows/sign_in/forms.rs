//! The pages' forms: the keys of their cookie and CSRF tokens, derived from one server secret,
//! and the CSRF tokens, an HMAC of the form's name and what the browser holds (its pending
//! request, session or form nonce), so that a token is useless for another form or browser and
//! only this service can make one.
//!
//! Every Lambda instance derives the same keys from the same secret, so a pending request sealed
//! by one instance opens on another. HKDF (RFC 5869) with a distinct `info` per use keeps the
//! cookie key and the CSRF key independent.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hkdf::Hkdf;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::random::{RandomExt, RandomSource};
use crate::services::Services;
use crate::signing::SigningError;

/// The purpose under which the key ring derives the pages' cookie and CSRF secret (named for
/// the first page that had one: pending cookies and forms in flight keep working).
const KEY_PURPOSE: &str = "authorize-v1";

/// The hidden field that carries the token in every form.
pub const CSRF_FIELD: &str = "csrf_token";

const COOKIE_INFO: &[u8] = b"token-service authorize pending-request cookie v1 (AES-256-GCM)";
const CSRF_INFO: &[u8] = b"token-service authorize csrf token v1 (HMAC-SHA256)";

/// At least this many bytes of server secret: the keys are no stronger than it.
pub const MIN_SECRET_BYTES: usize = 32;

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the authorize secret must have at least {MIN_SECRET_BYTES} bytes")]
pub struct WeakSecret;

#[derive(Clone)]
pub struct PageKeys {
    pub(crate) cookie: [u8; 32],
    csrf: [u8; 32],
}

impl std::fmt::Debug for PageKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PageKeys(..)")
    }
}

/// The keys of the pending-request cookie and the CSRF tokens, the same on every instance.
/// Fails (503) only while the key ring has never been read and cannot be now.
pub async fn page_keys(services: &Services) -> Result<PageKeys, SigningError> {
    let key = services.codec.keys().derive_key(KEY_PURPOSE).await?;
    Ok(PageKeys::derive(&key).expect("derive_key gives 32 bytes, the minimum"))
}

impl PageKeys {
    /// `secret` is high-entropy server material shared by every instance of one deployment
    /// (never a password, never logged).
    pub fn derive(secret: &[u8]) -> Result<Self, WeakSecret> {
        if secret.len() < MIN_SECRET_BYTES {
            return Err(WeakSecret);
        }
        let hkdf = Hkdf::<Sha256>::new(None, secret);
        let mut cookie = [0u8; 32];
        let mut csrf = [0u8; 32];
        hkdf.expand(COOKIE_INFO, &mut cookie)
            .expect("32 bytes is a valid HKDF-SHA256 output length");
        hkdf.expand(CSRF_INFO, &mut csrf)
            .expect("32 bytes is a valid HKDF-SHA256 output length");
        Ok(Self { cookie, csrf })
    }
}

fn mac(keys: &PageKeys, label: &[u8], id: &str) -> Hmac<Sha256> {
    let mut mac = Hmac::<Sha256>::new_from_slice(&keys.csrf).expect("HMAC takes any key length");
    mac.update(label);
    // A separator no label or id contains, so (form, id) pairs cannot run into each other.
    mac.update(b"\0");
    mac.update(id.as_bytes());
    mac
}

/// A CSRF token for the form `label` (e.g. `account`), bound to `id` (what the browser holds:
/// its pending request, its session, or its sign-in nonce).
pub fn form_token(keys: &PageKeys, label: &[u8], id: &str) -> String {
    URL_SAFE_NO_PAD.encode(mac(keys, label, id).finalize().into_bytes())
}

/// A [`form_token`] for a form shown before sign-in, bound to the nonce the browser holds in a
/// cookie: its `nonce`, or, without one, a new nonce drawn from `random`. Returns the token and
/// the new nonce, which the page sets as the cookie.
pub fn nonce_form_token(
    keys: &PageKeys,
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
pub fn verify_form_token(keys: &PageKeys, label: &[u8], id: &str, submitted: &str) -> bool {
    match URL_SAFE_NO_PAD.decode(submitted) {
        Ok(tag) => mac(keys, label, id).verify_slice(&tag).is_ok(),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::OsRandom;

    #[test]
    fn a_nonce_form_token_keeps_the_browsers_nonce_or_draws_one() {
        let keys = PageKeys::derive(&[3; 32]).unwrap();
        let (token, new) = nonce_form_token(&keys, b"device", Some("held"), &OsRandom);
        assert_eq!(token, form_token(&keys, b"device", "held"));
        assert_eq!(new, None);
        let (token, new) = nonce_form_token(&keys, b"device", None, &OsRandom);
        let nonce = new.expect("a new nonce to set");
        assert!(verify_form_token(&keys, b"device", &nonce, &token));
        assert!(!verify_form_token(&keys, b"account", &nonce, &token));
        assert!(!verify_form_token(&keys, b"device", &nonce, "not base64!"));
    }

    #[test]
    fn keys_are_distinct_deterministic_and_need_a_strong_secret() {
        let a = PageKeys::derive(&[7; 32]).unwrap();
        let b = PageKeys::derive(&[7; 32]).unwrap();
        assert_eq!(a.cookie, b.cookie);
        assert_ne!(a.cookie, a.csrf);
        assert_ne!(a.cookie, PageKeys::derive(&[8; 32]).unwrap().cookie);
        assert_eq!(PageKeys::derive(&[7; 31]).err(), Some(WeakSecret));
    }
}
