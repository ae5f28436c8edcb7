//! Public-key JOSE: verifying JWS-signed JWTs (RFC 7515, RFC 7519) with keys that others hold,
//! as client assertions (RFC 7523) and DPoP proofs (RFC 9449) are. Only ES256, PS256 and EdDSA:
//! `none`, the HMAC algorithms (a shared secret is not a public key) and RS256 (PKCS#1 v1.5, not
//! recommended by RFC 9700 §2.7 / FAPI 2.0) are refused.
//!
//! Signatures are verified by `jsonwebtoken`; its time and audience checks are turned off, since
//! the caller checks times against the injected clock and knows which audiences it accepts.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::clock::UnixTime;

mod jwk;

pub use jwk::{PublicJwk, PublicJwkSet, MAX_SET_KEYS, MIN_RSA_BITS};

/// A NumericDate claim (`exp`, `iat`, `nbf`): seconds since the epoch, which RFC 7519 §2 allows
/// to be fractional; kept as whole seconds (truncated), as every time here is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(try_from = "serde_json::Number")]
pub struct NumericDate(pub UnixTime);

impl TryFrom<serde_json::Number> for NumericDate {
    type Error = &'static str;

    fn try_from(number: serde_json::Number) -> Result<Self, Self::Error> {
        whole_seconds(&number)
            .map(Self)
            .ok_or("a NumericDate must be a finite number of seconds")
    }
}

/// `number` as whole seconds, a fractional time truncated; `None` when it is not finite or
/// too far out to be a time.
pub fn whole_seconds(number: &serde_json::Number) -> Option<UnixTime> {
    number.as_i64().or_else(|| {
        number
            .as_f64()
            .filter(|f| f.is_finite() && f.abs() < 1e15)
            // Bounded above, so the cast cannot overflow.
            .map(|f| {
                #[allow(clippy::cast_possible_truncation)]
                let seconds = f.trunc() as i64;
                seconds
            })
    })
}

/// The signature algorithms accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Algorithm {
    Es256,
    Ps256,
    EdDsa,
}

/// Every accepted algorithm, as metadata lists them.
pub const ALGORITHMS: [Algorithm; 3] = [Algorithm::Es256, Algorithm::Ps256, Algorithm::EdDsa];

impl Algorithm {
    /// The JWA name (RFC 7518, RFC 8037).
    pub fn name(self) -> &'static str {
        match self {
            Self::Es256 => "ES256",
            Self::Ps256 => "PS256",
            Self::EdDsa => "EdDSA",
        }
    }

    /// Exactly the JWA names (case-sensitive, RFC 7515 §4.1.1).
    pub fn parse(name: &str) -> Result<Self, JoseError> {
        ALGORITHMS
            .into_iter()
            .find(|alg| alg.name() == name)
            .ok_or_else(|| JoseError::UnsupportedAlgorithm(name.to_owned()))
    }

    /// The names, for metadata (`*_signing_alg_values_supported`).
    pub fn names() -> Vec<&'static str> {
        ALGORITHMS.into_iter().map(Self::name).collect()
    }

    fn to_jsonwebtoken(self) -> jsonwebtoken::Algorithm {
        match self {
            Self::Es256 => jsonwebtoken::Algorithm::ES256,
            Self::Ps256 => jsonwebtoken::Algorithm::PS256,
            Self::EdDsa => jsonwebtoken::Algorithm::EdDSA,
        }
    }
}

/// Why a key or a token was refused. The messages name what was wrong, never a key's or a
/// token's content.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JoseError {
    #[error("not a compact JWS: {0}")]
    Malformed(String),
    #[error("algorithm {0} is not accepted (ES256, PS256 or EdDSA only)")]
    UnsupportedAlgorithm(String),
    #[error("the header has a crit member, which no extension here understands")]
    CriticalHeader,
    #[error("the token's algorithm does not fit the key")]
    AlgorithmMismatch,
    #[error("unsupported key: {0}")]
    UnsupportedKey(String),
    #[error("the JWK holds private or symmetric key material ({0}); register public keys only")]
    PrivateKeyMaterial(String),
    #[error("key too weak: {0}")]
    WeakKey(String),
    #[error("invalid key: {0}")]
    InvalidKey(String),
    #[error("key {index} of the set: {error}")]
    InSet { index: usize, error: Box<JoseError> },
    #[error("the signature does not verify")]
    BadSignature,
    #[error("the claims cannot be read: {0}")]
    InvalidClaims(String),
}

impl JoseError {
    fn in_key(self, index: usize) -> Self {
        Self::InSet {
            index,
            error: Box::new(self),
        }
    }

    /// The error itself, for a set's member.
    pub fn root(&self) -> &Self {
        match self {
            Self::InSet { error, .. } => error.root(),
            other => other,
        }
    }
}

/// The protected header members callers look at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JoseHeader {
    pub alg: Algorithm,
    pub typ: Option<String>,
    pub kid: Option<String>,
    /// An embedded public key (RFC 7515 §4.1.3), as DPoP proofs carry; checked as a registered
    /// key is, so a private one is refused.
    pub jwk: Option<PublicJwk>,
}

/// Reads a compact JWS's protected header, without verifying anything else: the caller picks
/// the key by it. An unaccepted `alg` (`none`, HS256, RS256, ...) or any `crit` is refused here.
pub fn decode_header(token: &str) -> Result<JoseHeader, JoseError> {
    let mut parts = token.split('.');
    let (Some(header), Some(_), Some(_), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(JoseError::Malformed(
            "three dot-separated parts expected".into(),
        ));
    };
    let bytes = URL_SAFE_NO_PAD
        .decode(header)
        .map_err(|_| JoseError::Malformed("the header is not base64url".into()))?;
    let Ok(Value::Object(mut members)) = serde_json::from_slice::<Value>(&bytes) else {
        return Err(JoseError::Malformed(
            "the header is not a JSON object".into(),
        ));
    };
    if members.contains_key("crit") {
        return Err(JoseError::CriticalHeader);
    }
    let alg = match members.get("alg") {
        Some(Value::String(alg)) => Algorithm::parse(alg)?,
        _ => return Err(JoseError::Malformed("no alg".into())),
    };
    Ok(JoseHeader {
        alg,
        typ: header_text(&members, "typ")?,
        kid: header_text(&members, "kid")?,
        jwk: members.remove("jwk").map(PublicJwk::parse).transpose()?,
    })
}

fn header_text(members: &Map<String, Value>, name: &str) -> Result<Option<String>, JoseError> {
    match members.get(name) {
        None => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(_) => Err(JoseError::Malformed(format!("{name} is not a string"))),
    }
}

/// The claims of a compact JWS, **not verified**: only for choosing the key that will verify it
/// (the `iss` naming a client). Nothing read here may be trusted before [`verify`] succeeds.
pub fn unverified_claims<C: DeserializeOwned>(token: &str) -> Result<C, JoseError> {
    let payload = token
        .split('.')
        .nth(1)
        .ok_or_else(|| JoseError::Malformed("three dot-separated parts expected".into()))?;
    let bytes = URL_SAFE_NO_PAD
        .decode(payload)
        .map_err(|_| JoseError::Malformed("the payload is not base64url".into()))?;
    serde_json::from_slice(&bytes).map_err(|e| JoseError::InvalidClaims(e.to_string()))
}

/// Verifies a compact JWS with `key` and returns its claims. The header's `alg` must be the
/// key's algorithm; `exp`, `nbf`, `iat`, `aud` and `iss` are the caller's to check (none is
/// required or validated here).
pub fn verify<C: DeserializeOwned>(token: &str, key: &PublicJwk) -> Result<C, JoseError> {
    let header = decode_header(token)?;
    if header.alg != key.algorithm() {
        return Err(JoseError::AlgorithmMismatch);
    }
    let mut validation = jsonwebtoken::Validation::new(header.alg.to_jsonwebtoken());
    validation.required_spec_claims.clear();
    validation.validate_exp = false;
    validation.validate_nbf = false;
    validation.validate_aud = false;
    validation.leeway = 0;
    let decoded = jsonwebtoken::decode::<C>(token, &key.decoding_key()?, &validation);
    decoded.map(|data| data.claims).map_err(|e| {
        use jsonwebtoken::errors::ErrorKind;
        match e.kind() {
            ErrorKind::InvalidSignature
            | ErrorKind::InvalidEcdsaKey
            | ErrorKind::InvalidRsaKey(_) => JoseError::BadSignature,
            ErrorKind::InvalidAlgorithm => JoseError::AlgorithmMismatch,
            ErrorKind::Json(_) => JoseError::InvalidClaims(e.to_string()),
            _ => JoseError::Malformed(e.to_string()),
        }
    })
}

#[cfg(test)]
mod tests;
