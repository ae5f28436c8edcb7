//! ES256 keys held in a key service (`SIGNING_KEYS=kms`; `token_adapters::kms` is AWS KMS): a
//! rotation creates them, each token is one signing call. The private half never leaves the
//! service; the public half is read once, when the key is created, and kept in the ring
//! document, so instances never ask for it again.

use std::sync::Arc;

use async_trait::async_trait;

/// The tag every key of a ring carries; its value is the ring's name. The functions' IAM
/// policies allow `kms:Sign` on keys with this tag and value only.
pub const RING_TAG: &str = "token-service-key-ring";

#[derive(Debug, thiserror::Error)]
pub enum KmsError {
    /// The service did not answer in time, throttled, or could not be reached: 503, sign
    /// nothing.
    #[error("KMS unavailable: {0}")]
    Unavailable(String),
    #[error("KMS: {0}")]
    Failed(String),
}

/// The key service's port.
#[async_trait]
pub trait KmsKeys: Send + Sync + std::fmt::Debug {
    /// Creates a P-256 signing key tagged with the ring's name. Returns its ARN and public key.
    async fn create_key(&self) -> Result<(String, p256::PublicKey), KmsError>;

    /// Schedules a key of the ring for deletion (a removed key, or one a lost rotation made).
    async fn schedule_deletion(&self, key_arn: &str) -> Result<(), KmsError>;

    /// The JOSE signature (`r || s`, 64 bytes) of `message` by the key `key_arn`.
    async fn sign(&self, key_arn: &str, message: &[u8]) -> Result<[u8; 64], KmsError>;
}

/// A key service, shared by the rotation, the signer and the key ring. Cheap to clone.
pub type Kms = Arc<dyn KmsKeys>;

/// A key service that never answers (tests of what an outage does).
#[cfg(test)]
#[derive(Debug)]
pub(crate) struct UnreachableKms;

#[cfg(test)]
#[async_trait]
impl KmsKeys for UnreachableKms {
    async fn create_key(&self) -> Result<(String, p256::PublicKey), KmsError> {
        Err(KmsError::Unavailable("unreachable".to_owned()))
    }

    async fn schedule_deletion(&self, _: &str) -> Result<(), KmsError> {
        Err(KmsError::Unavailable("unreachable".to_owned()))
    }

    async fn sign(&self, _: &str, _: &[u8]) -> Result<[u8; 64], KmsError> {
        Err(KmsError::Unavailable("unreachable".to_owned()))
    }
}
