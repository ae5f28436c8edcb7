//! The key service of `token_core::signing::kms` on AWS KMS: ES256 keys held in AWS KMS (`SIGNING_KEYS=kms`): created by a rotation (`ECC_NIST_P256`,
//! `SIGN_VERIFY`, tagged with the ring's name so that IAM can allow signing with the ring's keys
//! only), used with one `kms:Sign` (`ECDSA_SHA_256`) per token. The private half never leaves
//! KMS; the public half is read once, when the key is created, and kept in the ring document,
//! so instances never call `GetPublicKey`.
//!
//! KMS answers an ECDSA signature in DER; a JWS carries the 64-byte `r || s` (RFC 7518 §3.4).

use std::time::Duration;

use aws_config::retry::RetryConfig;
use aws_config::timeout::TimeoutConfig;
use aws_sdk_kms::error::DisplayErrorContext;
use aws_sdk_kms::primitives::Blob;
use aws_sdk_kms::types::{KeySpec, KeyUsageType, MessageType, SigningAlgorithmSpec, Tag};
use aws_sdk_kms::Client;
use p256::pkcs8::DecodePublicKey;
use token_core::signing::kms::{Kms, KmsError, KmsKeys, RING_TAG};

/// KMS's shortest wait before a key scheduled for deletion is deleted.
const DELETION_WINDOW_DAYS: i32 = 7;

/// A KMS client, with timeouts that turn an unreachable KMS into a 503 within a few seconds.
#[derive(Debug, Clone)]
pub struct AwsKms {
    client: Client,
    ring_name: String,
}

impl AwsKms {
    /// With `endpoint` (a local emulator), requests go there, under the one rule for local
    /// endpoints (`token_store::aws_sdk::loader_for`).
    pub async fn connect(endpoint: Option<&str>, ring_name: &str) -> Self {
        let timeouts = TimeoutConfig::builder()
            .connect_timeout(Duration::from_secs(1))
            .operation_attempt_timeout(Duration::from_secs(2))
            .operation_timeout(Duration::from_secs(4))
            .build();
        let retries = RetryConfig::standard()
            .with_max_attempts(2)
            .with_initial_backoff(Duration::from_millis(50));
        let loader = token_store::aws_sdk::loader_for(endpoint, "kms-local")
            .timeout_config(timeouts)
            .retry_config(retries);
        Self {
            client: Client::new(&loader.load().await),
            ring_name: ring_name.to_owned(),
        }
    }
}

/// The ring's key service on AWS KMS: what `SigningBackend::Kms` takes.
pub async fn connect(endpoint: Option<&str>, ring_name: &str) -> Kms {
    std::sync::Arc::new(AwsKms::connect(endpoint, ring_name).await)
}

#[async_trait::async_trait]
impl KmsKeys for AwsKms {
    /// Creates a P-256 signing key tagged with the ring's name. Returns its ARN and public key.
    async fn create_key(&self) -> Result<(String, p256::PublicKey), KmsError> {
        let tag = Tag::builder()
            .tag_key(RING_TAG)
            .tag_value(&self.ring_name)
            .build()
            .map_err(|e| KmsError::Failed(e.to_string()))?;
        let created = self
            .client
            .create_key()
            .key_spec(KeySpec::EccNistP256)
            .key_usage(KeyUsageType::SignVerify)
            .description(format!(
                "ES256 token signing key of ring {}",
                self.ring_name
            ))
            .tags(tag)
            .send()
            .await
            .map_err(|e| classify("CreateKey", e))?;
        let arn = created
            .key_metadata()
            .and_then(|m| m.arn())
            .ok_or_else(|| KmsError::Failed("CreateKey answered no key ARN".to_owned()))?
            .to_owned();
        let public = self
            .client
            .get_public_key()
            .key_id(&arn)
            .send()
            .await
            .map_err(|e| classify("GetPublicKey", e))?;
        let der = public
            .public_key()
            .ok_or_else(|| KmsError::Failed("GetPublicKey answered no key".to_owned()))?;
        let key = p256::PublicKey::from_public_key_der(der.as_ref())
            .map_err(|_| KmsError::Failed(format!("{arn} is not a P-256 public key")))?;
        Ok((arn, key))
    }

    /// Schedules a key of the ring for deletion (a removed key, or one a lost rotation made).
    async fn schedule_deletion(&self, key_arn: &str) -> Result<(), KmsError> {
        // By the key's id: KMS takes the id or the ARN alike, but the local KMS of the tests
        // (moto 5.2.5) fails on an ARN here (a 500), and the deletion would go unchecked.
        let key_id = key_arn.rsplit_once(":key/").map_or(key_arn, |(_, id)| id);
        self.client
            .schedule_key_deletion()
            .key_id(key_id)
            .pending_window_in_days(DELETION_WINDOW_DAYS)
            .send()
            .await
            .map_err(|e| classify("ScheduleKeyDeletion", e))?;
        Ok(())
    }

    /// The JOSE signature (`r || s`, 64 bytes) of `message` by the key `key_arn`.
    async fn sign(&self, key_arn: &str, message: &[u8]) -> Result<[u8; 64], KmsError> {
        // RAW: KMS hashes the message (up to 4096 bytes; a JWS signing input is far smaller).
        let signed = self
            .client
            .sign()
            .key_id(key_arn)
            .message(Blob::new(message))
            .message_type(MessageType::Raw)
            .signing_algorithm(SigningAlgorithmSpec::EcdsaSha256)
            .send()
            .await
            .map_err(|e| classify("Sign", e))?;
        let der = signed
            .signature()
            .ok_or_else(|| KmsError::Failed("Sign answered no signature".to_owned()))?;
        der_to_jose(der.as_ref())
            .ok_or_else(|| KmsError::Failed("Sign answered a malformed signature".to_owned()))
    }
}

/// An ECDSA P-256 signature from ASN.1 DER to the fixed-size JOSE form.
pub fn der_to_jose(der: &[u8]) -> Option<[u8; 64]> {
    let signature = p256::ecdsa::Signature::from_der(der).ok()?;
    Some(signature.to_bytes().into())
}

fn classify<E>(op: &str, error: aws_sdk_kms::error::SdkError<E>) -> KmsError
where
    E: std::error::Error + Send + Sync + 'static,
{
    use aws_sdk_kms::error::SdkError;
    let text = format!("{op}: {}", DisplayErrorContext(&error));
    match &error {
        SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) | SdkError::ResponseError(_) => {
            KmsError::Unavailable(text)
        }
        SdkError::ServiceError(service)
            if service.raw().status().is_server_error()
                || service.raw().status().as_u16() == 429 =>
        {
            KmsError::Unavailable(text)
        }
        _ => KmsError::Failed(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::ecdsa::signature::{Signer, Verifier};

    #[test]
    fn der_signatures_become_r_and_s() {
        let key = p256::ecdsa::SigningKey::random(&mut rand::rngs::OsRng);
        let signature: p256::ecdsa::Signature = key.sign(b"input");
        let jose = der_to_jose(signature.to_der().as_bytes()).unwrap();
        let back = p256::ecdsa::Signature::from_slice(&jose).unwrap();
        key.verifying_key().verify(b"input", &back).unwrap();
        assert_eq!(der_to_jose(b"\x30\x02\x01\x01"), None);
    }
}
