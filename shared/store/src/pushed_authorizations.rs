//! Pushed authorization requests (RFC 9126; docs/decisions.md, "Pushed authorization
//! requests"): kept under the digest of their `request_uri` until used or expired. Using one is
//! one conditional delete that answers the record, so a `request_uri` is used at most once.

use async_trait::async_trait;

use super::StoreResult;
use crate::clock::UnixTime;
use crate::domain::{ClientId, PushedAuthorization};
use crate::secrets::TokenHash;

#[async_trait]
pub trait PushedAuthorizationStore: Send + Sync {
    /// Keeps a new pushed request until its `expires_at`.
    async fn put_pushed_authorization(&self, record: &PushedAuthorization) -> StoreResult<()>;

    /// Deletes and answers the record under `request_uri_hash` if `client_id` pushed it and it
    /// is live at `now`, in one conditional write: of concurrent takes, one gets it. `None` for
    /// an unknown, used or expired one, and for another client's, which is left as it was.
    async fn take_pushed_authorization(
        &self,
        request_uri_hash: &TokenHash,
        client_id: &ClientId,
        now: UnixTime,
    ) -> StoreResult<Option<PushedAuthorization>>;
}
