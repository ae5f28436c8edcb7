//! The six-digit one-time password and how it is stored.
//!
//! Six digits are only 20 bits: a plain SHA-256 digest ([`crate::secrets::TokenHash`]) of one
//! could be reversed by trying all 10^6 values in well under a second, so a leaked record would
//! leak its password. It is stored instead with [`PasswordHash`]: Argon2id under a fresh random
//! salt per record. The salt rules out precomputed tables and makes every record its own search;
//! at Argon2id's memory-hard cost the 10^6 candidates of one record take hours of computing,
//! far longer than the record's ten minutes of validity. The verifier compares in constant time.
//! (A keyed MAC under a server secret would be cheaper and stronger while the key stays secret,
//! but no such key exists yet; only [`OtpHash`] would change.)

use std::fmt;

use crate::random::RandomSource;
use crate::secrets::{PasswordHash, Secret};

/// Digits in a one-time password.
pub const OTP_DIGITS: usize = 6;
/// How long a one-time password is valid: its record's lifetime, and what the mail tells the
/// reader (docs/decisions.md, "One-time passwords").
pub const OTP_VALIDITY_MINUTES: i64 = 10;
const OTP_SPACE: u32 = 1_000_000;

/// A freshly generated one-time password, to be mailed once and then forgotten.
#[derive(Clone, PartialEq, Eq)]
pub struct OneTimePassword(String);

impl OneTimePassword {
    /// Six uniformly distributed decimal digits. Rejection sampling drops the top of the `u32`
    /// range that would otherwise make low values slightly more likely.
    pub fn generate(random: &dyn RandomSource) -> Self {
        const LIMIT: u32 = u32::MAX - u32::MAX % OTP_SPACE;
        loop {
            let mut bytes = [0u8; 4];
            random.fill(&mut bytes);
            let value = u32::from_le_bytes(bytes);
            if value < LIMIT {
                return Self(format!("{:0width$}", value % OTP_SPACE, width = OTP_DIGITS));
            }
        }
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for OneTimePassword {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OneTimePassword([redacted])")
    }
}

/// What the store keeps of a one-time password (see the module documentation).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct OtpHash(PasswordHash);

impl OtpHash {
    /// Argon2id is slow on purpose: call from a blocking task.
    pub fn new(password: &OneTimePassword, random: &dyn RandomSource) -> Self {
        Self(PasswordHash::new(password.expose(), random))
    }

    /// Anything but exactly six digits is simply wrong; it still costs the caller a try.
    pub fn verify(&self, presented: &Secret) -> bool {
        let candidate = presented.expose().trim();
        // Verified regardless of shape, so a malformed guess takes as long as a wrong one.
        let matches = self.0.verify(candidate);
        matches && candidate.len() == OTP_DIGITS && candidate.bytes().all(|b| b.is_ascii_digit())
    }

    /// The PHC string, for the store.
    pub fn as_phc(&self) -> &str {
        self.0.as_phc()
    }

    pub fn from_phc(phc: String) -> Self {
        Self(PasswordHash::from_phc(phc))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::OsRandom;
    use std::sync::Mutex;

    /// Replays fixed words, to drive the rejection sampling.
    #[derive(Debug)]
    struct Scripted(Mutex<Vec<u32>>);

    impl RandomSource for Scripted {
        fn fill(&self, buf: &mut [u8]) {
            let word = self.0.lock().unwrap().remove(0);
            buf.copy_from_slice(&word.to_le_bytes());
        }
    }

    #[test]
    fn generates_six_digits_with_leading_zeros_and_rejects_the_biased_tail() {
        let random = Scripted(Mutex::new(vec![u32::MAX, 4_294_000_000, 42]));
        assert_eq!(OneTimePassword::generate(&random).expose(), "000042");
        assert!(random.0.lock().unwrap().is_empty(), "two draws rejected");

        let password = OneTimePassword::generate(&OsRandom);
        assert_eq!(password.expose().len(), OTP_DIGITS);
        assert!(password.expose().bytes().all(|b| b.is_ascii_digit()));
        assert_eq!(format!("{password:?}"), "OneTimePassword([redacted])");
    }

    #[test]
    fn hash_is_salted_and_verifies_only_the_password() {
        let password = OneTimePassword(String::from("012345"));
        let hash = OtpHash::new(&password, &OsRandom);
        assert!(hash.as_phc().starts_with("$argon2id$"));
        assert_ne!(
            hash,
            OtpHash::new(&password, &OsRandom),
            "salted per record"
        );
        assert!(hash.verify(&Secret::new("012345")));
        assert!(hash.verify(&Secret::new(" 012345 ")));
        assert!(!hash.verify(&Secret::new("012346")));
        assert!(!hash.verify(&Secret::new("12345")));
        assert_eq!(OtpHash::from_phc(hash.as_phc().to_owned()), hash);
    }
}
