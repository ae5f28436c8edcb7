//! Clients on DynamoDB: one item per client, its secrets a map attribute `secrets` by secret id
//! (so that one secret's `last_used` is written alone) with `secrets_version`, which conditional
//! writes compare (absent in items written before clients had several secrets: version 0).

use async_trait::async_trait;
use aws_sdk_dynamodb::types::AttributeValue;

use super::codec::{from_item, keys, n, to_item};
use super::errors::store_error;
use super::requests::update_if;
use super::DynamoStore;
use crate::clients::secrets_changed_meanwhile;
use crate::clock::UnixTime;
use crate::domain::{
    Client as OAuthClient, ClientId, ClientSecrets, SecretId, LAST_USED_RESOLUTION_SECONDS,
};
use crate::secrets::TokenHash;
use crate::{ClientStore, StoreError, StoreResult};

/// True for a new item, an item written before versions, or one still at `:version`.
/// Every attribute of a client item the token function's updates name (the key, the secrets and
/// their version, the single secret of records written before secrets had versions): its IAM role
/// may update these and no other (`template.yaml`, `dynamodb:Attributes`; checked by
/// `template_iam`), so that a compromised function cannot rewrite a client's redirect URIs,
/// grants or keys.
#[cfg(test)]
pub(super) const SECRET_ATTRIBUTES: &[&str] =
    &["pk", "sk", "secrets", "secrets_version", "secret_hash"];

const UNCHANGED_SECRETS: &str =
    "attribute_not_exists(secrets_version) OR secrets_version = :version";

#[async_trait]
impl ClientStore for DynamoStore {
    async fn put_client(&self, client: &OAuthClient) -> StoreResult<()> {
        let item = to_item(client, keys::client(&client.id))?;
        let put = self
            .client()
            .put_item()
            .table_name(self.table_name())
            .set_item(Some(item))
            .condition_expression(UNCHANGED_SECRETS)
            .expression_attribute_values(":version", n(client.secrets.version()))
            .send()
            .await;
        match put {
            Ok(_) => Ok(()),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
            {
                Err(secrets_changed_meanwhile())
            }
            Err(e) => Err(store_error("PutClient", e)),
        }
    }

    async fn get_client(&self, id: &ClientId) -> StoreResult<Option<OAuthClient>> {
        self.get("GetClient", keys::client(id)).await
    }

    /// A `PutItem` (the registration function's one write of client items, `template.yaml`)
    /// conditional on the stored token's digest.
    async fn replace_registered_client(
        &self,
        client: &OAuthClient,
        expected_token: &TokenHash,
    ) -> StoreResult<bool> {
        let item = to_item(client, keys::client(&client.id))?;
        let put = self
            .client()
            .put_item()
            .table_name(self.table_name())
            .set_item(Some(item))
            .condition_expression(format!(
                "#registration.#token = :token AND ({UNCHANGED_SECRETS})"
            ))
            .expression_attribute_names("#registration", "registration")
            .expression_attribute_names("#token", "access_token_hash")
            .expression_attribute_values(":token", AttributeValue::S(expected_token.to_hex()))
            .expression_attribute_values(":version", n(client.secrets.version()))
            .send()
            .await;
        match put {
            Ok(_) => Ok(true),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
            {
                Ok(false)
            }
            Err(e) => Err(store_error("ReplaceRegisteredClient", e)),
        }
    }

    /// A scan: clients have no partition of their own, and this is an administrator's command
    /// (a scan reads the whole table once; on demand, about 0.03 USD a gigabyte).
    async fn list_clients(&self) -> StoreResult<Vec<OAuthClient>> {
        let (prefix, sort) = keys::client_kind();
        let scan = self
            .client()
            .scan()
            .table_name(self.table_name())
            .filter_expression("sk = :sk AND begins_with(pk, :prefix)")
            .expression_attribute_values(":sk", AttributeValue::S(sort.to_owned()))
            .expression_attribute_values(":prefix", AttributeValue::S(prefix.to_owned()))
            .consistent_read(true);
        let mut start = None;
        let mut clients = Vec::new();
        loop {
            let mut page = scan
                .clone()
                .set_exclusive_start_key(start)
                .send()
                .await
                .map_err(|e| store_error("ScanClients", e))?;
            start = page.last_evaluated_key.take().filter(|key| !key.is_empty());
            for item in page.items.unwrap_or_default() {
                clients.push(from_item::<OAuthClient>(item)?);
            }
            if start.is_none() {
                break;
            }
        }
        clients.sort_by_key(|client| (client.created_at, client.id));
        Ok(clients)
    }

    async fn replace_client_secrets(
        &self,
        id: &ClientId,
        expected_version: u64,
        secrets: &ClientSecrets,
    ) -> StoreResult<bool> {
        let mut encoded = serde_dynamo::aws_sdk_dynamodb_1::to_item(secrets)
            .map_err(|_| StoreError::internal("cannot encode a client's secrets"))?;
        let set = encoded
            .remove("secrets")
            .unwrap_or_else(|| AttributeValue::M(Default::default()));
        let update = self
            .update_item(keys::client(id))
            .update_expression("SET secrets = :secrets, secrets_version = :next REMOVE secret_hash")
            .condition_expression(format!("attribute_exists(pk) AND ({UNCHANGED_SECRETS})"))
            .expression_attribute_values(":secrets", set)
            .expression_attribute_values(":next", n(secrets.version()))
            .expression_attribute_values(":version", n(expected_version));
        update_if("ReplaceClientSecrets", update).await
    }

    async fn record_secret_use(
        &self,
        id: &ClientId,
        secret: &SecretId,
        at: UnixTime,
    ) -> StoreResult<bool> {
        let update = self
            .update_item(keys::client(id))
            .update_expression("SET secrets.#secret.last_used = :at")
            .condition_expression(
                "attribute_exists(secrets.#secret) AND \
                 (attribute_not_exists(secrets.#secret.last_used) \
                  OR secrets.#secret.last_used <= :due)",
            )
            .expression_attribute_names("#secret", secret.to_string())
            .expression_attribute_values(":at", n(at))
            .expression_attribute_values(":due", n(at - LAST_USED_RESOLUTION_SECONDS));
        update_if("RecordSecretUse", update).await
    }
}
