//! Authenticator apps on DynamoDB: one item per user (`TOTP#<principal>` / `TOTP`). A code's use
//! is an `UpdateItem` on the condition that its step is later than the last one used; a
//! recovery code's removes its digest from the list at the index read, on the condition that
//! the digest is still there, so a concurrent use of another code (which shifts the list) is
//! read again rather than lost.

use async_trait::async_trait;

use super::codec::{keys, n, s, to_item};
use super::errors::store_error;
use super::requests::update_if;
use super::DynamoStore;
use crate::domain::{PrincipalId, TotpFactor};
use crate::secrets::TokenHash;
use crate::{SecondFactorStore, StoreResult};

/// Reads and conditional removals of one recovery code before giving up: each retry follows a
/// concurrent use of another code by the same user.
const RECOVERY_ATTEMPTS: usize = 3;

#[async_trait]
impl SecondFactorStore for DynamoStore {
    async fn put_totp_factor(&self, factor: &TotpFactor) -> StoreResult<bool> {
        let item = to_item(factor, keys::totp_factor(&factor.principal_id))?;
        match self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(pk)")
            .send()
            .await
        {
            Ok(_) => Ok(true),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
            {
                Ok(false)
            }
            Err(e) => Err(store_error("PutTotpFactor", e)),
        }
    }

    async fn get_totp_factor(&self, principal: &PrincipalId) -> StoreResult<Option<TotpFactor>> {
        self.get("GetTotpFactor", keys::totp_factor(principal))
            .await
    }

    async fn use_totp_step(&self, principal: &PrincipalId, step: i64) -> StoreResult<bool> {
        let update = self
            .update_item(keys::totp_factor(principal))
            .update_expression("SET last_used_step = :step")
            .condition_expression("attribute_exists(pk) AND last_used_step < :step")
            .expression_attribute_values(":step", n(step));
        update_if("UseTotpStep", update).await
    }

    async fn release_totp_step(
        &self,
        principal: &PrincipalId,
        step: i64,
        previous: i64,
    ) -> StoreResult<bool> {
        let update = self
            .update_item(keys::totp_factor(principal))
            .update_expression("SET last_used_step = :previous")
            .condition_expression("attribute_exists(pk) AND last_used_step = :step")
            .expression_attribute_values(":step", n(step))
            .expression_attribute_values(":previous", n(previous));
        update_if("ReleaseTotpStep", update).await
    }

    async fn use_recovery_code(
        &self,
        principal: &PrincipalId,
        hash: &TokenHash,
    ) -> StoreResult<bool> {
        for _ in 0..RECOVERY_ATTEMPTS {
            let Some(factor) = self.get_totp_factor(principal).await? else {
                return Ok(false);
            };
            let Some(index) = factor.recovery_codes.iter().position(|code| code == hash) else {
                return Ok(false);
            };
            let update = self
                .update_item(keys::totp_factor(principal))
                .update_expression(format!("REMOVE recovery_codes[{index}]"))
                .condition_expression(format!("recovery_codes[{index}] = :hash"))
                .expression_attribute_values(":hash", s(hash.to_hex()));
            if update_if("UseRecoveryCode", update).await? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    async fn delete_totp_factor(&self, principal: &PrincipalId) -> StoreResult<bool> {
        let (pk, sk) = keys::totp_factor(principal);
        match self
            .client
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(super::codec::key(pk, sk)))
            .condition_expression("attribute_exists(pk)")
            .send()
            .await
        {
            Ok(_) => Ok(true),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
            {
                Ok(false)
            }
            Err(e) => Err(store_error("DeleteTotpFactor", e)),
        }
    }
}
