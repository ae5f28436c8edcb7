//! The signing key ring's shared state: one versioned document per deployment (which keys are
//! published, which one signs, since when; see `signing::ring`). Every function instance reads
//! it at cold start and again every minute, so a rotation reaches running functions without a
//! redeploy; rotations replace it with a write conditional on the version they read, so two
//! rotations running at once leave one consistent ring.
//!
//! The store keeps the document as opaque text: its meaning belongs to `signing`. It holds no
//! usable secret: local private keys are sealed with a key only the secret holds, and KMS keys
//! are named by ARN.

use async_trait::async_trait;

use super::StoreResult;

/// The ring document as last written, with the version a replacement must name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionedRing {
    /// 1 for the first write, then one more for each replacement.
    pub version: u64,
    pub document: String,
}

/// The outcome of a conditional write of the ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RingWrite {
    /// Written; the ring now has this version.
    Written { version: u64 },
    /// Another writer got there first: the ring is not at the expected version (or already
    /// exists, for a first write). Nothing was written; read it again.
    Conflict,
}

#[async_trait]
pub trait SigningKeyRingStore: Send + Sync + std::fmt::Debug {
    /// The ring, strongly consistent; `None` before the first write.
    async fn load_signing_key_ring(&self) -> StoreResult<Option<VersionedRing>>;

    /// Writes `document` as the next version if the stored ring is at `expected` (`None`: only
    /// if there is no ring yet).
    async fn replace_signing_key_ring(
        &self,
        expected: Option<u64>,
        document: &str,
    ) -> StoreResult<RingWrite>;
}
