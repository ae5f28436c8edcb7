//! Withdrawing keys from the stored ring at once (`tokenctl keys revoke KID`, for a compromised
//! key) and adopting a ring written before rings carried a MAC (`tokenctl keys adopt`). Both are
//! conditional writes on the version read, like a rotation.
//!
//! A revoked key leaves the ring, so the JWK Set stops publishing it at the next refresh of each
//! instance (within `RING_MAX_STALENESS_SECONDS`) and relying parties stop trusting it once
//! their cached JWK Set expires (`JWKS_MAX_AGE_SECONDS`): minutes, where waiting for its
//! retirement to run out takes more than an hour. Revoking the active key makes the `next` key
//! sign at once, without its usual wait: a relying party holding a JWK Set older than the `next`
//! key's publication may refuse new tokens until it fetches the set again, which is the price of
//! no longer trusting the compromised one. A new `next` key is published in its place.

use super::authenticated::{seal_ring, Unauthenticated};
use super::ring::{KeyState, RingDocument};
use super::rotation::{current, KeyFactory, MAX_CONFLICTS};
use super::{KeyError, KeyRingDocument};
use crate::clock::UnixTime;
use crate::store::{RingWrite, SigningKeyRingStore};

/// What a revocation did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revoked {
    /// The state the key was in.
    pub was: KeyState,
    pub version: u64,
    pub ring: RingDocument,
}

/// Removes `kid` from the stored ring (see the module documentation).
pub async fn revoke(
    store: &dyn SigningKeyRingStore,
    factory: &KeyFactory,
    legacy: &KeyRingDocument,
    kid: &str,
    now: UnixTime,
) -> Result<Revoked, KeyError> {
    let secret = legacy.server_secret()?;
    for _ in 0..MAX_CONFLICTS {
        let (mut ring, expected) = current(store, legacy, Unauthenticated::Refuse).await?;
        let Some(index) = ring.keys.iter().position(|key| key.kid == kid) else {
            return Err(KeyError::UnknownKey(kid.to_owned()));
        };
        let removed = ring.keys.remove(index);
        let mut created = Vec::new();
        if removed.state != KeyState::Retired {
            if removed.state == KeyState::Active {
                let promoted = match ring.keys.iter_mut().find(|k| k.state == KeyState::Next) {
                    Some(next) => next,
                    None => {
                        let key = factory.new_key(KeyState::Next, now).await?;
                        created.push(key.clone());
                        ring.keys.push(key);
                        ring.keys.last_mut().expect("just pushed")
                    }
                };
                promoted.state = KeyState::Active;
                promoted.activated = Some(now);
            }
            let next = factory.new_key(KeyState::Next, now).await?;
            created.push(next.clone());
            ring.keys.push(next);
        }
        match store
            .replace_signing_key_ring(expected, &seal_ring(&ring, &secret)?)
            .await?
        {
            RingWrite::Written { version } => {
                factory.discard(std::slice::from_ref(&removed)).await;
                return Ok(Revoked {
                    was: removed.state,
                    version,
                    ring,
                });
            }
            RingWrite::Conflict => factory.discard(&created).await,
        }
    }
    Err(KeyError::Contended(MAX_CONFLICTS))
}

/// Writes the stored ring back with its MAC, as it is: for a ring written before rings carried
/// one, once an operator has checked its keys. Returns the new version; `None` when the store
/// holds no ring (nothing to adopt).
pub async fn adopt(
    store: &dyn SigningKeyRingStore,
    legacy: &KeyRingDocument,
) -> Result<Option<u64>, KeyError> {
    let secret = legacy.server_secret()?;
    for _ in 0..MAX_CONFLICTS {
        let (ring, Some(expected)) = current(store, legacy, Unauthenticated::Read).await? else {
            return Ok(None);
        };
        if let RingWrite::Written { version } = store
            .replace_signing_key_ring(Some(expected), &seal_ring(&ring, &secret)?)
            .await?
        {
            return Ok(Some(version));
        }
    }
    Err(KeyError::Contended(MAX_CONFLICTS))
}
