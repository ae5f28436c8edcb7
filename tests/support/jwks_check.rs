//! An independent check of our JWTs for tests: the ES256 signature verified with nothing but a
//! published JWK Set and `p256`, never the code that signed it.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use p256::ecdsa::signature::Verifier;
use p256::ecdsa::{Signature, VerifyingKey};
use p256::EncodedPoint;
use serde_json::Value;

/// A JWT whose signature [`assert_signed_by_jwks`] checked.
#[derive(Debug)]
pub struct SignedJwt {
    pub header: Value,
    pub claims: Value,
    /// The key of the JWK Set that verified it.
    pub jwk: Value,
}

/// A compact JWS signed with ES256 by a key that `jwks` (a JWK Set) publishes; with its signing
/// input changed it no longer verifies. Panics, naming what failed, otherwise.
#[track_caller]
pub fn assert_signed_by_jwks(token: &str, jwks: &Value) -> SignedJwt {
    let decode = |part: &str| URL_SAFE_NO_PAD.decode(part).expect("base64url");
    let parts: Vec<&str> = token.split('.').collect();
    assert_eq!(parts.len(), 3, "a compact JWS: {token}");
    let header: Value = serde_json::from_slice(&decode(parts[0])).unwrap();
    assert_eq!(header["alg"], "ES256");
    let jwk = jwks["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kid"] == header["kid"])
        .expect("the kid is published")
        .clone();
    let coordinate = |name: &str| decode(jwk[name].as_str().unwrap());
    let point = EncodedPoint::from_affine_coordinates(
        coordinate("x").as_slice().into(),
        coordinate("y").as_slice().into(),
        false,
    );
    let key = VerifyingKey::from_encoded_point(&point).unwrap();
    let signature = Signature::from_slice(&decode(parts[2])).unwrap();
    let signing_input = format!("{}.{}", parts[0], parts[1]);
    key.verify(signing_input.as_bytes(), &signature)
        .expect("the signature verifies with the JWK Set");
    let tampered = format!("{signing_input} ");
    assert!(
        key.verify(tampered.as_bytes(), &signature).is_err(),
        "a changed token must not verify"
    );
    SignedJwt {
        header,
        claims: serde_json::from_slice(&decode(parts[1])).unwrap(),
        jwk,
    }
}
