//! Pushed authorization requests on DynamoDB: one item per `request_uri` digest
//! (`PAR#<digest>`, `PAR`) with the TTL `expires_at`. Taking one is one `DeleteItem` whose
//! condition names the client and the expiry and which answers the old item: one write, and of
//! racing takes only one finds it.

use async_trait::async_trait;

use super::codec::{key, keys, n, s, to_item};
use super::requests::take_if;
use super::DynamoStore;
use crate::clock::UnixTime;
use crate::domain::{ClientId, PushedAuthorization};
use crate::secrets::TokenHash;
use crate::{PushedAuthorizationStore, StoreResult};

#[async_trait]
impl PushedAuthorizationStore for DynamoStore {
    async fn put_pushed_authorization(&self, record: &PushedAuthorization) -> StoreResult<()> {
        let item = to_item(record, keys::pushed_authorization(&record.request_uri_hash))?;
        self.put("PutPushedAuthorization", item).await
    }

    async fn take_pushed_authorization(
        &self,
        request_uri_hash: &TokenHash,
        client_id: &ClientId,
        now: UnixTime,
    ) -> StoreResult<Option<PushedAuthorization>> {
        let (pk, sk) = keys::pushed_authorization(request_uri_hash);
        let delete = self
            .client
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .condition_expression("client_id = :client AND expires_at > :now")
            .expression_attribute_values(":client", s(client_id.to_string()))
            .expression_attribute_values(":now", n(now));
        take_if("TakePushedAuthorization", delete).await
    }
}
