//! DPoP (RFC 9449) proofs built with p256 alone, not with the JOSE code the server verifies
//! with: for the DPoP suite, the round-trip budget and the benchmark.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use token_domain::clock::Clock;
use uuid::Uuid;

use crate::support::app::TestApp;

pub const TOKEN_PATH: &str = "/oauth2/v0/token";

/// A client's DPoP key pair (P-256).
pub struct DpopKey {
    key: SigningKey,
}

/// What a proof claims; [`Proof::for_request`] fills in a valid one.
#[derive(Clone)]
pub struct Proof {
    pub header: Value,
    pub claims: Value,
}

impl DpopKey {
    pub fn generate() -> Self {
        let seed = Sha256::digest(Uuid::new_v4().as_bytes());
        Self {
            key: SigningKey::from_slice(&seed).expect("a 32-byte scalar"),
        }
    }

    /// The public JWK.
    pub fn jwk(&self) -> Value {
        let point = self.key.verifying_key().to_encoded_point(false);
        json!({
            "kty": "EC",
            "crv": "P-256",
            "x": URL_SAFE_NO_PAD.encode(point.x().unwrap()),
            "y": URL_SAFE_NO_PAD.encode(point.y().unwrap()),
        })
    }

    /// The JWK with its private scalar `d`, which a proof must never carry.
    pub fn private_jwk(&self) -> Value {
        let mut jwk = self.jwk();
        jwk["d"] = URL_SAFE_NO_PAD.encode(self.key.to_bytes()).into();
        jwk
    }

    /// RFC 7638, computed here independently of the server.
    pub fn thumbprint(&self) -> String {
        let jwk = self.jwk();
        let canonical = format!(
            r#"{{"crv":"P-256","kty":"EC","x":"{}","y":"{}"}}"#,
            jwk["x"].as_str().unwrap(),
            jwk["y"].as_str().unwrap()
        );
        URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()))
    }

    /// A valid proof for `method` at `app`'s `path`, issued now by the app's clock.
    pub fn proof(&self, app: &TestApp, method: &str, path: &str) -> Proof {
        Proof {
            header: json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": self.jwk()}),
            claims: json!({
                "jti": Uuid::new_v4().to_string(),
                "htm": method,
                "htu": app.url(path),
                "iat": app.clock.now(),
            }),
        }
    }

    /// A valid token-endpoint proof, signed.
    pub fn token_proof(&self, app: &TestApp) -> String {
        self.sign(&self.proof(app, "POST", TOKEN_PATH))
    }

    /// Signs `proof` (ES256: the 64-byte r ‖ s signature of RFC 7518 §3.4).
    pub fn sign(&self, proof: &Proof) -> String {
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(proof.header.to_string()),
            URL_SAFE_NO_PAD.encode(proof.claims.to_string())
        );
        let signature: Signature = self.key.sign(input.as_bytes());
        format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature.to_bytes()))
    }
}

/// RFC 9449 §4.2 `ath`.
pub fn ath(access_token: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(access_token.as_bytes()))
}
