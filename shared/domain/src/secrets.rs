//! Everything that turns a credential into what may be stored.
//!
//! - High-entropy values we generate (refresh tokens, auth tokens, client secrets, imported legacy
//!   tokens) are stored as SHA-256 digests. A digest of a 256-bit random value cannot be
//!   brute-forced, and it doubles as the lookup key.
//! - User passwords are low-entropy, so they get Argon2id with a per-user salt.
//! - Presented secrets are compared in constant time.
//! - [`Secret`] wraps presented credentials so that `Debug` and logs never show them.

use argon2::password_hash::{PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;
use subtle::ConstantTimeEq;

use crate::random::RandomSource;

/// The SHA-256 digest of a high-entropy credential, hex-encoded when stored.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct TokenHash([u8; 32]);

impl TokenHash {
    pub fn of(credential: &str) -> Self {
        Self(Sha256::digest(credential.as_bytes()).into())
    }

    /// Constant-time check of a presented credential against this digest.
    pub fn verify(&self, presented: &str) -> bool {
        Self::of(presented).0.ct_eq(&self.0).into()
    }

    /// Whether two digests are equal, in constant time: for checking one presented credential
    /// against several stored digests without stopping at the first match.
    pub fn ct_matches(&self, other: &TokenHash) -> subtle::Choice {
        self.0.ct_eq(&other.0)
    }

    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }

    pub fn from_hex(text: &str) -> Result<Self, InvalidHash> {
        let mut bytes = [0u8; 32];
        hex::decode_to_slice(text, &mut bytes).map_err(|_| InvalidHash)?;
        Ok(Self(bytes))
    }
}

/// Only a prefix, so that a digest in a debug print cannot be used as a lookup key.
impl fmt::Debug for TokenHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TokenHash({}…)", &self.to_hex()[..8])
    }
}

impl TryFrom<String> for TokenHash {
    type Error = InvalidHash;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::from_hex(&value)
    }
}

impl From<TokenHash> for String {
    fn from(value: TokenHash) -> Self {
        value.to_hex()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("stored hash is malformed")]
pub struct InvalidHash;

/// The decoy: Argon2id with the default parameters (so that verifying it costs what verifying a
/// user's hash costs; a test pins this) of a random password that was thrown away.
const DECOY_PHC: &str =
    "$argon2id$v=19$m=19456,t=2,p=1$6gSREyEsaUCzOM7Y8TxhPg$TslVutrl64JAzjfQTlsEfXh8bAKd6ytuwPDA6wgccUs";

/// An Argon2id hash in PHC string format (`$argon2id$v=19$m=…`), parameters included.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PasswordHash(String);

impl PasswordHash {
    pub fn new(password: &str, random: &dyn RandomSource) -> Self {
        let mut salt = [0u8; 16];
        random.fill(&mut salt);
        let salt = SaltString::encode_b64(&salt).expect("16 bytes is a valid salt length");
        let phc = Argon2::default()
            .hash_password(password.as_bytes(), &salt)
            .expect("Argon2 default parameters accept any password")
            .to_string();
        Self(phc)
    }

    pub fn from_phc(phc: String) -> Self {
        Self(phc)
    }

    pub fn as_phc(&self) -> &str {
        &self.0
    }

    /// Argon2's verifier compares the digests in constant time.
    pub fn verify(&self, password: &str) -> bool {
        match argon2::password_hash::PasswordHash::new(&self.0) {
            Ok(parsed) => Argon2::default()
                .verify_password(password.as_bytes(), &parsed)
                .is_ok(),
            Err(_) => false,
        }
    }

    /// A fixed hash to verify against when the login is unknown, so that an unknown login costs
    /// the same time as a wrong password and the two cannot be told apart. Precomputed (see
    /// [`DECOY_PHC`]): building it on first use would make the first unknown login slower than
    /// every other answer, and run Argon2 on an async worker.
    pub fn decoy() -> &'static PasswordHash {
        static DECOY: std::sync::LazyLock<PasswordHash> =
            std::sync::LazyLock::new(|| PasswordHash(DECOY_PHC.to_owned()));
        &DECOY
    }
}

impl fmt::Debug for PasswordHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PasswordHash(..)")
    }
}

/// A credential presented by a caller (password, token, secret). It is never printed.
#[derive(Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn hash(&self) -> TokenHash {
        TokenHash::of(&self.0)
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::OsRandom;

    #[test]
    fn token_hash_round_trips_and_verifies() {
        let h = TokenHash::of("abc");
        assert_eq!(
            h.to_hex(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(TokenHash::from_hex(&h.to_hex()).unwrap(), h);
        assert!(h.verify("abc"));
        assert!(!h.verify("abd"));
        assert!(TokenHash::from_hex("zz").is_err());
    }

    #[test]
    fn debug_output_hides_credentials() {
        assert_eq!(
            format!("{:?}", Secret::new("hunter2")),
            "Secret([redacted])"
        );
        let h = TokenHash::of("abc");
        assert!(!format!("{h:?}").contains(&h.to_hex()));
    }

    /// The decoy is ready before any request (no hashing on first use), and it costs what a
    /// real user's hash costs: same algorithm, version, parameters, salt and output lengths.
    #[test]
    fn the_decoy_is_precomputed_with_the_parameters_of_new_hashes() {
        assert_eq!(PasswordHash::decoy().as_phc(), DECOY_PHC);
        let shape = |phc: &str| {
            let parsed = argon2::password_hash::PasswordHash::new(phc).unwrap();
            let params = argon2::Params::try_from(&parsed).unwrap();
            (
                parsed.algorithm.to_string(),
                parsed.version,
                (params.m_cost(), params.t_cost(), params.p_cost()),
                parsed.salt.map(|s| s.as_str().len()),
                parsed.hash.map(|h| h.len()),
            )
        };
        let user = PasswordHash::new("correct horse", &OsRandom);
        assert_eq!(shape(DECOY_PHC), shape(user.as_phc()));
        assert!(!PasswordHash::decoy().verify("decoy password"));
    }

    #[test]
    fn passwords_use_argon2id_and_verify() {
        let hash = PasswordHash::new("correct horse", &OsRandom);
        assert!(hash.as_phc().starts_with("$argon2id$"));
        assert!(hash.verify("correct horse"));
        assert!(!hash.verify("correct horsE"));
        assert_ne!(
            hash,
            PasswordHash::new("correct horse", &OsRandom),
            "salted"
        );
    }
}
