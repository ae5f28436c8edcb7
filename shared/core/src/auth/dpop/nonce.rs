//! Server nonces (RFC 9449 §8, `DPOP_NONCE=on`), kept stateless so that every instance of a
//! deployment issues and accepts the same ones without a store: a nonce is the base64url
//! HMAC-SHA256 of a time bucket under a key derived from the signing key ring. A nonce is
//! accepted during its own bucket and the next, so a client that fetched one just before the
//! bucket changed is not refused.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

use crate::clock::UnixTime;
use crate::services::Services;
use crate::signing::SigningError;

/// How long one nonce is issued for; it is accepted for up to twice as long.
pub const NONCE_BUCKET_SECONDS: i64 = 300;

/// The purpose the nonce key is derived for, and the MAC's domain separator.
const NONCE_PURPOSE: &str = "dpop-nonce-v1";

/// The key nonces are made with, derived from the key ring's server secret.
pub struct NonceKey([u8; 32]);

/// Fails (503) only while the key ring has never been read and cannot be now.
pub async fn nonce_key(services: &Services) -> Result<NonceKey, SigningError> {
    Ok(NonceKey(
        services.codec.keys().derive_key(NONCE_PURPOSE).await?,
    ))
}

fn nonce_of_bucket(key: &NonceKey, bucket: i64) -> String {
    // HMAC accepts keys of any length, so this cannot fail.
    let mut mac = Hmac::<Sha256>::new_from_slice(&key.0).expect("HMAC takes any key length");
    mac.update(NONCE_PURPOSE.as_bytes());
    mac.update(&bucket.to_be_bytes());
    URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
}

/// The nonce to hand out now (the `DPoP-Nonce` header).
pub fn current_nonce(key: &NonceKey, now: UnixTime) -> String {
    nonce_of_bucket(key, now.div_euclid(NONCE_BUCKET_SECONDS))
}

/// Issued in the current bucket or the previous one.
pub fn nonce_is_valid(key: &NonceKey, nonce: &str, now: UnixTime) -> bool {
    let bucket = now.div_euclid(NONCE_BUCKET_SECONDS);
    [bucket, bucket - 1]
        .into_iter()
        .any(|b| bool::from(nonce.as_bytes().ct_eq(nonce_of_bucket(key, b).as_bytes())))
}
