//! Clients of metadata documents on DynamoDB: one item per client id (`DOCCLIENT#<id>`,
//! `DOCCLIENT`), the client a map attribute, with the TTL `expires_at`; expiry is checked on
//! read, as the TTL deletes late. A prefix of its own, not `CLIENT#`: the token function, which
//! fetches documents, may write these and never a registered client.

use async_trait::async_trait;

use super::codec::{keys, to_item};
use super::DynamoStore;
use crate::clock::UnixTime;
use crate::domain::{ClientId, DocumentClient};
use crate::{DocumentClientStore, StoreResult};

#[async_trait]
impl DocumentClientStore for DynamoStore {
    async fn put_document_client(&self, record: &DocumentClient) -> StoreResult<()> {
        let item = to_item(record, keys::document_client(&record.client.id))?;
        self.put("PutDocumentClient", item).await
    }

    async fn get_document_client(
        &self,
        id: &ClientId,
        now: UnixTime,
    ) -> StoreResult<Option<DocumentClient>> {
        let record: Option<DocumentClient> = self
            .get("GetDocumentClient", keys::document_client(id))
            .await?;
        Ok(record.filter(|record| record.is_live(now)))
    }
}
