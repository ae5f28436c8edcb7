//! Public JSON Web Keys (RFC 7517) of the three key types the service verifies with, their
//! RFC 7638 thumbprints, and JWK Sets.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use jsonwebtoken::DecodingKey;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::{Algorithm, JoseError};

/// Members that only a private or symmetric key has (RFC 7518 §6.2.2, §6.3.2, §6.4; RFC 8037
/// §2): a JWK holding any of them is refused, whatever else it holds.
const PRIVATE_MEMBERS: &[&str] = &["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

/// RSA moduli below this are refused (RFC 7518 §3.3 requires 2048 bits for the RSA signatures).
pub const MIN_RSA_BITS: usize = 2048;

/// More keys than this in one set is a mistake, not a rotation.
pub const MAX_SET_KEYS: usize = 10;

/// The public key material, base64url members exactly as presented (each checked on parse).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Material {
    /// EC P-256: `x` and `y`, 32 bytes each.
    P256 { x: String, y: String },
    /// RSA: modulus `n` (at least 2048 bits) and exponent `e`.
    Rsa { n: String, e: String },
    /// OKP Ed25519: `x`, 32 bytes.
    Ed25519 { x: String },
}

/// A public key the service can verify signatures with: EC P-256, RSA of at least 2048 bits,
/// or OKP Ed25519. Never holds private members: [`PublicJwk::parse`] refuses them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicJwk {
    material: Material,
    kid: Option<String>,
    /// The key's own `alg`, when it declares one: it must then be the key type's algorithm.
    alg: Option<Algorithm>,
    /// `use`, when declared: only `sig` is accepted.
    use_: Option<String>,
}

impl PublicJwk {
    /// Parses and checks one JWK: a supported public key, no private members.
    pub fn parse(value: Value) -> Result<Self, JoseError> {
        let Value::Object(members) = value else {
            return Err(JoseError::InvalidKey("a JWK is a JSON object".into()));
        };
        if let Some(member) = PRIVATE_MEMBERS.iter().find(|m| members.contains_key(**m)) {
            return Err(JoseError::PrivateKeyMaterial((*member).to_owned()));
        }
        let kty = text(&members, "kty")?.ok_or(JoseError::InvalidKey("no kty".into()))?;
        let material = match kty {
            "EC" => {
                require_curve(&members, "P-256")?;
                let x = coordinate(&members, "x", 32)?;
                let y = coordinate(&members, "y", 32)?;
                Material::P256 { x, y }
            }
            "RSA" => {
                let n = required(&members, "n")?;
                let modulus = decode(&n, "n")?;
                let bits = bit_length(&modulus);
                if bits < MIN_RSA_BITS {
                    return Err(JoseError::WeakKey(format!(
                        "an RSA modulus of {bits} bits (at least {MIN_RSA_BITS} needed)"
                    )));
                }
                let e = required(&members, "e")?;
                if bit_length(&decode(&e, "e")?) == 0 {
                    return Err(JoseError::InvalidKey("RSA exponent is zero".into()));
                }
                Material::Rsa { n, e }
            }
            "OKP" => {
                require_curve(&members, "Ed25519")?;
                Material::Ed25519 {
                    x: coordinate(&members, "x", 32)?,
                }
            }
            "oct" => return Err(JoseError::PrivateKeyMaterial("kty oct".into())),
            other => return Err(JoseError::UnsupportedKey(format!("kty {other}"))),
        };
        let alg = text(&members, "alg")?.map(Algorithm::parse).transpose()?;
        let key = Self {
            material,
            kid: text(&members, "kid")?.map(str::to_owned),
            alg,
            use_: text(&members, "use")?.map(str::to_owned),
        };
        if let Some(alg) = key.alg.filter(|alg| *alg != key.algorithm()) {
            return Err(JoseError::InvalidKey(format!(
                "alg {} does not fit the key type",
                alg.name()
            )));
        }
        if key.use_.as_deref().is_some_and(|u| u != "sig") {
            return Err(JoseError::InvalidKey("use must be sig".into()));
        }
        Ok(key)
    }

    /// The one algorithm this key verifies: ES256 for P-256, PS256 for RSA, EdDSA for Ed25519.
    pub fn algorithm(&self) -> Algorithm {
        match self.material {
            Material::P256 { .. } => Algorithm::Es256,
            Material::Rsa { .. } => Algorithm::Ps256,
            Material::Ed25519 { .. } => Algorithm::EdDsa,
        }
    }

    pub fn kid(&self) -> Option<&str> {
        self.kid.as_deref()
    }

    /// The RFC 7638 thumbprint: SHA-256 of the required members in lexicographic order, as
    /// JSON without whitespace, base64url without padding. (RFC 8037 §2 names OKP's members.)
    pub fn thumbprint(&self) -> String {
        // The members were checked to be base64url on parse and the names are fixed: nothing
        // needs JSON escaping, so plain formatting is the canonical form.
        let canonical = match &self.material {
            Material::P256 { x, y } => {
                format!(r#"{{"crv":"P-256","kty":"EC","x":"{x}","y":"{y}"}}"#)
            }
            Material::Rsa { n, e } => format!(r#"{{"e":"{e}","kty":"RSA","n":"{n}"}}"#),
            Material::Ed25519 { x } => format!(r#"{{"crv":"Ed25519","kty":"OKP","x":"{x}"}}"#),
        };
        URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()))
    }

    /// The key as JSON: its public members, `kid`, `alg` and `use` when it has them.
    pub fn to_value(&self) -> Value {
        let mut members = Map::new();
        let mut put = |name: &str, value: &str| {
            members.insert(name.to_owned(), Value::String(value.to_owned()));
        };
        match &self.material {
            Material::P256 { x, y } => {
                put("kty", "EC");
                put("crv", "P-256");
                put("x", x);
                put("y", y);
            }
            Material::Rsa { n, e } => {
                put("kty", "RSA");
                put("n", n);
                put("e", e);
            }
            Material::Ed25519 { x } => {
                put("kty", "OKP");
                put("crv", "Ed25519");
                put("x", x);
            }
        }
        if let Some(kid) = &self.kid {
            put("kid", kid);
        }
        if let Some(alg) = self.alg {
            put("alg", alg.name());
        }
        if let Some(use_) = &self.use_ {
            put("use", use_);
        }
        Value::Object(members)
    }

    pub(super) fn decoding_key(&self) -> Result<DecodingKey, JoseError> {
        let key = match &self.material {
            Material::P256 { x, y } => DecodingKey::from_ec_components(x, y),
            Material::Rsa { n, e } => DecodingKey::from_rsa_components(n, e),
            Material::Ed25519 { x } => DecodingKey::from_ed_components(x),
        };
        key.map_err(|e| JoseError::InvalidKey(e.to_string()))
    }
}

impl Serialize for PublicJwk {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(serializer)
    }
}

/// Deserialising checks as [`PublicJwk::parse`] does, so a stored key is as valid as a new one.
impl<'de> Deserialize<'de> for PublicJwk {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Self::parse(Value::deserialize(deserializer)?).map_err(serde::de::Error::custom)
    }
}

/// A client's registered public keys (RFC 7517 §5): one to [`MAX_SET_KEYS`] keys, each a
/// [`PublicJwk`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicJwkSet {
    keys: Vec<PublicJwk>,
}

impl PublicJwkSet {
    /// Parses `{"keys": [..]}`, refusing the whole set if any key is private, symmetric or
    /// unsupported: a registration that silently dropped a key would fail later, less clearly.
    pub fn parse(value: Value) -> Result<Self, JoseError> {
        let Value::Object(mut members) = value else {
            return Err(JoseError::InvalidKey("a JWK Set is a JSON object".into()));
        };
        let Some(Value::Array(keys)) = members.remove("keys") else {
            return Err(JoseError::InvalidKey("a JWK Set has a keys array".into()));
        };
        if keys.is_empty() {
            return Err(JoseError::InvalidKey("the JWK Set has no key".into()));
        }
        if keys.len() > MAX_SET_KEYS {
            return Err(JoseError::InvalidKey(format!(
                "the JWK Set has more than {MAX_SET_KEYS} keys"
            )));
        }
        let keys = keys
            .into_iter()
            .enumerate()
            .map(|(index, key)| PublicJwk::parse(key).map_err(|e| e.in_key(index)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self { keys })
    }

    /// Parses a client's registered set keeping its signing keys only: a key declared
    /// `use: enc` (the key a client would have ID tokens encrypted to, which this server never
    /// does) is left out before the checks, every other key checked as by [`Self::parse`].
    /// Refused when no signing key is left.
    pub fn parse_signing_keys(mut value: Value) -> Result<Self, JoseError> {
        if let Some(Value::Array(keys)) = value.get_mut("keys") {
            let declared = keys.len();
            keys.retain(|key| key.get("use").and_then(Value::as_str) != Some("enc"));
            if declared > 0 && keys.is_empty() {
                return Err(JoseError::InvalidKey(
                    "the JWK Set has no signing key (every key is use enc)".into(),
                ));
            }
        }
        Self::parse(value)
    }

    pub fn keys(&self) -> &[PublicJwk] {
        &self.keys
    }

    /// The keys a JWS with header `kid` may have been signed with: those with that `kid`, or,
    /// without one, every key (each is tried; a set holds few).
    pub fn candidates<'a>(&'a self, kid: Option<&'a str>) -> impl Iterator<Item = &'a PublicJwk> {
        self.keys
            .iter()
            .filter(move |key| kid.is_none_or(|kid| key.kid() == Some(kid)))
    }

    pub fn to_value(&self) -> Value {
        serde_json::json!({ "keys": self.keys.iter().map(PublicJwk::to_value).collect::<Vec<_>>() })
    }
}

impl Serialize for PublicJwkSet {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for PublicJwkSet {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Self::parse(Value::deserialize(deserializer)?).map_err(serde::de::Error::custom)
    }
}

fn text<'a>(members: &'a Map<String, Value>, name: &str) -> Result<Option<&'a str>, JoseError> {
    match members.get(name) {
        None => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(_) => Err(JoseError::InvalidKey(format!("{name} is not a string"))),
    }
}

fn required(members: &Map<String, Value>, name: &str) -> Result<String, JoseError> {
    text(members, name)?
        .map(str::to_owned)
        .ok_or_else(|| JoseError::InvalidKey(format!("no {name}")))
}

fn require_curve(members: &Map<String, Value>, curve: &str) -> Result<(), JoseError> {
    match text(members, "crv")? {
        Some(crv) if crv == curve => Ok(()),
        Some(other) => Err(JoseError::UnsupportedKey(format!("curve {other}"))),
        None => Err(JoseError::InvalidKey("no crv".into())),
    }
}

fn coordinate(members: &Map<String, Value>, name: &str, len: usize) -> Result<String, JoseError> {
    let value = required(members, name)?;
    if decode(&value, name)?.len() != len {
        return Err(JoseError::InvalidKey(format!("{name} is not {len} bytes")));
    }
    Ok(value)
}

fn decode(value: &str, name: &str) -> Result<Vec<u8>, JoseError> {
    URL_SAFE_NO_PAD
        .decode(value)
        .map_err(|_| JoseError::InvalidKey(format!("{name} is not base64url")))
}

/// Bits of a big-endian unsigned integer, leading zeros not counted.
fn bit_length(bytes: &[u8]) -> usize {
    let Some(first) = bytes.iter().position(|b| *b != 0) else {
        return 0;
    };
    (bytes.len() - first) * 8 - bytes[first].leading_zeros() as usize
}
