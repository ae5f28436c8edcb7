//! Clients: the registered OAuth applications (application management).

use async_trait::async_trait;

use super::StoreResult;
use crate::domain::{Client, ClientId};

#[async_trait]
pub trait ClientStore: Send + Sync {
    /// Creates or replaces.
    async fn put_client(&self, client: &Client) -> StoreResult<()>;
    async fn get_client(&self, id: &ClientId) -> StoreResult<Option<Client>>;
}
