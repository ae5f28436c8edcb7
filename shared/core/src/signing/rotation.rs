//! Rotating the stored ring: `tokenctl keys rotate` and the scheduled rotation function call
//! [`rotate`], which is idempotent and safe to run twice at once. It reads the ring, applies
//! [`RingDocument::rotate`] and writes it back on condition that nobody wrote in between; when
//! someone did, it starts again from what they wrote, which then finds the `next` key too
//! recent and changes nothing.
//!
//! A deployment whose ring is still a secret document of the format before keys had states is
//! migrated by the first rotation: the document's newest key becomes `active`, the others
//! `retired` (since their successor was created), their private keys sealed into the stored
//! ring; the document itself is left as it is. An empty ring gets an `active` and a `next` key
//! at once: nothing was ever published, so no verifier can hold an older JWK Set.

use std::sync::Arc;

use p256::pkcs8::{DecodePrivateKey, EncodePrivateKey};
use serde::Serialize;

use super::authenticated::{open_ring, seal_ring, Unauthenticated};
use super::document::{public_coordinates, thumbprint, KeyRingDocument, ServerSecret};
use super::kms::Kms;
use super::ring::{KeyState, Plan, PrivateKey, RingDocument, RingKey};
use super::seal::{Sealer, SEALING_PURPOSE};
use super::KeyError;
use crate::clock::UnixTime;
use crate::random::RandomSource;
use crate::store::{RingWrite, SigningKeyRingStore};

/// How many lost conditional writes in a row [`rotate`] accepts before giving up.
pub(super) const MAX_CONFLICTS: u32 = 5;

/// Where new keys are made.
pub enum KeyFactory {
    /// Generated here, sealed with the server secret.
    Local {
        sealer: Box<Sealer>,
        random: Arc<dyn RandomSource>,
    },
    Kms(Kms),
}

impl KeyFactory {
    pub fn local(server_secret: &ServerSecret, random: Arc<dyn RandomSource>) -> Self {
        Self::Local {
            sealer: Box::new(Sealer::new(server_secret.derive_key(SEALING_PURPOSE))),
            random,
        }
    }

    pub(super) async fn new_key(
        &self,
        state: KeyState,
        now: UnixTime,
    ) -> Result<RingKey, KeyError> {
        let (public, private) = match self {
            Self::Local { sealer, random } => {
                let secret = generate_secret(random.as_ref());
                let (x, y) = public_coordinates(&secret.public_key());
                let der = secret
                    .to_pkcs8_der()
                    .expect("a P-256 key encodes as PKCS#8");
                let sealed = sealer.seal(&thumbprint(&x, &y), der.as_bytes(), random.as_ref());
                (secret.public_key(), PrivateKey::Sealed { sealed })
            }
            Self::Kms(kms) => {
                let (key_arn, public) = kms.create_key().await?;
                (public, PrivateKey::Kms { key_arn })
            }
        };
        let (x, y) = public_coordinates(&public);
        Ok(RingKey {
            kid: thumbprint(&x, &y),
            state,
            created: now,
            activated: (state == KeyState::Active).then_some(now),
            retired: None,
            x,
            y,
            private,
        })
    }

    /// Releases keys no ring names any more: KMS keys are scheduled for deletion; a sealed key
    /// disappears with the entry that held it.
    pub(super) async fn discard(&self, keys: &[RingKey]) {
        let Self::Kms(kms) = self else { return };
        for key in keys {
            if let PrivateKey::Kms { key_arn } = &key.private {
                if let Err(error) = kms.schedule_deletion(key_arn).await {
                    tracing::warn!(%error, kid = %key.kid, "KMS key left undeleted");
                }
            }
        }
    }
}

fn generate_secret(random: &dyn RandomSource) -> p256::SecretKey {
    // A 32-byte string is a valid P-256 scalar except with negligible probability.
    loop {
        let mut bytes = [0u8; 32];
        random.fill(&mut bytes);
        if let Ok(secret) = p256::SecretKey::from_slice(&bytes) {
            return secret;
        }
    }
}

/// What a rotation did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rotation {
    pub plan: Plan,
    /// The ring's version after the rotation (unchanged when nothing was due).
    pub version: Option<u64>,
    pub ring: RingDocument,
}

/// One rotation step at `now` (see the module documentation). `legacy` is the secret document,
/// migrated when the store holds no ring yet.
pub async fn rotate(
    store: &dyn SigningKeyRingStore,
    factory: &KeyFactory,
    legacy: &KeyRingDocument,
    now: UnixTime,
) -> Result<Rotation, KeyError> {
    let secret = legacy.server_secret()?;
    for _ in 0..MAX_CONFLICTS {
        let (mut ring, expected) = current(store, legacy, Unauthenticated::Refuse).await?;
        let plan = ring.plan(now);
        if let Plan::NotDue { .. } = plan {
            return Ok(Rotation {
                plan,
                version: expected,
                ring,
            });
        }
        let mut created = Vec::new();
        if ring.keys.is_empty() {
            let first = factory.new_key(KeyState::Active, now).await?;
            created.push(first.clone());
            ring.keys.push(first);
        }
        let next = factory.new_key(KeyState::Next, now).await?;
        created.push(next.clone());
        let removed = ring.remove_expired(now);
        let plan = ring.rotate(now, next);
        match store
            .replace_signing_key_ring(expected, &seal_ring(&ring, &secret)?)
            .await?
        {
            RingWrite::Written { version } => {
                factory.discard(&removed).await;
                return Ok(Rotation {
                    plan,
                    version: Some(version),
                    ring,
                });
            }
            RingWrite::Conflict => factory.discard(&created).await,
        }
    }
    Err(KeyError::Contended(MAX_CONFLICTS))
}

/// The stored ring and its version, or (`None`) the secret document migrated.
pub(super) async fn current(
    store: &dyn SigningKeyRingStore,
    legacy: &KeyRingDocument,
    unauthenticated: Unauthenticated,
) -> Result<(RingDocument, Option<u64>), KeyError> {
    Ok(match store.load_signing_key_ring().await? {
        Some(stored) => (
            open_ring(&stored.document, &legacy.server_secret()?, unauthenticated)?,
            Some(stored.version),
        ),
        None => (migrate(legacy)?, None),
    })
}

/// The stored ring a secret document of the format before keys had states stands for.
pub fn migrate(document: &KeyRingDocument) -> Result<RingDocument, KeyError> {
    if document.keys.is_empty() {
        return Ok(RingDocument::default());
    }
    let sealer = Sealer::new(document.server_secret()?.derive_key(SEALING_PURPOSE));
    let last = document.keys.len() - 1;
    let mut keys = Vec::new();
    for (index, stored) in document.keys.iter().enumerate() {
        let bad = || KeyError::BadKey {
            kid: stored.kid.clone(),
        };
        let secret = p256::SecretKey::from_pkcs8_pem(&stored.private_key_pem).map_err(|_| bad())?;
        let (x, y) = public_coordinates(&secret.public_key());
        let kid = thumbprint(&x, &y);
        if kid != stored.kid {
            return Err(bad());
        }
        let der = secret.to_pkcs8_der().map_err(|_| bad())?;
        let successor_created = document.keys.get(index + 1).map(|k| k.created_at);
        keys.push(RingKey {
            state: if index == last {
                KeyState::Active
            } else {
                KeyState::Retired
            },
            created: stored.created_at,
            activated: Some(stored.created_at),
            retired: successor_created,
            private: PrivateKey::Sealed {
                sealed: sealer.seal(&kid, der.as_bytes(), &crate::random::OsRandom),
            },
            kid,
            x,
            y,
        });
    }
    Ok(RingDocument { keys })
}

/// One key as `tokenctl keys list` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ListedKey {
    pub kid: String,
    pub state: KeyState,
    pub created: UnixTime,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub activated: Option<UnixTime>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retired: Option<UnixTime>,
}

/// The ring's keys, oldest first: the stored ring, or the secret document as the first rotation
/// would migrate it.
pub async fn list(
    store: &dyn SigningKeyRingStore,
    legacy: &KeyRingDocument,
) -> Result<Vec<ListedKey>, KeyError> {
    // Shown as stored, authenticated or not: what an operator checks before `keys adopt`.
    let (ring, _) = current(store, legacy, Unauthenticated::Read).await?;
    Ok(ring
        .keys
        .into_iter()
        .map(|k| ListedKey {
            kid: k.kid,
            state: k.state,
            created: k.created,
            activated: k.activated,
            retired: k.retired,
        })
        .collect())
}
