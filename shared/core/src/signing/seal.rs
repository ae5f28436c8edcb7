//! Local private keys at rest in the ring's store: AES-256-GCM under a key derived from the
//! server secret (which stays in Secrets Manager or the local key file), with the `kid` as
//! associated data so a sealed key cannot be moved to another key's entry. Whoever can read the
//! table but not the secret learns nothing of the private keys.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_256_GCM, NONCE_LEN};

use crate::random::RandomSource;

/// The HKDF label of the sealing key (see `KeyRing::derive_key`).
pub const SEALING_PURPOSE: &str = "signing-key-seal-v1";

pub struct Sealer {
    key: LessSafeKey,
}

impl Sealer {
    pub fn new(key: [u8; 32]) -> Self {
        let key = UnboundKey::new(&AES_256_GCM, &key).expect("32 bytes is an AES-256 key");
        Self {
            key: LessSafeKey::new(key),
        }
    }

    /// base64url(nonce || ciphertext || tag).
    pub fn seal(&self, kid: &str, plaintext: &[u8], random: &dyn RandomSource) -> String {
        let mut nonce = [0u8; NONCE_LEN];
        random.fill(&mut nonce);
        let mut sealed = plaintext.to_vec();
        self.key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(kid.as_bytes()),
                &mut sealed,
            )
            .expect("AES-GCM seals any key-sized input");
        let mut out = nonce.to_vec();
        out.append(&mut sealed);
        URL_SAFE_NO_PAD.encode(out)
    }

    /// `None` when `sealed` was not sealed for `kid` under this key.
    pub fn open(&self, kid: &str, sealed: &str) -> Option<Vec<u8>> {
        let bytes = URL_SAFE_NO_PAD.decode(sealed).ok()?;
        if bytes.len() < NONCE_LEN {
            return None;
        }
        let (nonce, ciphertext) = bytes.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
        let mut buffer = ciphertext.to_vec();
        let plain = self
            .key
            .open_in_place(nonce, Aad::from(kid.as_bytes()), &mut buffer)
            .ok()?;
        Some(plain.to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::OsRandom;

    #[test]
    fn opens_only_for_its_kid_and_key() {
        let sealer = Sealer::new([7; 32]);
        let sealed = sealer.seal("kid-a", b"private", &OsRandom);
        assert_eq!(
            sealer.open("kid-a", &sealed).as_deref(),
            Some(&b"private"[..])
        );
        assert_eq!(sealer.open("kid-b", &sealed), None);
        assert_eq!(Sealer::new([8; 32]).open("kid-a", &sealed), None);
        assert!(!sealed.contains("private"));
    }
}
