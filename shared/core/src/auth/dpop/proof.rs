//! The checks of one DPoP proof (RFC 9449 §4.3), none of which writes anything.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::{htu::same_url, nonce::nonce_is_valid, DpopRequest, NonceKey, IAT_WINDOW_SECONDS};
use crate::clock::UnixTime;
use crate::errors::{Denial, ErrorCode, GrantDenial};
use crate::jose::{self, JoseError};
use crate::services::Services;

/// The `typ` a proof's header must carry (RFC 9449 §4.2).
pub const PROOF_TYP: &str = "dpop+jwt";

/// Longest `jti` accepted: RFC 9449 asks for 96 random bits; this bounds what is hashed.
const MAX_JTI_LENGTH: usize = 256;

/// Why a proof was refused. Each reason answers `invalid_dpop_proof`, except
/// [`ProofDenial::NonceRequired`] (`use_dpop_nonce`); the variants exist for the log, and name
/// nothing of the proof's content.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProofDenial {
    /// A proof was required (the client's registration, a bound code or refresh token, the
    /// `DPoP` authorization scheme) and none was sent.
    #[error("no DPoP proof")]
    Missing,
    #[error("more than one DPoP header")]
    Multiple,
    /// Not a JWS, an algorithm other than ES256/PS256/EdDSA, a bad or private `jwk`, a bad
    /// signature, unreadable claims.
    #[error("{0}")]
    Jose(JoseError),
    #[error("typ is not dpop+jwt")]
    WrongType,
    #[error("no jwk in the header")]
    NoKey,
    #[error("a required claim (jti, htm, htu, iat) is missing or malformed")]
    MissingClaim,
    #[error("htm is not the request's method")]
    WrongMethod,
    #[error("htu is not the request's URL")]
    WrongUrl,
    #[error("iat is more than 60 seconds away from the server's time")]
    StaleOrFuture,
    /// `ath` is missing or is not the hash of the access token presented with the proof.
    #[error("ath does not match the access token")]
    WrongAccessTokenHash,
    #[error("the proof's jti was used before")]
    Replayed,
    /// `DPOP_NONCE=on` and the proof has no nonce, or a stale or foreign one.
    #[error("the server's DPoP nonce is missing or stale")]
    NonceRequired,
    /// The proof is by another key than the one the code, refresh token or access token is
    /// bound to.
    #[error("the proof is by another key than the one the credential is bound to")]
    WrongKey,
}

impl Denial for ProofDenial {}

/// A proof that passed every check but its single use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedProof {
    /// RFC 7638 thumbprint of the proof's key.
    pub jkt: String,
    pub jti: String,
    pub iat: UnixTime,
}

#[derive(Deserialize)]
struct Claims {
    jti: Option<String>,
    htm: Option<String>,
    htu: Option<String>,
    iat: Option<serde_json::Number>,
    ath: Option<String>,
    nonce: Option<String>,
}

/// base64url(SHA-256(token)): the `ath` of a proof presented with `token` (RFC 9449 §4.2).
pub fn access_token_hash(token: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes()))
}

/// The request's proof checked against the request at `now`: `Ok(None)` when it carries none.
pub fn verify_proof(
    services: &Services,
    request: &DpopRequest,
    access_token: Option<&str>,
    now: UnixTime,
    nonce_key: Option<&NonceKey>,
) -> Result<Option<VerifiedProof>, ProofDenial> {
    let proof = match request.proofs.as_slice() {
        [] => return Ok(None),
        [proof] => proof.trim(),
        _ => return Err(ProofDenial::Multiple),
    };
    let header = jose::decode_header(proof).map_err(ProofDenial::Jose)?;
    if header.typ.as_deref() != Some(PROOF_TYP) {
        return Err(ProofDenial::WrongType);
    }
    let key = header.jwk.ok_or(ProofDenial::NoKey)?;
    let claims: Claims = jose::verify(proof, &key).map_err(ProofDenial::Jose)?;
    let (Some(jti), Some(htm), Some(htu), Some(iat)) = (
        claims.jti,
        claims.htm,
        claims.htu,
        claims.iat.as_ref().and_then(jose::whole_seconds),
    ) else {
        return Err(ProofDenial::MissingClaim);
    };
    if jti.is_empty() || jti.len() > MAX_JTI_LENGTH {
        return Err(ProofDenial::MissingClaim);
    }
    if htm != request.method {
        return Err(ProofDenial::WrongMethod);
    }
    let expected = format!("{}{}", services.geolocation().as_str(), request.path);
    if !same_url(&htu, &expected) {
        return Err(ProofDenial::WrongUrl);
    }
    if (iat - now).abs() > IAT_WINDOW_SECONDS {
        return Err(ProofDenial::StaleOrFuture);
    }
    if let Some(token) = access_token {
        let expected = access_token_hash(token);
        let matches = claims
            .ath
            .is_some_and(|ath| bool::from(ath.as_bytes().ct_eq(expected.as_bytes())));
        if !matches {
            return Err(ProofDenial::WrongAccessTokenHash);
        }
    }
    // `Some` exactly when the deployment requires nonces.
    if let Some(key) = nonce_key {
        if !claims
            .nonce
            .is_some_and(|nonce| nonce_is_valid(key, &nonce, now))
        {
            return Err(ProofDenial::NonceRequired);
        }
    }
    Ok(Some(VerifiedProof {
        jkt: key.thumbprint(),
        jti,
        iat,
    }))
}

/// RFC 9449 §5 and §8: `use_dpop_nonce` for a missing or stale server nonce, otherwise
/// `invalid_dpop_proof`.
impl From<ProofDenial> for GrantDenial {
    fn from(denial: ProofDenial) -> Self {
        GrantDenial::new(match denial {
            ProofDenial::NonceRequired => ErrorCode::UseDpopNonce,
            _ => ErrorCode::InvalidDpopProof,
        })
    }
}
