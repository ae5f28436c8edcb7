//! Passkeys on DynamoDB: each in its user's partition (`PASSKEY#<principal>` / `<credential
//! id>`), so that one `Query` lists a user's and a sign-in reads one `GetItem`; every change is
//! one conditional write on an item that exists, so a removed passkey is never written back.
//! Ceremonies: one item per id digest (`PASSKEYCEREMONY#<digest>`) with the TTL `expires_at`,
//! taken by one `DeleteItem` conditioned on the expiry that answers the old item.

use async_trait::async_trait;
use aws_sdk_dynamodb::types::ReturnValue;

use super::codec::{from_item, key, keys, n, s, to_item};
use super::errors::store_error;
use super::requests::{take_if, update_if};
use super::DynamoStore;
use crate::clock::UnixTime;
use crate::domain::{PasskeyCeremony, PasskeyCredential, PrincipalId};
use crate::secrets::TokenHash;
use crate::{PasskeyStore, StoreResult};

fn is_condition_failure<E, R>(error: &aws_sdk_dynamodb::error::SdkError<E, R>) -> bool
where
    E: aws_sdk_dynamodb::error::ProvideErrorMetadata,
{
    error
        .as_service_error()
        .and_then(aws_sdk_dynamodb::error::ProvideErrorMetadata::code)
        == Some("ConditionalCheckFailedException")
}

#[async_trait]
impl PasskeyStore for DynamoStore {
    async fn put_passkey(&self, passkey: &PasskeyCredential) -> StoreResult<bool> {
        let item = to_item(
            passkey,
            keys::passkey(&passkey.principal_id, &passkey.credential_id),
        )?;
        let put = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(pk)")
            .send()
            .await;
        match put {
            Ok(_) => Ok(true),
            Err(e) if is_condition_failure(&e) => Ok(false),
            Err(e) => Err(store_error("PutPasskey", e)),
        }
    }

    async fn get_passkey(
        &self,
        principal: &PrincipalId,
        credential_id: &str,
    ) -> StoreResult<Option<PasskeyCredential>> {
        self.get("GetPasskey", keys::passkey(principal, credential_id))
            .await
    }

    async fn list_passkeys(&self, principal: &PrincipalId) -> StoreResult<Vec<PasskeyCredential>> {
        let mut passkeys = self
            .partition("QueryPasskeys", keys::passkey_partition(principal))
            .await?
            .into_iter()
            .map(from_item::<PasskeyCredential>)
            .collect::<StoreResult<Vec<_>>>()?;
        passkeys.sort_by(|a, b| {
            (a.created_at, &a.credential_id).cmp(&(b.created_at, &b.credential_id))
        });
        Ok(passkeys)
    }

    async fn rename_passkey(
        &self,
        principal: &PrincipalId,
        credential_id: &str,
        name: &str,
    ) -> StoreResult<bool> {
        let update = self
            .update_item(keys::passkey(principal, credential_id))
            .update_expression("SET #name = :name")
            .condition_expression("attribute_exists(pk)")
            .expression_attribute_names("#name", "name")
            .expression_attribute_values(":name", s(name));
        update_if("RenamePasskey", update).await
    }

    async fn record_passkey_use(
        &self,
        principal: &PrincipalId,
        credential_id: &str,
        passkey: &str,
        used_at: UnixTime,
    ) -> StoreResult<bool> {
        let update = self
            .update_item(keys::passkey(principal, credential_id))
            .update_expression("SET passkey = :passkey, last_used_at = :used")
            .condition_expression("attribute_exists(pk)")
            .expression_attribute_values(":passkey", s(passkey))
            .expression_attribute_values(":used", n(used_at));
        update_if("RecordPasskeyUse", update).await
    }

    async fn delete_passkey(
        &self,
        principal: &PrincipalId,
        credential_id: &str,
    ) -> StoreResult<Option<PasskeyCredential>> {
        let (pk, sk) = keys::passkey(principal, credential_id);
        let out = self
            .client
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .return_values(ReturnValue::AllOld)
            .send()
            .await
            .map_err(|e| store_error("DeletePasskey", e))?;
        out.attributes
            .filter(|item| !item.is_empty())
            .map(from_item)
            .transpose()
    }

    async fn put_passkey_ceremony(&self, ceremony: &PasskeyCeremony) -> StoreResult<()> {
        let item = to_item(ceremony, keys::passkey_ceremony(&ceremony.id_hash))?;
        self.put("PutPasskeyCeremony", item).await
    }

    async fn take_passkey_ceremony(
        &self,
        id_hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<PasskeyCeremony>> {
        let (pk, sk) = keys::passkey_ceremony(id_hash);
        let delete = self
            .client
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .condition_expression("expires_at > :now")
            .expression_attribute_values(":now", n(now));
        take_if("TakePasskeyCeremony", delete).await
    }
}
