//! [`SigningKeys`]: the ring an instance signs and verifies with, read from the store at cold
//! start and again once it is [`RING_REFRESH_SECONDS`] old, so that rotations reach running
//! instances without a redeploy.
//!
//! If a refresh fails (the store is down), the instance keeps the ring it has for up to
//! [`RING_MAX_STALENESS_SECONDS`] in all (the rotation's waits allow for that), then stops
//! signing (503) rather than sign with a key that may have been retired too long ago.
//! Verification keeps the last ring it has: a stale ring can only miss a key, never accept one
//! it should not.

use std::sync::{Arc, Mutex};

use super::document::{KeyRingDocument, ServerSecret};
use super::kms::Kms;
use super::ring::{RingDocument, RING_MAX_STALENESS_SECONDS, RING_REFRESH_SECONDS};
use super::rotation::KeyFactory;
use super::{KeyError, KeyRing, SigningError};
use crate::clock::{Clock, UnixTime};
use crate::config::Config;
use crate::random::OsRandom;
use crate::store::SigningKeyRingStore;

/// The environment variable naming where private keys live: `local` (default) or `kms`.
pub const SIGNING_KEYS_VAR: &str = "SIGNING_KEYS";
/// A KMS endpoint other than AWS's (a local emulator, for tests and development).
pub const KMS_ENDPOINT_VAR: &str = "KMS_ENDPOINT";
/// The name that tags a ring's KMS keys (the deployment's stack name in AWS).
pub const KEY_RING_NAME_VAR: &str = "SIGNING_KEY_RING_NAME";

/// Where private keys live.
#[derive(Debug, Clone)]
pub enum SigningBackend {
    Local,
    Kms(Kms),
}

impl SigningBackend {
    /// From `SIGNING_KEYS`, `KMS_ENDPOINT` and `SIGNING_KEY_RING_NAME`.
    pub async fn from_env() -> Result<Self, KeyError> {
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        match env(SIGNING_KEYS_VAR).as_deref() {
            None | Some("local") => Ok(Self::Local),
            Some("kms") => {
                let name = env(KEY_RING_NAME_VAR).unwrap_or_else(|| "token-service".to_owned());
                Ok(Self::Kms(
                    Kms::connect(env(KMS_ENDPOINT_VAR).as_deref(), &name).await,
                ))
            }
            Some(other) => Err(KeyError::BadBackend(other.to_owned())),
        }
    }

    fn kms(&self) -> Option<&Kms> {
        match self {
            Self::Local => None,
            Self::Kms(kms) => Some(kms),
        }
    }

    /// Where a rotation makes new keys.
    pub fn factory(&self, server_secret: &ServerSecret) -> KeyFactory {
        match self {
            Self::Local => KeyFactory::local(server_secret, Arc::new(OsRandom)),
            Self::Kms(kms) => KeyFactory::Kms(kms.clone()),
        }
    }
}

struct Loaded {
    ring: Arc<KeyRing>,
    /// `None` while the ring is the secret document (no stored ring yet).
    version: Option<u64>,
    /// When the store last answered.
    checked_at: UnixTime,
}

struct Source {
    store: Arc<dyn SigningKeyRingStore>,
    legacy: KeyRingDocument,
    backend: SigningBackend,
    clock: Arc<dyn Clock>,
}

/// The signing keys of one instance. Cheap to clone.
#[derive(Clone)]
pub struct SigningKeys {
    loaded: Arc<Mutex<Loaded>>,
    source: Option<Arc<Source>>,
}

impl std::fmt::Debug for SigningKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("SigningKeys")
            .field(&self.snapshot())
            .finish()
    }
}

impl SigningKeys {
    /// A ring that never changes (tests).
    pub fn fixed(ring: Arc<KeyRing>) -> Self {
        Self {
            loaded: Arc::new(Mutex::new(Loaded {
                ring,
                version: None,
                checked_at: 0,
            })),
            source: None,
        }
    }

    /// Reads the ring: the stored one, or, until the first rotation, the secret document.
    /// Refuses a ring with no active key, and `SIGNING_KEYS=kms` without a stored ring.
    pub async fn open(
        store: Arc<dyn SigningKeyRingStore>,
        legacy: KeyRingDocument,
        backend: SigningBackend,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, KeyError> {
        let source = Source {
            store,
            legacy,
            backend,
            clock,
        };
        let now = source.clock.now();
        let (ring, version) = source.read().await?;
        Ok(Self {
            loaded: Arc::new(Mutex::new(Loaded {
                ring,
                version,
                checked_at: now,
            })),
            source: Some(Arc::new(source)),
        })
    }

    /// [`Self::open`] with the configuration every binary reads (`SIGNING_KEYS_SECRET_ARN` or
    /// the local key file, `SIGNING_KEYS`, the store).
    pub async fn from_config(config: &Config, clock: Arc<dyn Clock>) -> Result<Self, KeyError> {
        // Three independent reads at a cold start (a secret, the store's client, KMS's): side
        // by side rather than one after the other.
        let (legacy, store, backend) = tokio::join!(
            KeyRingDocument::load(config.signing_keys_secret_arn.as_deref(), &config.data_dir),
            crate::store::open_signing_key_ring(config),
            SigningBackend::from_env(),
        );
        Self::open(store?, legacy?, backend?, clock).await
    }

    /// The ring as last read, without looking at the store.
    pub fn snapshot(&self) -> Arc<KeyRing> {
        self.lock().ring.clone()
    }

    /// A 256-bit key for one purpose, derived from the server secret; rotations never change it.
    pub fn derive_key(&self, purpose: &str) -> [u8; 32] {
        self.snapshot().derive_key(purpose)
    }

    /// The ring to sign with: read again from the store if it is due. Fails only when the ring
    /// could not be read for longer than the rotation allows.
    pub async fn for_signing(&self) -> Result<Arc<KeyRing>, SigningError> {
        let Some(source) = &self.source else {
            return Ok(self.snapshot());
        };
        let now = source.clock.now();
        let checked_at = self.lock().checked_at;
        if now - checked_at < RING_REFRESH_SECONDS {
            return Ok(self.snapshot());
        }
        match self.refresh(source, now).await {
            Ok(ring) => Ok(ring),
            Err(error) if now - checked_at < RING_MAX_STALENESS_SECONDS => {
                tracing::warn!(%error, "signing key ring not refreshed; using the one read last");
                Ok(self.snapshot())
            }
            Err(error) => Err(SigningError::Unavailable(error.to_string())),
        }
    }

    /// The ring to verify with or publish: refreshed like [`Self::for_signing`], but a failed
    /// refresh keeps the last ring however old.
    pub async fn for_verifying(&self) -> Arc<KeyRing> {
        match self.for_signing().await {
            Ok(ring) => ring,
            Err(_) => self.snapshot(),
        }
    }

    async fn refresh(&self, source: &Source, now: UnixTime) -> Result<Arc<KeyRing>, KeyError> {
        let stored = source.store.load_signing_key_ring().await?;
        let mut loaded = self.lock();
        let unchanged = match &stored {
            Some(stored) => loaded.version == Some(stored.version),
            None => loaded.version.is_none(),
        };
        drop(loaded);
        // Unchanged: the published set may still shrink as retired keys pass their time, so the
        // ring is rebuilt anyway when it holds a stored ring (cheap: no store or KMS call).
        let (ring, version) = match stored {
            None if unchanged => (self.snapshot(), None),
            None => (Arc::new(KeyRing::from_document(&source.legacy)?), None),
            Some(stored) => {
                let document: RingDocument = serde_json::from_str(&stored.document)?;
                let ring = KeyRing::from_ring(
                    &document,
                    self.snapshot().server_secret(),
                    source.backend.kms(),
                    now,
                )?;
                (Arc::new(ring), Some(stored.version))
            }
        };
        loaded = self.lock();
        *loaded = Loaded {
            ring: ring.clone(),
            version,
            checked_at: now,
        };
        Ok(ring)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Loaded> {
        self.loaded
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Source {
    async fn read(&self) -> Result<(Arc<KeyRing>, Option<u64>), KeyError> {
        let server_secret = Arc::new(self.legacy.server_secret()?);
        match self.store.load_signing_key_ring().await? {
            Some(stored) => {
                let document: RingDocument = serde_json::from_str(&stored.document)?;
                let ring = KeyRing::from_ring(
                    &document,
                    server_secret,
                    self.backend.kms(),
                    self.clock.now(),
                )?;
                Ok((Arc::new(ring), Some(stored.version)))
            }
            None if matches!(self.backend, SigningBackend::Kms(_)) => Err(KeyError::NoKmsRing),
            None => Ok((Arc::new(KeyRing::from_document(&self.legacy)?), None)),
        }
    }
}
