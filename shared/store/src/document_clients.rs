//! The clients of client ID metadata documents (docs/decisions.md, "Client ID metadata
//! documents"): each fetched document's client, kept by its id (derived from the document's URL)
//! until a while after the document stops being fresh. This is the documents' cache, shared by
//! every instance and function: a document fetched at the authorize endpoint is the client the
//! token endpoint then authenticates, without fetching it again.

use async_trait::async_trait;

use super::StoreResult;
use crate::clock::UnixTime;
use crate::domain::{ClientId, DocumentClient};

#[async_trait]
pub trait DocumentClientStore: Send + Sync {
    /// Keeps (or replaces) the client of a fetched document until its `expires_at`.
    async fn put_document_client(&self, record: &DocumentClient) -> StoreResult<()>;

    /// The client kept under `id`, fresh or not, unless it expired at `now`.
    async fn get_document_client(
        &self,
        id: &ClientId,
        now: UnixTime,
    ) -> StoreResult<Option<DocumentClient>>;
}
