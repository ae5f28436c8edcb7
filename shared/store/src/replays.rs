//! Single use of a JWT's `jti` (RFC 7523 §3 item 7, RFC 9449 §11.1): the first use of a key is
//! remembered until the token's expiry; a second use before then is a replay.
//!
//! A key is what is used (a short kind, e.g. `client-assertion`) and a SHA-256 digest of the
//! scope it is unique in (a client id, a key thumbprint) together with the `jti`; the store
//! keeps only the digest. The scope's length is hashed first, so that no scope and `jti` pair
//! can be read as another (`ab` + `c` against `a` + `bc`).

use async_trait::async_trait;

use super::StoreResult;
use crate::clock::UnixTime;
use crate::secrets::TokenHash;

/// One `jti` in its scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayKey {
    /// What is used: lower-case ASCII letters and `-` (it is part of the stored key).
    pub kind: &'static str,
    /// Digest of `len(scope):scope:jti`.
    pub digest: TokenHash,
}

impl ReplayKey {
    pub fn new(kind: &'static str, scope: &str, jti: &str) -> Self {
        debug_assert!(kind.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'));
        Self {
            kind,
            digest: TokenHash::of(&format!("{}:{scope}:{jti}", scope.len())),
        }
    }

    /// The stored key: `<kind>#<hex digest>`.
    pub fn stored(&self) -> String {
        format!("{}#{}", self.kind, self.digest.to_hex())
    }
}

/// A key's first use as part of a [`WriteBatch`](super::WriteBatch) (its condition decides the
/// batch): what [`ReplayStore::first_use`] writes, committed with what the use grants, so that a
/// failed write spends nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FirstUse {
    pub key: ReplayKey,
    pub expires_at: UnixTime,
    pub now: UnixTime,
}

#[async_trait]
pub trait ReplayStore: Send + Sync {
    /// Marks `key` used until `expires_at`, in one conditional write: `true` if this is its
    /// first use (or its previous use has expired at `now`), `false` if it was used and has
    /// not expired. Of parallel calls for one key, exactly one answers `true`.
    async fn first_use(
        &self,
        key: &ReplayKey,
        expires_at: UnixTime,
        now: UnixTime,
    ) -> StoreResult<bool>;
}
