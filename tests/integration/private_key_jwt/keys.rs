//! Key pairs and signed assertions, made with `jsonwebtoken` and `ring` directly (not with the
//! service's own JOSE code), as a client would.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use ring::rand::SystemRandom;
use ring::signature::{EcdsaKeyPair, Ed25519KeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use serde_json::{json, Value};

/// An RSA key made for these tests only (`ring` generates no RSA keys).
const RSA_PEM: &[u8] = include_bytes!("../../fixtures/jose/rsa-2048-test-only.pem");
const RSA_PUBLIC: &str = include_str!("../../fixtures/jose/rsa-2048-test-only.pub.json");

fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// A client's key pair: what it signs with, and the public JWK it registers.
pub struct ClientKey {
    encoding: EncodingKey,
    alg: Algorithm,
    pub kid: String,
    pub public: Value,
}

impl ClientKey {
    pub fn es256(kid: &str) -> Self {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .unwrap();
        let point = pair.public_key().as_ref();
        let public = json!({
            "kty": "EC", "crv": "P-256", "kid": kid, "use": "sig",
            "x": b64(&point[1..33]), "y": b64(&point[33..]),
        });
        Self::new(
            EncodingKey::from_ec_der(pkcs8.as_ref()),
            Algorithm::ES256,
            kid,
            public,
        )
    }

    pub fn eddsa(kid: &str) -> Self {
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).unwrap();
        let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
        let public = json!({
            "kty": "OKP", "crv": "Ed25519", "kid": kid, "x": b64(pair.public_key().as_ref()),
        });
        Self::new(
            EncodingKey::from_ed_der(pkcs8.as_ref()),
            Algorithm::EdDSA,
            kid,
            public,
        )
    }

    pub fn ps256(kid: &str) -> Self {
        let mut public: Value = serde_json::from_str(RSA_PUBLIC).unwrap();
        public["kid"] = json!(kid);
        public["alg"] = json!("PS256");
        let encoding = EncodingKey::from_rsa_pem(RSA_PEM).unwrap();
        Self::new(encoding, Algorithm::PS256, kid, public)
    }

    fn new(encoding: EncodingKey, alg: Algorithm, kid: &str, public: Value) -> Self {
        Self {
            encoding,
            alg,
            kid: kid.to_owned(),
            public,
        }
    }

    /// `claims` signed with this key, its `kid` in the header.
    pub fn sign(&self, claims: &Value) -> String {
        let mut header = Header::new(self.alg);
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, claims, &self.encoding).unwrap()
    }

    /// `claims` signed with `typ` in the header.
    pub fn sign_typed(&self, claims: &Value, typ: &str) -> String {
        let mut header = Header::new(self.alg);
        header.kid = Some(self.kid.clone());
        header.typ = Some(typ.to_owned());
        jsonwebtoken::encode(&header, claims, &self.encoding).unwrap()
    }

    /// The same without `kid`: the server tries each registered key.
    pub fn sign_without_kid(&self, claims: &Value) -> String {
        jsonwebtoken::encode(&Header::new(self.alg), claims, &self.encoding).unwrap()
    }

    /// `claims` as a DPoP proof (RFC 9449 §4.2) by this key: `typ` `dpop+jwt`, the public key in
    /// `jwk`.
    pub fn sign_dpop(&self, claims: &Value) -> String {
        let mut header = Header::new(self.alg);
        header.typ = Some("dpop+jwt".to_owned());
        let mut jwk = self.public.clone();
        for member in ["kid", "use", "alg"] {
            jwk.as_object_mut().unwrap().remove(member);
        }
        header.jwk = Some(serde_json::from_value(jwk).unwrap());
        jsonwebtoken::encode(&header, claims, &self.encoding).unwrap()
    }

    /// RFC 7638: the SHA-256 of the required members in lexicographic order, computed here
    /// independently of the server.
    pub fn thumbprint(&self) -> String {
        let key = &self.public;
        let canonical = match key["kty"].as_str().unwrap() {
            "RSA" => format!(r#"{{"e":{},"kty":"RSA","n":{}}}"#, key["e"], key["n"]),
            "OKP" => format!(r#"{{"crv":{},"kty":"OKP","x":{}}}"#, key["crv"], key["x"]),
            _ => format!(
                r#"{{"crv":{},"kty":"EC","x":{},"y":{}}}"#,
                key["crv"], key["x"], key["y"]
            ),
        };
        b64(ring::digest::digest(&ring::digest::SHA256, canonical.as_bytes()).as_ref())
    }

    /// The private JWK members too, as a careless operator might register them.
    pub fn with_private_member(&self) -> Value {
        let mut key = self.public.clone();
        key["d"] = json!(b64(&[7; 32]));
        key
    }
}

/// A JWK Set of these public keys.
pub fn jwk_set(keys: &[&ClientKey]) -> Value {
    json!({ "keys": keys.iter().map(|key| key.public.clone()).collect::<Vec<_>>() })
}

/// A token with this header and claims and an empty signature (`alg: none` and the like).
pub fn unsigned(header: &Value, claims: &Value) -> String {
    format!(
        "{}.{}.",
        b64(&serde_json::to_vec(header).unwrap()),
        b64(&serde_json::to_vec(claims).unwrap())
    )
}

/// HS256 with a shared string, as a `client_secret_jwt` client would sign.
pub fn hs256(claims: &Value, secret: &str, kid: &str) -> String {
    let mut header = Header::new(Algorithm::HS256);
    header.kid = Some(kid.to_owned());
    jsonwebtoken::encode(
        &header,
        claims,
        &EncodingKey::from_secret(secret.as_bytes()),
    )
    .unwrap()
}
