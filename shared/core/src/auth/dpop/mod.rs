//! DPoP (RFC 9449): proofs of possession of a client's key, checked at the token endpoint and
//! at the endpoints that accept access tokens, independent of HTTP.
//!
//! A proof is a JWT the client signs with the private key whose public half it embeds (`jwk`).
//! [`verify_proof`] checks it against the request with the injected clock, in RFC 9449 §4.3's
//! order, without writing anything; [`check_request`] then marks its `jti` used (one
//! conditional write), so that a proof is accepted once. Why each choice: docs/decisions.md,
//! DPoP.

mod htu;
mod nonce;
mod proof;
mod resource;

pub use htu::same_url;
pub use nonce::{current_nonce, nonce_is_valid, nonce_key, NonceKey, NONCE_BUCKET_SECONDS};
pub use proof::{access_token_hash, verify_proof, ProofDenial, VerifiedProof};
pub use resource::{authenticate_credential, credential, AccessDenial, Credential};

use crate::errors::Refusal;
use crate::services::Services;
use crate::store::ReplayKey;

/// `iat` may be this many seconds before or after the server's clock.
pub const IAT_WINDOW_SECONDS: i64 = 60;

/// The `kind` under which proofs' `jti`s are remembered, scoped by the key's thumbprint.
const REPLAY_KIND: &str = "dpop";

/// What a request carries for DPoP, as HTTP saw it.
#[derive(Debug, Clone, Default)]
pub struct DpopRequest {
    /// Every `DPoP` header field value (RFC 9449 §4.3: exactly one is allowed).
    pub proofs: Vec<String>,
    /// The request's method (`htm`).
    pub method: String,
    /// The request's path as routed (`htu` is this deployment's geolocation followed by it).
    pub path: String,
}

impl DpopRequest {
    pub fn is_present(&self) -> bool {
        !self.proofs.is_empty()
    }
}

/// The proof's checks ([`verify_proof`]), then its single use: `Ok(None)` when the request
/// carries no proof. `access_token` is the token presented with it, whose hash `ath` must be.
pub async fn check_request(
    services: &Services,
    request: &DpopRequest,
    access_token: Option<&str>,
) -> Result<Option<VerifiedProof>, Refusal<ProofDenial>> {
    let now = services.ctx.clock.now();
    let nonce_key = if services.policy.dpop_nonce && request.is_present() {
        Some(nonce_key(services).await?)
    } else {
        None
    };
    let Some(proof) = verify_proof(services, request, access_token, now, nonce_key.as_ref())?
    else {
        return Ok(None);
    };
    // Checked last, after the signature: only the key's holder can spend its own `jti`s.
    let key = ReplayKey::new(REPLAY_KIND, &proof.jkt, &proof.jti);
    let expires_at = proof.iat.max(now) + IAT_WINDOW_SECONDS + 1;
    if !services
        .ctx
        .store
        .replays()
        .first_use(&key, expires_at, now)
        .await?
    {
        return Err(ProofDenial::Replayed.into());
    }
    Ok(Some(proof))
}

/// An RFC 7638 SHA-256 thumbprint as `dpop_jkt` carries it: 43 base64url characters.
pub fn is_well_formed_thumbprint(text: &str) -> bool {
    text.len() == 43
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}
