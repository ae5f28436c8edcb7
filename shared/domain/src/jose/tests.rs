use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use jsonwebtoken::{EncodingKey, Header};
use ring::rand::SystemRandom;
use ring::signature::{EcdsaKeyPair, Ed25519KeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::*;

/// A key generated for these tests only: RSA key generation is not in `ring`.
const RSA_PEM: &[u8] = include_bytes!("testdata/rsa-2048-test-only.pem");
const RSA_PUBLIC: &str = include_str!("testdata/rsa-2048-test-only.pub.json");

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Claims {
    sub: String,
    exp: i64,
}

fn claims() -> Claims {
    // Long past: verify must not look at times.
    Claims {
        sub: "someone".into(),
        exp: 1,
    }
}

fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

struct TestKey {
    encoding: EncodingKey,
    public: Value,
    alg: jsonwebtoken::Algorithm,
}

fn es256() -> TestKey {
    let rng = SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
    let pair =
        EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng).unwrap();
    let point = pair.public_key().as_ref();
    TestKey {
        encoding: EncodingKey::from_ec_der(pkcs8.as_ref()),
        public: json!({"kty": "EC", "crv": "P-256", "x": b64(&point[1..33]), "y": b64(&point[33..])}),
        alg: jsonwebtoken::Algorithm::ES256,
    }
}

fn eddsa() -> TestKey {
    let pkcs8 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).unwrap();
    let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
    TestKey {
        encoding: EncodingKey::from_ed_der(pkcs8.as_ref()),
        public: json!({"kty": "OKP", "crv": "Ed25519", "x": b64(pair.public_key().as_ref())}),
        alg: jsonwebtoken::Algorithm::EdDSA,
    }
}

fn ps256() -> TestKey {
    TestKey {
        encoding: EncodingKey::from_rsa_pem(RSA_PEM).unwrap(),
        public: serde_json::from_str(RSA_PUBLIC).unwrap(),
        alg: jsonwebtoken::Algorithm::PS256,
    }
}

fn sign(key: &TestKey, header: Header) -> String {
    jsonwebtoken::encode(&header, &claims(), &key.encoding).unwrap()
}

fn signed(key: &TestKey) -> String {
    sign(key, Header::new(key.alg))
}

/// A token with any header and an empty signature, as an attacker may send.
fn forged(header: &Value) -> String {
    let claims = serde_json::to_vec(&claims()).unwrap();
    format!(
        "{}.{}.",
        b64(&serde_json::to_vec(header).unwrap()),
        b64(&claims)
    )
}

#[test]
fn each_algorithm_verifies_with_its_key_and_ignores_times() {
    for key in [es256(), ps256(), eddsa()] {
        let jwk = PublicJwk::parse(key.public.clone()).unwrap();
        let token = signed(&key);
        assert_eq!(verify::<Claims>(&token, &jwk).unwrap(), claims());
        assert_eq!(decode_header(&token).unwrap().alg, jwk.algorithm());
    }
}

#[test]
fn another_key_of_the_same_type_is_a_bad_signature() {
    for (signer, other) in [(es256(), es256()), (eddsa(), eddsa())] {
        let jwk = PublicJwk::parse(other.public).unwrap();
        assert_eq!(
            verify::<Claims>(&signed(&signer), &jwk).unwrap_err(),
            JoseError::BadSignature
        );
    }
}

#[test]
fn a_tampered_payload_is_a_bad_signature() {
    let key = es256();
    let jwk = PublicJwk::parse(key.public.clone()).unwrap();
    let token = signed(&key);
    let mut parts: Vec<&str> = token.split('.').collect();
    let payload = b64(br#"{"sub":"someone-else","exp":1}"#);
    parts[1] = &payload;
    assert_eq!(
        verify::<Claims>(&parts.join("."), &jwk).unwrap_err(),
        JoseError::BadSignature
    );
}

#[test]
fn an_algorithm_other_than_the_keys_is_refused() {
    let ec = PublicJwk::parse(es256().public).unwrap();
    assert_eq!(
        verify::<Claims>(&signed(&eddsa()), &ec).unwrap_err(),
        JoseError::AlgorithmMismatch
    );
}

#[test]
fn none_hmac_and_rs256_are_refused() {
    let ec = PublicJwk::parse(es256().public).unwrap();
    for alg in [
        "none", "HS256", "HS512", "RS256", "ES384", "es256", "ES256K",
    ] {
        let token = forged(&json!({"alg": alg, "typ": "JWT"}));
        assert_eq!(
            decode_header(&token).unwrap_err(),
            JoseError::UnsupportedAlgorithm(alg.into())
        );
        assert_eq!(
            verify::<Claims>(&token, &ec).unwrap_err(),
            JoseError::UnsupportedAlgorithm(alg.into())
        );
    }
    let hs256 = jsonwebtoken::encode(
        &Header::new(jsonwebtoken::Algorithm::HS256),
        &claims(),
        &EncodingKey::from_secret(b"a shared string"),
    )
    .unwrap();
    assert!(matches!(
        verify::<Claims>(&hs256, &ec),
        Err(JoseError::UnsupportedAlgorithm(_))
    ));
}

#[test]
fn headers_are_read_with_kid_typ_and_an_embedded_public_key() {
    let key = eddsa();
    let mut header = Header::new(key.alg);
    header.typ = Some("dpop+jwt".into());
    header.kid = Some("k1".into());
    let token = sign(&key, header);
    let decoded = decode_header(&token).unwrap();
    assert_eq!(decoded.typ.as_deref(), Some("dpop+jwt"));
    assert_eq!(decoded.kid.as_deref(), Some("k1"));
    assert_eq!(decoded.jwk, None);

    let public = es256().public;
    let embedded = forged(&json!({"alg": "ES256", "jwk": public}));
    assert_eq!(
        decode_header(&embedded).unwrap().jwk,
        Some(PublicJwk::parse(public).unwrap())
    );
    let mut private = es256().public;
    private["d"] = json!(b64(&[1; 32]));
    assert_eq!(
        decode_header(&forged(&json!({"alg": "ES256", "jwk": private}))).unwrap_err(),
        JoseError::PrivateKeyMaterial("d".into())
    );
}

#[test]
fn malformed_tokens_and_crit_are_refused() {
    for token in ["", "a.b", "a.b.c.d", "!!.e30.", "e30.e30."] {
        assert!(
            matches!(decode_header(token), Err(JoseError::Malformed(_))),
            "{token}"
        );
    }
    assert_eq!(
        decode_header(&forged(&json!({"alg": "ES256", "crit": ["exp"]}))).unwrap_err(),
        JoseError::CriticalHeader
    );
}

/// RFC 7638 §3.1's example key and its published thumbprint.
#[test]
fn thumbprint_matches_rfc_7638_example() {
    let key = PublicJwk::parse(json!({
        "kty": "RSA",
        "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
        "e": "AQAB",
        "alg": "RS256",
        "kid": "2011-04-29"
    }));
    // The example declares RS256, which is refused here; without `alg` it is a PS256 key.
    assert_eq!(
        key.unwrap_err(),
        JoseError::UnsupportedAlgorithm("RS256".into())
    );
    let key = PublicJwk::parse(json!({
        "kty": "RSA",
        "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
        "e": "AQAB",
        "kid": "2011-04-29"
    }))
    .unwrap();
    assert_eq!(
        key.thumbprint(),
        "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
    );
}

/// RFC 8037 Appendix A.3's Ed25519 key and thumbprint.
#[test]
fn okp_thumbprint_matches_rfc_8037_example() {
    let key = PublicJwk::parse(json!({
        "kty": "OKP",
        "crv": "Ed25519",
        "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"
    }))
    .unwrap();
    assert_eq!(
        key.thumbprint(),
        "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"
    );
}

#[test]
fn thumbprint_ignores_optional_members() {
    let public = es256().public;
    let mut decorated = public.clone();
    decorated["kid"] = json!("k");
    decorated["use"] = json!("sig");
    decorated["alg"] = json!("ES256");
    assert_eq!(
        PublicJwk::parse(public).unwrap().thumbprint(),
        PublicJwk::parse(decorated).unwrap().thumbprint()
    );
}

#[test]
fn private_and_symmetric_keys_are_refused() {
    for member in ["d", "p", "q", "dp", "dq", "qi", "k"] {
        let mut key = es256().public;
        key[member] = json!("AQAB");
        assert_eq!(
            PublicJwk::parse(key).unwrap_err(),
            JoseError::PrivateKeyMaterial(member.into())
        );
    }
    assert!(matches!(
        PublicJwk::parse(json!({"kty": "oct", "alg": "HS256"})),
        Err(JoseError::PrivateKeyMaterial(_))
    ));
}

#[test]
fn unsupported_and_malformed_keys_are_refused() {
    let p384 = json!({"kty": "EC", "crv": "P-384", "x": b64(&[1; 48]), "y": b64(&[1; 48])});
    let x25519 = json!({"kty": "OKP", "crv": "X25519", "x": b64(&[1; 32])});
    for key in [p384, x25519, json!({"kty": "XYZ"})] {
        assert!(
            matches!(
                PublicJwk::parse(key.clone()),
                Err(JoseError::UnsupportedKey(_))
            ),
            "{key}"
        );
    }
    let short = json!({"kty": "EC", "crv": "P-256", "x": b64(&[1; 31]), "y": b64(&[1; 32])});
    let padded = json!({"kty": "OKP", "crv": "Ed25519", "x": format!("{}=", b64(&[1; 32]))});
    let wrong_alg = {
        let mut key = es256().public;
        key["alg"] = json!("EdDSA");
        key
    };
    let enc = {
        let mut key = es256().public;
        key["use"] = json!("enc");
        key
    };
    for key in [
        short,
        padded,
        wrong_alg,
        enc,
        json!({"crv": "P-256"}),
        json!([1]),
    ] {
        assert!(
            matches!(PublicJwk::parse(key.clone()), Err(JoseError::InvalidKey(_))),
            "{key}"
        );
    }
}

#[test]
fn rsa_keys_below_2048_bits_are_refused() {
    let mut modulus = vec![0xff; 256];
    modulus[0] = 0x7f; // 2047 bits
    let key = json!({"kty": "RSA", "n": b64(&modulus), "e": "AQAB"});
    assert!(matches!(PublicJwk::parse(key), Err(JoseError::WeakKey(_))));
    modulus[0] = 0x80;
    let key = json!({"kty": "RSA", "n": b64(&modulus), "e": "AQAB"});
    assert_eq!(PublicJwk::parse(key).unwrap().algorithm(), Algorithm::Ps256);
}

#[test]
fn sets_hold_public_keys_only_and_pick_candidates_by_kid() {
    let mut a = es256().public;
    a["kid"] = json!("a");
    let mut b = eddsa().public;
    b["kid"] = json!("b");
    let set = PublicJwkSet::parse(json!({"keys": [a, b, ps256().public]})).unwrap();
    assert_eq!(set.keys().len(), 3);
    let kids = |kid| {
        set.candidates(kid)
            .map(|k: &PublicJwk| k.algorithm())
            .collect::<Vec<_>>()
    };
    assert_eq!(kids(Some("b")), [Algorithm::EdDsa]);
    assert_eq!(kids(Some("zzz")), []);
    assert_eq!(kids(None).len(), 3);

    let round_trip: PublicJwkSet =
        serde_json::from_str(&serde_json::to_string(&set).unwrap()).unwrap();
    assert_eq!(round_trip, set);

    let mut private = eddsa().public;
    private["d"] = json!(b64(&[2; 32]));
    let refused = PublicJwkSet::parse(json!({"keys": [es256().public, private]})).unwrap_err();
    assert_eq!(refused.root(), &JoseError::PrivateKeyMaterial("d".into()));
    assert!(refused.to_string().starts_with("key 1 of the set"));
    for set in [
        json!({"keys": []}),
        json!({}),
        json!([]),
        json!({"keys": {}}),
    ] {
        assert!(PublicJwkSet::parse(set).is_err());
    }
    let many: Vec<Value> = (0..=MAX_SET_KEYS).map(|_| eddsa().public).collect();
    assert!(PublicJwkSet::parse(json!({ "keys": many })).is_err());
    assert!(
        serde_json::from_value::<PublicJwkSet>(json!({"keys": [{"kty": "oct", "k": "AA"}]}))
            .is_err()
    );
}

#[test]
fn algorithm_names_are_exact() {
    assert_eq!(Algorithm::names(), ["ES256", "PS256", "EdDSA"]);
    for alg in ALGORITHMS {
        assert_eq!(Algorithm::parse(alg.name()), Ok(alg));
    }
}

#[test]
fn unverified_claims_read_the_payload_of_any_token() {
    let forged = forged(&json!({"alg": "none"}));
    assert_eq!(unverified_claims::<Claims>(&forged).unwrap(), claims());
    assert!(matches!(
        unverified_claims::<Claims>("a.!!.c"),
        Err(JoseError::Malformed(_))
    ));
    assert!(matches!(
        unverified_claims::<Claims>(&format!("a.{}.c", b64(b"{}"))),
        Err(JoseError::InvalidClaims(_))
    ));
}

#[test]
fn a_registered_set_keeps_its_signing_keys_and_leaves_encryption_keys_out() {
    let mut signing = es256().public;
    signing["kid"] = json!("sig");
    signing["use"] = json!("sig");
    let encryption = json!({
        "kty": "RSA", "use": "enc", "alg": "RSA-OAEP-256", "kid": "enc",
        "n": b64(&[0xc5; 256]), "e": "AQAB",
    });
    let set =
        PublicJwkSet::parse_signing_keys(json!({"keys": [encryption.clone(), signing]})).unwrap();
    assert_eq!(set.keys().len(), 1);
    assert_eq!(set.keys()[0].kid(), Some("sig"));
    assert!(
        PublicJwkSet::parse(json!({"keys": [encryption.clone(), es256().public]})).is_err(),
        "the plain parse still refuses the set whole"
    );
    assert!(PublicJwkSet::parse_signing_keys(json!({"keys": [encryption]})).is_err());
}
