//! Clients on DynamoDB.

use async_trait::async_trait;

use super::codec::{keys, to_item};
use super::DynamoStore;
use crate::domain::{Client as OAuthClient, ClientId};
use crate::store::{ClientStore, StoreResult};

#[async_trait]
impl ClientStore for DynamoStore {
    async fn put_client(&self, client: &OAuthClient) -> StoreResult<()> {
        self.put("PutClient", to_item(client, keys::client(&client.id))?)
            .await
    }

    async fn get_client(&self, id: &ClientId) -> StoreResult<Option<OAuthClient>> {
        self.get("GetClient", keys::client(id)).await
    }
}
