//! AES-256-GCM under a key derived from the deployment's server secret: the TOTP secrets at
//! rest and the enrolment in the form. The context (whose secret, which enrolment) is the
//! associated data, so a sealed value opens only where it was sealed for.

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;

use crate::errors::ServerError;
use crate::random::RandomSource;
use crate::services::Services;

/// The key ring's derivation purpose: a key of its own, never the pages' cookie key.
const KEY_PURPOSE: &str = "second-factor-v1";
const NONCE_BYTES: usize = 12;

pub struct SealKey(Aes256Gcm);

impl std::fmt::Debug for SealKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SealKey(..)")
    }
}

impl SealKey {
    /// Fails (503) only while the key ring has never been read and cannot be now.
    pub async fn of(services: &Services) -> Result<Self, ServerError> {
        let key = services.codec.keys().derive_key(KEY_PURPOSE).await?;
        Ok(Self::from_bytes(&key))
    }

    pub fn from_bytes(key: &[u8; 32]) -> Self {
        Self(Aes256Gcm::new_from_slice(key).expect("a 32-byte key"))
    }

    /// base64url(nonce ‖ ciphertext).
    pub fn seal(&self, context: &str, plaintext: &[u8], random: &dyn RandomSource) -> String {
        let mut nonce = [0u8; NONCE_BYTES];
        random.fill(&mut nonce);
        let ciphertext = self
            .0
            .encrypt(
                &Nonce::from(nonce),
                Payload {
                    msg: plaintext,
                    aad: context.as_bytes(),
                },
            )
            .expect("AES-GCM encrypts any message of this size");
        let mut sealed = nonce.to_vec();
        sealed.extend_from_slice(&ciphertext);
        URL_SAFE_NO_PAD.encode(sealed)
    }

    /// `None` for anything not sealed by this key for `context`.
    pub fn open(&self, context: &str, sealed: &str) -> Option<Vec<u8>> {
        let sealed = URL_SAFE_NO_PAD.decode(sealed).ok()?;
        if sealed.len() <= NONCE_BYTES {
            return None;
        }
        let (nonce, ciphertext) = sealed.split_at(NONCE_BYTES);
        let nonce: [u8; NONCE_BYTES] = nonce.try_into().ok()?;
        self.0
            .decrypt(
                &Nonce::from(nonce),
                Payload {
                    msg: ciphertext,
                    aad: context.as_bytes(),
                },
            )
            .ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::OsRandom;

    #[test]
    fn sealed_values_open_only_with_their_key_and_context() {
        let key = SealKey::from_bytes(&[1; 32]);
        let sealed = key.seal("totp-secret\0alice", b"12345678901234567890", &OsRandom);
        assert!(!sealed.contains("1234"));
        assert_eq!(
            key.open("totp-secret\0alice", &sealed).as_deref(),
            Some(&b"12345678901234567890"[..])
        );
        assert_eq!(
            key.open("totp-secret\0bob", &sealed),
            None,
            "another user's"
        );
        let other = SealKey::from_bytes(&[2; 32]);
        assert_eq!(
            other.open("totp-secret\0alice", &sealed),
            None,
            "another deployment"
        );
        assert_eq!(key.open("totp-secret\0alice", "AAAA"), None);
        assert_eq!(key.open("totp-secret\0alice", "not base64!"), None);
    }
}
