//! The stored ring's integrity. The ring lives in the table, which more hands can write than can
//! read the server secret (an operator's role, a misconfigured function): a key added to the ring
//! would be published in the JWK Set, and relying parties would trust tokens it signs. So the
//! stored document is the ring with an HMAC-SHA256 under a key derived from the server secret,
//! checked on every read (`{"ring": "<the ring's JSON>", "mac": "<base64url>"}`).
//!
//! A ring written before the MAC existed is trusted only when each of its keys proves itself:
//! a local key whose sealed private half opens for its `kid` with this deployment's secret and
//! matches the published point. Anything else (a KMS key, a key whose seal does not open) makes
//! the ring unauthenticated: refused, until an operator who has checked `tokenctl keys list`
//! adopts it with `tokenctl keys adopt`, which writes it back with its MAC.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use p256::pkcs8::DecodePrivateKey;
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use super::document::{public_coordinates, thumbprint, ServerSecret};
use super::ring::{PrivateKey, RingDocument, RingKey};
use super::seal::{Sealer, SEALING_PURPOSE};
use super::KeyError;

/// The HKDF label of the MAC key.
pub const RING_MAC_PURPOSE: &str = "signing-key-ring-mac-v1";

#[derive(Serialize, Deserialize)]
struct Authenticated {
    /// The ring's JSON as it was MACed, kept as text so that no re-encoding can change a byte.
    ring: String,
    mac: String,
}

/// What to do with a ring written before the MAC existed whose keys do not all prove
/// themselves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unauthenticated {
    Refuse,
    /// Read it anyway: to show it (`keys list`), or for an operator to adopt it.
    Read,
}

fn mac(secret: &ServerSecret) -> Hmac<Sha256> {
    Hmac::<Sha256>::new_from_slice(&secret.derive_key(RING_MAC_PURPOSE))
        .expect("HMAC takes any key length")
}

/// The document to store for `ring`.
pub fn seal_ring(ring: &RingDocument, secret: &ServerSecret) -> Result<String, KeyError> {
    let ring = serde_json::to_string(ring)?;
    let mut tag = mac(secret);
    tag.update(ring.as_bytes());
    let mac = URL_SAFE_NO_PAD.encode(tag.finalize().into_bytes());
    Ok(serde_json::to_string(&Authenticated { ring, mac })?)
}

/// The ring a stored document holds, once its MAC (or, written before the MAC, each of its keys)
/// proved that a holder of the server secret wrote it.
pub fn open_ring(
    stored: &str,
    secret: &ServerSecret,
    unauthenticated: Unauthenticated,
) -> Result<RingDocument, KeyError> {
    let value: serde_json::Value = serde_json::from_str(stored)?;
    if value.get("mac").is_some() {
        let authenticated: Authenticated = serde_json::from_value(value)?;
        let presented = URL_SAFE_NO_PAD
            .decode(&authenticated.mac)
            .map_err(|_| KeyError::ForgedRing)?;
        let mut tag = mac(secret);
        tag.update(authenticated.ring.as_bytes());
        // Constant time: `verify_slice` compares with `subtle`.
        tag.verify_slice(&presented)
            .map_err(|_| KeyError::ForgedRing)?;
        return Ok(serde_json::from_str(&authenticated.ring)?);
    }
    let ring: RingDocument = serde_json::from_value(value)?;
    let sealer = Sealer::new(secret.derive_key(SEALING_PURPOSE));
    if unauthenticated == Unauthenticated::Read || ring.keys.iter().all(|key| proves(key, &sealer))
    {
        Ok(ring)
    } else {
        Err(KeyError::UnauthenticatedRing)
    }
}

/// A local key proves itself: its seal opens for its `kid`, and the private key it holds has the
/// published point, whose thumbprint is the `kid`.
fn proves(key: &RingKey, sealer: &Sealer) -> bool {
    let PrivateKey::Sealed { sealed } = &key.private else {
        return false;
    };
    sealer
        .open(&key.kid, sealed)
        .and_then(|der| p256::SecretKey::from_pkcs8_der(&der).ok())
        .is_some_and(|secret| {
            let (x, y) = public_coordinates(&secret.public_key());
            x == key.x && y == key.y && thumbprint(&x, &y) == key.kid
        })
}
