//! [`SigningKeys`]: the ring an instance signs and verifies with, read from the store at start
//! (a Lambda function: just after its init, or by its first request that needs it; see
//! docs/decisions.md, "Lazy start-up") and again once it is [`RING_REFRESH_SECONDS`] old, so that
//! rotations reach running instances without a redeploy.
//!
//! If a refresh fails (the store is down), the instance keeps the ring it has for up to
//! [`RING_MAX_STALENESS_SECONDS`] in all (the rotation's waits allow for that), then stops
//! signing (503) rather than sign with a key that may have been retired too long ago.
//! Verification keeps the last ring it has: a stale ring can only miss a key, never accept one
//! it should not.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::OnceCell;

use super::authenticated::{open_ring, Unauthenticated};
use super::document::{KeyRingDocument, SecretRef, ServerSecret};
use super::kms::Kms;
use super::ring::{RING_MAX_STALENESS_SECONDS, RING_REFRESH_SECONDS};
use super::rotation::KeyFactory;
use super::{KeyError, KeyRing, SigningError};
use crate::clock::{Clock, UnixTime};
use crate::random::OsRandom;
use crate::store::SigningKeyRingStore;

/// Where private keys live.
#[derive(Debug, Clone)]
pub enum SigningBackend {
    Local,
    Kms(Kms),
}

impl SigningBackend {
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

/// Where the secret document (the server secret, and the legacy ring) is read from.
struct DocumentLocation {
    secret: Option<SecretRef>,
    data_dir: PathBuf,
}

struct Source {
    store: Arc<dyn SigningKeyRingStore>,
    /// Read once, with the ring's first read: a Secrets Manager read is not part of a Lambda
    /// init (docs/decisions.md, "Lazy start-up").
    legacy: OnceCell<KeyRingDocument>,
    location: Option<DocumentLocation>,
    backend: SigningBackend,
    clock: Arc<dyn Clock>,
}

/// The signing keys of one instance. Cheap to clone.
///
/// Opened eagerly ([`Self::open`], the local server and tokenctl) or lazily ([`Self::lazy`], the
/// Lambda functions): then nothing is read until [`Self::load`] or the first request that needs
/// the ring. The first read is single-flight (concurrent callers wait for one read) and never
/// cached as a failure: a failed read fails its callers (503), and the next caller reads again.
#[derive(Clone)]
pub struct SigningKeys {
    loaded: Arc<Mutex<Option<Loaded>>>,
    source: Option<Arc<Source>>,
    /// Held while a first read runs; holds the last failed first read's error.
    first_read: Arc<tokio::sync::Mutex<Option<String>>>,
    /// How many first reads failed: a caller that waited for a read that failed shares its
    /// failure rather than reading again, so that callers waiting on a store that does not
    /// answer do not queue one timeout each.
    failed_reads: Arc<AtomicU64>,
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
        Self::with(
            Some(Loaded {
                ring,
                version: None,
                checked_at: 0,
            }),
            None,
        )
    }

    fn with(loaded: Option<Loaded>, source: Option<Source>) -> Self {
        Self {
            loaded: Arc::new(Mutex::new(loaded)),
            source: source.map(Arc::new),
            first_read: Arc::new(tokio::sync::Mutex::new(None)),
            failed_reads: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Whether tokens are signed by KMS (a call, billed and under a quota the account's
    /// deployments share) rather than with a key in memory.
    pub fn signs_with_kms(&self) -> bool {
        self.source
            .as_ref()
            .is_some_and(|source| matches!(source.backend, SigningBackend::Kms(_)))
    }

    /// Reads the ring: the stored one, or, until the first rotation, the secret document.
    /// Refuses a ring with no active key, and `SIGNING_KEYS=kms` without a stored ring.
    pub async fn open(
        store: Arc<dyn SigningKeyRingStore>,
        legacy: KeyRingDocument,
        backend: SigningBackend,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, KeyError> {
        let keys = Self::with(
            None,
            Some(Source {
                store,
                legacy: OnceCell::new_with(Some(legacy)),
                location: None,
                backend,
                clock,
            }),
        );
        keys.load().await?;
        Ok(keys)
    }

    /// Keys that read nothing yet: the secret document (from `secret`, or the local key
    /// file under `data_dir`) and the ring are read by [`Self::load`] or the first request.
    pub fn lazy(
        store: Arc<dyn SigningKeyRingStore>,
        secret: Option<SecretRef>,
        data_dir: PathBuf,
        backend: SigningBackend,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self::with(
            None,
            Some(Source {
                store,
                legacy: OnceCell::new(),
                location: Some(DocumentLocation { secret, data_dir }),
                backend,
                clock,
            }),
        )
    }

    /// Reads the ring unless it was read already. Concurrent callers share one read; its failure
    /// is returned to the callers that waited for it, and the next call reads again.
    pub async fn load(&self) -> Result<Arc<KeyRing>, KeyError> {
        if let Some(ring) = self.snapshot() {
            return Ok(ring);
        }
        // Fixed keys are loaded from the start.
        let Some(source) = &self.source else {
            return Err(KeyError::Empty);
        };
        let failed_before = self.failed_reads.load(Ordering::SeqCst);
        let mut last_failure = self.first_read.lock().await;
        if let Some(ring) = self.snapshot() {
            return Ok(ring);
        }
        if self.failed_reads.load(Ordering::SeqCst) != failed_before {
            let error = last_failure.clone().unwrap_or_default();
            return Err(KeyError::FirstReadFailed(error));
        }
        let now = source.clock.now();
        match source.read().await {
            Ok((ring, version)) => {
                *self.lock() = Some(Loaded {
                    ring: ring.clone(),
                    version,
                    checked_at: now,
                });
                Ok(ring)
            }
            Err(error) => {
                *last_failure = Some(error.to_string());
                self.failed_reads.fetch_add(1, Ordering::SeqCst);
                Err(error)
            }
        }
    }

    /// Whether the ring has been read (the first read of lazy keys done).
    pub fn is_loaded(&self) -> bool {
        self.lock().is_some()
    }

    /// The ring as last read, without looking at the store: `None` until the first read.
    pub fn snapshot(&self) -> Option<Arc<KeyRing>> {
        self.lock().as_ref().map(|loaded| loaded.ring.clone())
    }

    /// A 256-bit key for one purpose, derived from the server secret; rotations never change it.
    /// Waits for the ring's first read if it has not been made yet.
    pub async fn derive_key(&self, purpose: &str) -> Result<[u8; 32], SigningError> {
        let ring = match self.snapshot() {
            Some(ring) => ring,
            None => Box::pin(self.first_load()).await?,
        };
        Ok(ring.derive_key(purpose))
    }

    async fn first_load(&self) -> Result<Arc<KeyRing>, SigningError> {
        self.load().await.map_err(|error| {
            tracing::warn!(%error, "signing key ring not read");
            SigningError::Unavailable(format!("the signing key ring could not be read: {error}"))
        })
    }

    /// The ring to sign with: read again from the store if it is due (or read for the first
    /// time). Fails when it has never been read and cannot be now, or could not be read for
    /// longer than the rotation allows.
    pub async fn for_signing(&self) -> Result<Arc<KeyRing>, SigningError> {
        let current = self
            .lock()
            .as_ref()
            .map(|loaded| (loaded.ring.clone(), loaded.checked_at));
        // Boxed: the first read's future is large and rarely needed; inline, it would make
        // every signing caller's future as deep.
        let Some((ring, checked_at)) = current else {
            return Box::pin(self.first_load()).await;
        };
        let Some(source) = &self.source else {
            return Ok(ring);
        };
        let now = source.clock.now();
        if now - checked_at < RING_REFRESH_SECONDS {
            return Ok(ring);
        }
        match self.refresh(source, now).await {
            Ok(ring) => Ok(ring),
            Err(error) if now - checked_at < RING_MAX_STALENESS_SECONDS => {
                tracing::warn!(%error, "signing key ring not refreshed; using the one read last");
                Ok(ring)
            }
            Err(error) => Err(SigningError::Unavailable(error.to_string())),
        }
    }

    /// The ring to verify with or publish: refreshed like [`Self::for_signing`], but a failed
    /// refresh keeps the last ring however old. Fails only while the ring has never been read.
    pub async fn for_verifying(&self) -> Result<Arc<KeyRing>, SigningError> {
        match self.for_signing().await {
            Ok(ring) => Ok(ring),
            Err(error) => self.snapshot().ok_or(error),
        }
    }

    async fn refresh(&self, source: &Source, now: UnixTime) -> Result<Arc<KeyRing>, KeyError> {
        let stored = source.store.load_signing_key_ring().await?;
        let Some(last) = self.snapshot() else {
            return Box::pin(self.load()).await;
        };
        let unchanged = {
            let loaded = self.lock();
            let version = loaded.as_ref().and_then(|loaded| loaded.version);
            match &stored {
                Some(stored) => version == Some(stored.version),
                None => version.is_none(),
            }
        };
        // Unchanged: the published set may still shrink as retired keys pass their time, so the
        // ring is rebuilt anyway when it holds a stored ring (cheap: no store or KMS call).
        let (ring, version) = match stored {
            None if unchanged => (last, None),
            None => (
                Arc::new(KeyRing::from_document(source.legacy().await?)?),
                None,
            ),
            Some(stored) => {
                let document = open_ring(
                    &stored.document,
                    &last.server_secret(),
                    Unauthenticated::Refuse,
                )?;
                let ring =
                    KeyRing::from_ring(&document, last.server_secret(), source.backend.kms(), now)?;
                (Arc::new(ring), Some(stored.version))
            }
        };
        *self.lock() = Some(Loaded {
            ring: ring.clone(),
            version,
            checked_at: now,
        });
        Ok(ring)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Loaded>> {
        self.loaded
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Source {
    async fn legacy(&self) -> Result<&KeyRingDocument, KeyError> {
        self.legacy
            .get_or_try_init(|| async {
                // Eagerly opened keys hold their document: this runs only for lazy ones.
                let Some(location) = &self.location else {
                    return Err(KeyError::Secret("no secret document to read".to_owned()));
                };
                // Boxed: the Secrets Manager call's future is deep, and every signing caller's
                // future would be as deep.
                Box::pin(KeyRingDocument::load(
                    location.secret.as_ref(),
                    &location.data_dir,
                ))
                .await
            })
            .await
    }

    async fn read(&self) -> Result<(Arc<KeyRing>, Option<u64>), KeyError> {
        // The secret document and the stored ring do not depend on each other.
        let (legacy, stored) = tokio::join!(self.legacy(), self.store.load_signing_key_ring());
        let legacy = legacy?;
        let server_secret = Arc::new(legacy.server_secret()?);
        match stored? {
            Some(stored) => {
                let document =
                    open_ring(&stored.document, &server_secret, Unauthenticated::Refuse)?;
                let ring = KeyRing::from_ring(
                    &document,
                    server_secret,
                    self.backend.kms(),
                    self.clock.now(),
                )?;
                Ok((Arc::new(ring), Some(stored.version)))
            }
            None if matches!(self.backend, SigningBackend::Kms(_)) => Err(KeyError::NoKmsRing),
            None => Ok((Arc::new(KeyRing::from_document(legacy)?), None)),
        }
    }
}
