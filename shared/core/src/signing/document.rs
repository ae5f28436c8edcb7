//! The signing-key secret: a JSON document (`KeyRingDocument`) holding the server secret and,
//! in rings written before keys had states, the private keys themselves (PKCS#8 PEM, oldest
//! first, the last one signing). Such a ring keeps working as it is (see
//! [`KeyRing::from_document`]) until the first rotation moves its keys into the stored ring
//! (`rotation.rs`); the secret is never rewritten by the services.
//!
//! Where the document lives:
//! - in the cloud, in an AWS Secrets Manager secret named by `SIGNING_KEYS_SECRET_ARN`, read at
//!   cold start (never in the repository, the template, or an environment variable);
//! - locally, in `DATA_DIR/signing-keys.json` (mode 0600), generated on first start.

use std::path::Path;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use p256::elliptic_curve::sec1::ToEncodedPoint;
use p256::pkcs8::{EncodePrivateKey, LineEnding};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::clock::{Clock, UnixTime};
use crate::random::RandomSource;

use super::KeyError;

/// The signing key and the previous ones still published for verification.
pub const MAX_KEYS: usize = 3;

pub const LOCAL_KEY_FILE: &str = "signing-keys.json";

#[derive(Clone, Serialize, Deserialize)]
pub struct StoredKey {
    pub kid: String,
    pub private_key_pem: String,
    pub created_at: UnixTime,
}

impl std::fmt::Debug for StoredKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredKey")
            .field("kid", &self.kid)
            .field("created_at", &self.created_at)
            .finish_non_exhaustive()
    }
}

#[derive(Clone, Default, Serialize, Deserialize)]
pub struct KeyRingDocument {
    /// Empty in a secret made for a stored ring (`{"server_secret": ...}`).
    #[serde(default)]
    pub keys: Vec<StoredKey>,
    /// 32 random bytes (base64url) from which the server's symmetric keys are derived (HKDF,
    /// one label per purpose: refresh-token successors, the sign-in page's cookie and CSRF
    /// tokens). Kept with the signing keys because it is exactly as secret and lives as long.
    /// Added to the document by the first rotation that finds it missing; a document written
    /// before it existed derives it from its oldest key (see [`KeyRing::from_document`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_secret: Option<String>,
}

impl std::fmt::Debug for KeyRingDocument {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyRingDocument")
            .field("keys", &self.keys)
            .field(
                "server_secret",
                &self.server_secret.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

impl KeyRingDocument {
    /// Appends a fresh key, which becomes the signing key, and drops the oldest beyond
    /// [`MAX_KEYS`]. Returns the new key's `kid`.
    pub fn rotate(&mut self, random: &dyn RandomSource, clock: &dyn Clock) -> String {
        if self.server_secret.is_none() {
            let mut secret = [0u8; SERVER_SECRET_BYTES];
            random.fill(&mut secret);
            self.server_secret = Some(URL_SAFE_NO_PAD.encode(secret));
        }
        let key = generate_key(random, clock.now());
        let kid = key.kid.clone();
        self.keys.push(key);
        let excess = self.keys.len().saturating_sub(MAX_KEYS);
        self.keys.drain(..excess);
        kid
    }
}

/// The length of [`KeyRingDocument::server_secret`].
pub const SERVER_SECRET_BYTES: usize = 32;

/// The 32 bytes from which the server's symmetric keys are derived. Never logged.
pub struct ServerSecret(Vec<u8>);

impl std::fmt::Debug for ServerSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ServerSecret(<redacted>)")
    }
}

impl ServerSecret {
    /// A 256-bit key for one purpose, derived with HKDF-SHA256. Every instance of every function
    /// derives the same key; different `purpose` labels give independent keys.
    pub fn derive_key(&self, purpose: &str) -> [u8; 32] {
        hkdf_expand(&self.0, purpose)
    }
}

impl KeyRingDocument {
    pub fn server_secret(&self) -> Result<ServerSecret, KeyError> {
        match &self.server_secret {
            Some(encoded) => URL_SAFE_NO_PAD
                .decode(encoded)
                .ok()
                .filter(|bytes| bytes.len() == SERVER_SECRET_BYTES)
                .map(ServerSecret)
                .ok_or(KeyError::BadServerSecret),
            // A document written before the field existed: its oldest private key is as secret
            // and as stable (the services never rewrite the document).
            None => {
                let oldest = self.keys.first().ok_or(KeyError::Empty)?;
                Ok(ServerSecret(
                    hkdf_expand(oldest.private_key_pem.as_bytes(), "legacy-server-secret-v1")
                        .to_vec(),
                ))
            }
        }
    }

    /// Reads the document from its secret when one is given, otherwise from the local key file
    /// under `data_dir`, creating it (with one key) on first use.
    pub async fn load(secret: Option<&SecretRef>, data_dir: &Path) -> Result<Self, KeyError> {
        match secret {
            Some(secret) => {
                let text = secret
                    .store
                    .secret_string(&secret.arn)
                    .await
                    .map_err(KeyError::Secret)?;
                Ok(serde_json::from_str(&text)?)
            }
            None => Self::load_or_create_local(
                data_dir,
                &crate::random::OsRandom,
                &crate::clock::SystemClock,
            ),
        }
    }

    pub fn load_or_create_local(
        data_dir: &Path,
        random: &dyn RandomSource,
        clock: &dyn Clock,
    ) -> Result<Self, KeyError> {
        let path = data_dir.join(LOCAL_KEY_FILE);
        match read_key_file(&path)? {
            Some(document) => Ok(document),
            None => {
                let mut document = KeyRingDocument::default();
                document.rotate(random, clock);
                write_key_file(&path, &document)?;
                Ok(document)
            }
        }
    }
}

fn hkdf_expand(secret: &[u8], purpose: &str) -> [u8; 32] {
    let mut key = [0u8; 32];
    hkdf::Hkdf::<Sha256>::new(None, secret)
        .expand(purpose.as_bytes(), &mut key)
        .expect("32 bytes is a valid HKDF-SHA256 output length");
    key
}

/// Adds a key to the local key file in the format before keys had states (creating it if
/// needed): how a data directory of an older release looks, for tests of the migration.
pub fn rotate_local(
    data_dir: &Path,
    random: &dyn RandomSource,
    clock: &dyn Clock,
) -> Result<String, KeyError> {
    let path = data_dir.join(LOCAL_KEY_FILE);
    let mut document = read_key_file(&path)?.unwrap_or_default();
    let kid = document.rotate(random, clock);
    write_key_file(&path, &document)?;
    Ok(kid)
}

/// `None` when there is no key file yet.
fn read_key_file(path: &Path) -> Result<Option<KeyRingDocument>, KeyError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(serde_json::from_str(&text)?)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(KeyError::Io {
            path: path.to_owned(),
            source,
        }),
    }
}

fn write_key_file(path: &Path, document: &KeyRingDocument) -> Result<(), KeyError> {
    let io = |source| KeyError::Io {
        path: path.to_owned(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let json = serde_json::to_string_pretty(document)?;
    // Written beside and renamed, so a reader never sees half a file; private to the owner.
    let tmp = path.with_extension("json.tmp");
    {
        use std::io::Write;
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options.open(&tmp).map_err(io)?;
        file.write_all(json.as_bytes()).map_err(io)?;
        file.sync_all().map_err(io)?;
    }
    std::fs::rename(&tmp, path).map_err(io)
}

pub(crate) fn generate_key(random: &dyn RandomSource, now: UnixTime) -> StoredKey {
    // Drawn from the injected source; a 32-byte string is a valid P-256 scalar except with
    // negligible probability, and then we draw again.
    let secret = loop {
        let mut bytes = [0u8; 32];
        random.fill(&mut bytes);
        if let Ok(secret) = p256::SecretKey::from_slice(&bytes) {
            break secret;
        }
    };
    let (x, y) = public_coordinates(&secret.public_key());
    let pem = secret
        .to_pkcs8_pem(LineEnding::LF)
        .expect("a P-256 key encodes as PKCS#8");
    StoredKey {
        kid: thumbprint(&x, &y),
        private_key_pem: pem.to_string(),
        created_at: now,
    }
}

pub(crate) fn public_coordinates(public: &p256::PublicKey) -> (String, String) {
    let point = public.to_encoded_point(false);
    let x = point.x().expect("uncompressed point has x");
    let y = point.y().expect("uncompressed point has y");
    (URL_SAFE_NO_PAD.encode(x), URL_SAFE_NO_PAD.encode(y))
}

/// RFC 7638 JWK thumbprint: stable, and derived from the public key alone.
pub(super) fn thumbprint(x: &str, y: &str) -> String {
    let canonical = format!(r#"{{"crv":"P-256","kty":"EC","x":"{x}","y":"{y}"}}"#);
    URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()))
}

/// Where secrets are read (`token_adapters::secrets`: Secrets Manager).
#[async_trait::async_trait]
pub trait SecretStore: Send + Sync + std::fmt::Debug {
    /// A secret's string value. The error carries the cause, never the secret.
    async fn secret_string(&self, arn: &str) -> Result<String, String>;
}

/// A secret (`SIGNING_KEYS_SECRET_ARN`) and where it is read from.
#[derive(Debug, Clone)]
pub struct SecretRef {
    pub arn: String,
    pub store: std::sync::Arc<dyn SecretStore>,
}
