//! The keys of the pages' cookie and CSRF tokens, derived from one server secret.
//!
//! Every Lambda instance derives the same keys from the same secret, so a pending request sealed
//! by one instance opens on another. HKDF (RFC 5869) with a distinct `info` per use keeps the
//! cookie key and the CSRF key independent.

use hkdf::Hkdf;
use sha2::Sha256;

const COOKIE_INFO: &[u8] = b"token-service authorize pending-request cookie v1 (AES-256-GCM)";
const CSRF_INFO: &[u8] = b"token-service authorize csrf token v1 (HMAC-SHA256)";

/// At least this many bytes of server secret: the keys are no stronger than it.
pub const MIN_SECRET_BYTES: usize = 32;

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the authorize secret must have at least {MIN_SECRET_BYTES} bytes")]
pub struct WeakSecret;

#[derive(Clone)]
pub struct AuthorizeKeys {
    pub(super) cookie: [u8; 32],
    pub(super) csrf: [u8; 32],
}

impl std::fmt::Debug for AuthorizeKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AuthorizeKeys(..)")
    }
}

impl AuthorizeKeys {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_distinct_deterministic_and_need_a_strong_secret() {
        let a = AuthorizeKeys::derive(&[7; 32]).unwrap();
        let b = AuthorizeKeys::derive(&[7; 32]).unwrap();
        assert_eq!(a.cookie, b.cookie);
        assert_ne!(a.cookie, a.csrf);
        assert_ne!(a.cookie, AuthorizeKeys::derive(&[8; 32]).unwrap().cookie);
        assert_eq!(AuthorizeKeys::derive(&[7; 31]).err(), Some(WeakSecret));
    }
}
