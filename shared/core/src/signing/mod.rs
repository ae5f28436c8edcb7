//! The ES256 keys that sign access and ID tokens, and their public JWK Set.
//!
//! Where the ring lives (see `docs/decisions.md`, "Signing keys"):
//! - the ring's states and public halves are one versioned document in the store (DynamoDB item
//!   `SIGNINGKEYS#RING`/`RING`, or a SQLite row; [`crate::store::SigningKeyRingStore`]). Every
//!   instance reads it at cold start and again every [`ring::RING_REFRESH_SECONDS`], so a
//!   rotation reaches running functions without a redeploy; a rotation replaces it with a write
//!   conditional on the version it read, so concurrent rotations leave one consistent ring;
//! - private halves: with `SIGNING_KEYS=local` (the default) each key's PKCS#8 document is
//!   sealed in the ring with a key derived from the server secret ([`seal`]), and the server
//!   secret stays where it always was ([`document`]: Secrets Manager, or the local key file);
//!   with `SIGNING_KEYS=kms` the keys are AWS KMS keys named by ARN ([`kms`]);
//! - the function roles only read the ring: only `tokenctl keys rotate` and the scheduled
//!   rotation function write it ([`rotation`]). Until the first rotation, a deployment whose
//!   ring is still today's secret document signs with that document's newest key, as before.
//!
//! Key states and the waits between them are in [`ring`].

use std::path::PathBuf;

pub mod authenticated;
pub mod document;
mod jwk_set;
mod keyring;
pub mod kms;
pub mod revocation;
pub mod ring;
pub mod rotation;
pub mod seal;
mod signer;
mod source;

pub use document::{
    rotate_local, KeyRingDocument, SecretRef, SecretStore, ServerSecret, StoredKey, LOCAL_KEY_FILE,
    MAX_KEYS, SERVER_SECRET_BYTES,
};
pub use jwk_set::{JwkSet, PublicJwk};
pub use keyring::{KeyRing, SigningError};
pub use signer::{encode_part, Es256Signer};
pub use source::{SigningBackend, SigningKeys};

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error(
        "the signing key ring is empty: create its keys with `tokenctl keys rotate` (or by \
         invoking the key rotation function)"
    )]
    Empty,
    #[error("signing key {kid} is not a P-256 PKCS#8 key")]
    BadKey { kid: String },
    #[error("signing key {kid} could not be unsealed with this deployment's server secret")]
    Unseal { kid: String },
    #[error("signing key {kid} is held in KMS, but SIGNING_KEYS is not `kms`")]
    KmsNotConfigured { kid: String },
    #[error("signing key ring is not valid JSON: {0}")]
    BadDocument(#[from] serde_json::Error),
    #[error(transparent)]
    Ring(#[from] ring::RingError),
    #[error("signing key file {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("signing key secret could not be read: {0}")]
    Secret(String),
    #[error("the key ring's server_secret must be {SERVER_SECRET_BYTES} bytes of base64url")]
    BadServerSecret,
    #[error(
        "SIGNING_KEYS=kms, but the table holds no signing key ring yet: create it with \
         `tokenctl keys rotate` (or by invoking the key rotation function) before starting"
    )]
    NoKmsRing,
    #[error("the signing key ring's read that this request waited for failed: {0}")]
    FirstReadFailed(String),
    #[error("signing key ring store: {0}")]
    Store(#[from] crate::store::StoreError),
    #[error(transparent)]
    Kms(#[from] kms::KmsError),
    #[error("the signing key ring was changed by {0} concurrent writers in a row; try again")]
    Contended(u32),
    #[error(
        "the stored signing key ring's MAC does not match: it was not written with this \
         deployment's server secret, and is not trusted"
    )]
    ForgedRing,
    #[error(
        "the stored signing key ring carries no MAC and its keys do not prove themselves: check \
         `tokenctl keys list`, then `tokenctl keys adopt` to trust it"
    )]
    UnauthenticatedRing,
    #[error("the signing key ring holds no key {0}")]
    UnknownKey(String),
}

#[cfg(test)]
mod revocation_tests;
#[cfg(test)]
mod tests;
