//! Clients: the registered OAuth applications (application management), and their secrets.

use async_trait::async_trait;

use super::{StoreError, StoreResult};
use crate::clock::UnixTime;
use crate::domain::{Client, ClientId, ClientSecrets, SecretId};
use crate::secrets::TokenHash;

#[async_trait]
pub trait ClientStore: Send + Sync {
    /// Creates, or replaces a client whose secrets are still at the version `client` was read
    /// with: a replace that would undo a change of the secrets made meanwhile (bring a revoked
    /// secret back) fails instead, and nothing is written.
    async fn put_client(&self, client: &Client) -> StoreResult<()>;
    async fn get_client(&self, id: &ClientId) -> StoreResult<Option<Client>>;

    /// Replaces a self-registered client if its stored registration access token is still the
    /// one whose digest is `expected_token` (and its secrets still at the version `client` was
    /// read with); `Ok(false)`, nothing written, when another request changed either meanwhile
    /// or the client does not exist. RFC 7592 answers rotate the token: of two concurrent
    /// requests with one token, only one may leave a valid token behind.
    async fn replace_registered_client(
        &self,
        client: &Client,
        expected_token: &TokenHash,
    ) -> StoreResult<bool>;

    /// Every client, oldest first (`tokenctl clients list`): an administrator's read, which on
    /// DynamoDB scans the table.
    async fn list_clients(&self) -> StoreResult<Vec<Client>>;

    /// Replaces the client's secrets with `secrets` if the stored ones are still at
    /// `expected_version`; `Ok(false)` (nothing written) when they changed meanwhile or the
    /// client does not exist. An earlier record's `secret_hash` is removed: the set replaces it.
    async fn replace_client_secrets(
        &self,
        id: &ClientId,
        expected_version: u64,
        secrets: &ClientSecrets,
    ) -> StoreResult<bool>;

    /// Sets the secret's `last_used` to `at`, unless it was set less than
    /// [`LAST_USED_RESOLUTION_SECONDS`](crate::domain::LAST_USED_RESOLUTION_SECONDS) before;
    /// `Ok(false)` when nothing was written (recently recorded, or no such secret).
    async fn record_secret_use(
        &self,
        id: &ClientId,
        secret: &SecretId,
        at: UnixTime,
    ) -> StoreResult<bool>;

    /// The client as the store has it now, past any cache in front of it: a presented secret
    /// that matches none of a cached record's may have been added since.
    async fn get_client_uncached(&self, id: &ClientId) -> StoreResult<Option<Client>> {
        self.get_client(id).await
    }

    /// Whether [`get_client`](Self::get_client) may answer from a cache.
    fn caches_clients(&self) -> bool {
        false
    }
}

/// What [`ClientStore::put_client`] answers when it lost to a change of the client's secrets.
pub(crate) fn secrets_changed_meanwhile() -> StoreError {
    StoreError::internal(
        "the client's secrets changed while it was being updated; nothing was written, try again",
    )
}
