//! Legacy migration: the old consumer keys, the imported old tokens, and which family each old
//! token was last exchanged for.

use async_trait::async_trait;

use super::StoreResult;
use crate::clock::UnixTime;
use crate::domain::{ConsumerKey, FamilyId, LegacyApp, LegacyExchange, LegacyToken};
use crate::secrets::TokenHash;

/// Points a legacy token's exchange link at a new family: a batch operation
/// ([`WriteOp::LegacyLink`](super::WriteOp::LegacyLink)), written with the family it points at.
#[derive(Debug, Clone)]
pub struct LegacyLink {
    pub exchange: LegacyExchange,
    /// The family the caller saw linked (`None`: never exchanged). The link moves only if this
    /// is still the link, so two concurrent exchanges cannot both leave a live family.
    pub previous_family: Option<FamilyId>,
}

#[async_trait]
pub trait LegacyStore: Send + Sync {
    /// Creates or replaces (re-linking a consumer key moves it to another client).
    async fn put_legacy_app(&self, app: &LegacyApp) -> StoreResult<()>;
    async fn get_legacy_app(&self, key: &ConsumerKey) -> StoreResult<Option<LegacyApp>>;
    /// Writes any number of tokens in batches; replaces tokens already imported, so a re-run
    /// of the same import creates no duplicates. All are written when it returns `Ok`.
    async fn put_legacy_tokens(&self, tokens: &[LegacyToken]) -> StoreResult<()>;
    async fn get_legacy_token(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<LegacyToken>>;
    /// The link is written by a batch ([`LegacyLink`]), with the family it points at.
    async fn get_legacy_exchange(&self, hash: &TokenHash) -> StoreResult<Option<LegacyExchange>>;
}
