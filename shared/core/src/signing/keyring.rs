//! The ring as an instance uses it: the published keys ready to verify, the active key ready to
//! sign, and the server secret. Built from the stored ring (or from a secret document of the
//! format before keys had states); cheap to share behind an `Arc`.

use std::sync::Arc;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use jsonwebtoken::DecodingKey;
use p256::pkcs8::DecodePrivateKey;
use serde::Serialize;

use super::document::{public_coordinates, KeyRingDocument, ServerSecret};
use super::kms::{Kms, KmsError};
use super::ring::{KeyState, PrivateKey, RingDocument, RingKey};
use super::seal::{Sealer, SEALING_PURPOSE};
use super::{Es256Signer, JwkSet, KeyError, PublicJwk};
use crate::clock::{Clock, UnixTime};
use crate::random::RandomSource;

/// Why a token could not be signed. Nothing is signed with another key instead.
#[derive(Debug, thiserror::Error)]
pub enum SigningError {
    /// KMS unreachable, slow or throttling, or the ring could not be refreshed for too long:
    /// the request may succeed later (503).
    #[error("signing unavailable: {0}")]
    Unavailable(String),
}

enum KeySigner {
    Local(Es256Signer),
    Kms { kms: Kms, key_arn: String },
}

struct PublishedKey {
    kid: String,
    state: KeyState,
    decoding: DecodingKey,
    x: String,
    y: String,
}

pub struct KeyRing {
    /// Oldest first.
    keys: Vec<PublishedKey>,
    active_kid: String,
    signer: KeySigner,
    server_secret: Arc<ServerSecret>,
}

impl std::fmt::Debug for KeyRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kids: Vec<(&str, KeyState)> = self.keys.iter().map(|k| (&*k.kid, k.state)).collect();
        f.debug_struct("KeyRing")
            .field("keys", &kids)
            .field("active", &self.active_kid)
            .finish_non_exhaustive()
    }
}

impl KeyRing {
    /// The ring a secret document of the format before keys had states stands for: its newest
    /// key signs, the older ones are retired.
    pub fn from_document(document: &KeyRingDocument) -> Result<Self, KeyError> {
        let newest = document.keys.last().ok_or(KeyError::Empty)?;
        let bad = |kid: &str| KeyError::BadKey {
            kid: kid.to_owned(),
        };
        let mut keys = Vec::new();
        for stored in &document.keys {
            let secret = p256::SecretKey::from_pkcs8_pem(&stored.private_key_pem)
                .map_err(|_| bad(&stored.kid))?;
            let state = if stored.kid == newest.kid {
                KeyState::Active
            } else {
                KeyState::Retired
            };
            keys.push(published(&stored.kid, state, &secret.public_key())?);
        }
        let secret = p256::SecretKey::from_pkcs8_pem(&newest.private_key_pem)
            .map_err(|_| bad(&newest.kid))?;
        Ok(Self {
            keys,
            active_kid: newest.kid.clone(),
            signer: KeySigner::Local(Es256Signer::new(&secret).ok_or_else(|| bad(&newest.kid))?),
            server_secret: Arc::new(document.server_secret()?),
        })
    }

    /// The stored ring's keys published at `now`; local keys are unsealed with `server_secret`,
    /// KMS keys need `kms`.
    pub fn from_ring(
        ring: &RingDocument,
        server_secret: Arc<ServerSecret>,
        kms: Option<&Kms>,
        now: UnixTime,
    ) -> Result<Self, KeyError> {
        let active = ring.active()?;
        let keys = ring
            .published(now)
            .map(|key| {
                let public = public_key(key)?;
                published(&key.kid, key.state, &public)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let signer = match &active.private {
            PrivateKey::Sealed { sealed } => {
                let sealer = Sealer::new(server_secret.derive_key(SEALING_PURPOSE));
                let der = sealer
                    .open(&active.kid, sealed)
                    .ok_or_else(|| KeyError::Unseal {
                        kid: active.kid.clone(),
                    })?;
                let secret =
                    p256::SecretKey::from_pkcs8_der(&der).map_err(|_| KeyError::BadKey {
                        kid: active.kid.clone(),
                    })?;
                KeySigner::Local(Es256Signer::new(&secret).ok_or_else(|| KeyError::BadKey {
                    kid: active.kid.clone(),
                })?)
            }
            PrivateKey::Kms { key_arn } => KeySigner::Kms {
                kms: kms
                    .ok_or_else(|| KeyError::KmsNotConfigured {
                        kid: active.kid.clone(),
                    })?
                    .clone(),
                key_arn: key_arn.clone(),
            },
        };
        Ok(Self {
            keys,
            active_kid: active.kid.clone(),
            signer,
            server_secret,
        })
    }

    /// A ring with one freshly generated key, for tests.
    pub fn generate(random: &dyn RandomSource, clock: &dyn Clock) -> Self {
        let mut document = KeyRingDocument::default();
        document.rotate(random, clock);
        Self::from_document(&document).expect("a freshly generated key loads")
    }

    /// A 256-bit key for one purpose, derived from the server secret (see
    /// [`ServerSecret::derive_key`]); rotations do not change it.
    pub fn derive_key(&self, purpose: &str) -> [u8; 32] {
        self.server_secret.derive_key(purpose)
    }

    pub(super) fn server_secret(&self) -> Arc<ServerSecret> {
        self.server_secret.clone()
    }

    /// The `kid` of the key that signs new tokens.
    pub fn signing_kid(&self) -> &str {
        &self.active_kid
    }

    /// The compact JWS of `claims` under `encoded_header` (base64url, naming
    /// [`Self::signing_kid`]), signed by the active key: locally, or with one `kms:Sign`.
    pub async fn sign<T: Serialize>(
        &self,
        encoded_header: &str,
        claims: &T,
    ) -> Result<String, SigningError> {
        match &self.signer {
            KeySigner::Local(signer) => Ok(signer.sign(encoded_header, claims)),
            KeySigner::Kms { kms, key_arn } => {
                let mut token = String::with_capacity(512);
                token.push_str(encoded_header);
                token.push('.');
                token.push_str(&super::encode_part(claims));
                let signature = kms
                    .sign(key_arn, token.as_bytes())
                    .await
                    .map_err(|e| match e {
                        KmsError::Unavailable(m) | KmsError::Failed(m) => {
                            SigningError::Unavailable(m)
                        }
                    })?;
                token.push('.');
                URL_SAFE_NO_PAD.encode_string(signature, &mut token);
                Ok(token)
            }
        }
    }

    pub fn verification_key(&self, kid: &str) -> Option<&DecodingKey> {
        self.keys.iter().find(|k| k.kid == kid).map(|k| &k.decoding)
    }

    pub fn kids(&self) -> impl Iterator<Item = (&str, KeyState)> {
        self.keys.iter().map(|k| (k.kid.as_str(), k.state))
    }

    /// The public JWK Set (RFC 7517), newest key first: `next`, `active` and `retired` keys.
    pub fn jwks(&self) -> JwkSet {
        let keys = self
            .keys
            .iter()
            .rev()
            .map(|k| PublicJwk {
                kty: "EC",
                crv: "P-256",
                x: k.x.clone(),
                y: k.y.clone(),
                kid: k.kid.clone(),
                use_: "sig",
                alg: "ES256",
            })
            .collect();
        JwkSet { keys }
    }
}

fn published(
    kid: &str,
    state: KeyState,
    public: &p256::PublicKey,
) -> Result<PublishedKey, KeyError> {
    let (x, y) = public_coordinates(public);
    let decoding = DecodingKey::from_ec_components(&x, &y).map_err(|_| KeyError::BadKey {
        kid: kid.to_owned(),
    })?;
    Ok(PublishedKey {
        kid: kid.to_owned(),
        state,
        decoding,
        x,
        y,
    })
}

/// The public key a stored ring entry publishes, checked against its `kid`.
fn public_key(key: &RingKey) -> Result<p256::PublicKey, KeyError> {
    let bad = || KeyError::BadKey {
        kid: key.kid.clone(),
    };
    let coordinate = |c: &str| URL_SAFE_NO_PAD.decode(c).map_err(|_| bad());
    let point = p256::EncodedPoint::from_affine_coordinates(
        coordinate(&key.x)?.as_slice().into(),
        coordinate(&key.y)?.as_slice().into(),
        false,
    );
    let public = p256::PublicKey::from_sec1_bytes(point.as_bytes()).map_err(|_| bad())?;
    if super::document::thumbprint(&key.x, &key.y) != key.kid {
        return Err(bad());
    }
    Ok(public)
}
