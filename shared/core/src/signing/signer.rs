//! ES256 compact JWS signing with a key pair parsed once, at load.
//!
//! `jsonwebtoken::encode` re-parses the PKCS#8 document on every call, and ring's parser
//! recomputes the public key from the private scalar to check it: a second P-256 scalar
//! multiplication, as expensive as the signature itself. Signing here with a ring key pair
//! built once halves the cost of minting a token. The output is byte for byte what
//! `jsonwebtoken::encode` produces for the same header and claims (base64url of their
//! `serde_json` serialisation, then of the 64-byte `r || s` signature), so tokens are unchanged;
//! `jsonwebtoken` still verifies them.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use p256::elliptic_curve::sec1::ToEncodedPoint;
use ring::rand::SystemRandom;
use ring::signature::{EcdsaKeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use serde::Serialize;

/// A P-256 private key ready to sign ES256 JWTs.
pub struct Es256Signer {
    key_pair: EcdsaKeyPair,
    random: SystemRandom,
}

impl std::fmt::Debug for Es256Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Es256Signer").finish_non_exhaustive()
    }
}

impl Es256Signer {
    /// `None` when ring refuses the key (it checks that the scalar and the point agree).
    pub fn new(secret: &p256::SecretKey) -> Option<Self> {
        let random = SystemRandom::new();
        let public = secret.public_key().to_encoded_point(false);
        let key_pair = EcdsaKeyPair::from_private_key_and_public_key(
            &ECDSA_P256_SHA256_FIXED_SIGNING,
            &secret.to_bytes(),
            public.as_bytes(),
            &random,
        )
        .ok()?;
        Some(Self { key_pair, random })
    }

    /// The compact JWS `header.claims.signature`, where `encoded_header` is the header already
    /// in base64url (see [`encode_part`]): a key's headers never change, so callers encode them
    /// once.
    pub fn sign<T: Serialize>(&self, encoded_header: &str, claims: &T) -> String {
        let mut token = String::with_capacity(512);
        token.push_str(encoded_header);
        token.push('.');
        URL_SAFE_NO_PAD.encode_string(to_json(claims), &mut token);
        let signature = self
            .key_pair
            .sign(&self.random, token.as_bytes())
            .expect("ES256 signing fails only when the system random source does");
        token.push('.');
        URL_SAFE_NO_PAD.encode_string(signature.as_ref(), &mut token);
        token
    }
}

/// base64url of `value`'s JSON, one part of a compact JWS.
pub fn encode_part<T: Serialize>(value: &T) -> String {
    URL_SAFE_NO_PAD.encode(to_json(value))
}

fn to_json<T: Serialize>(value: &T) -> Vec<u8> {
    // Headers and claims are plain structs of strings and numbers: serialising cannot fail.
    serde_json::to_vec(value).expect("JWT headers and claims serialise")
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
    use p256::pkcs8::{EncodePrivateKey, LineEnding};

    #[derive(Debug, Serialize, serde::Deserialize, PartialEq)]
    struct Claims {
        sub: String,
        exp: i64,
    }

    #[test]
    fn signs_what_jsonwebtoken_signs_and_verifies() {
        let secret = p256::SecretKey::random(&mut rand::rngs::OsRng);
        let signer = Es256Signer::new(&secret).unwrap();
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some("at+jwt".into());
        header.kid = Some("kid-1".into());
        let claims = Claims {
            sub: "someone".into(),
            exp: 4_000_000_000,
        };

        let ours = signer.sign(&encode_part(&header), &claims);
        let pem = secret.to_pkcs8_pem(LineEnding::LF).unwrap();
        let theirs = jsonwebtoken::encode(
            &header,
            &claims,
            &EncodingKey::from_ec_pem(pem.as_bytes()).unwrap(),
        )
        .unwrap();
        // ECDSA signatures are randomised: header and claims must match byte for byte.
        let signed_part = |token: &str| token.rsplit_once('.').unwrap().0.to_owned();
        assert_eq!(signed_part(&ours), signed_part(&theirs));

        let point = secret.public_key().to_encoded_point(false);
        let key = DecodingKey::from_ec_components(
            &URL_SAFE_NO_PAD.encode(point.x().unwrap()),
            &URL_SAFE_NO_PAD.encode(point.y().unwrap()),
        )
        .unwrap();
        let decoded =
            jsonwebtoken::decode::<Claims>(&ours, &key, &Validation::new(Algorithm::ES256))
                .expect("jsonwebtoken verifies our signature");
        assert_eq!(decoded.claims, claims);
    }
}
