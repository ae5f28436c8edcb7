//! Authorization codes on DynamoDB: one item per code, redeemed by a conditional update.

use async_trait::async_trait;

use super::codec::{keys, n, s, to_item};
use super::requests::update_if;
use super::DynamoStore;
use crate::clock::UnixTime;
use crate::domain::{AuthorizationCode, ClientId, FamilyId};
use crate::secrets::TokenHash;
use crate::store::{AuthorizationCodeStore, CodeRedeemed, StoreResult};

#[async_trait]
impl AuthorizationCodeStore for DynamoStore {
    async fn put_authorization_code(&self, code: &AuthorizationCode) -> StoreResult<()> {
        self.put(
            "PutAuthorizationCode",
            to_item(code, keys::authorization_code(&code.code_hash))?,
        )
        .await
    }

    async fn get_authorization_code(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<AuthorizationCode>> {
        Ok(self
            .get::<AuthorizationCode>("GetAuthorizationCode", keys::authorization_code(hash))
            .await?
            .filter(|code| code.expires_at > now))
    }

    async fn redeem_authorization_code(
        &self,
        hash: &TokenHash,
        client_id: &ClientId,
        now: UnixTime,
    ) -> StoreResult<CodeRedeemed> {
        // The condition is the whole guarantee: of concurrent redemptions only one can see
        // `redeemed_at` absent.
        let redeem = self
            .update_item(keys::authorization_code(hash))
            .update_expression("SET redeemed_at = :now")
            .condition_expression(
                "attribute_exists(pk) AND attribute_not_exists(redeemed_at) \
                 AND expires_at > :now AND client_id = :client",
            )
            .expression_attribute_values(":now", n(now))
            .expression_attribute_values(":client", s(client_id.to_string()));
        Ok(if update_if("RedeemAuthorizationCode", redeem).await? {
            CodeRedeemed::Redeemed
        } else {
            CodeRedeemed::NotRedeemable
        })
    }

    async fn record_code_family(&self, hash: &TokenHash, family_id: &FamilyId) -> StoreResult<()> {
        // Conditional on existence, so that an update never creates a stub code. A failed
        // condition means its TTL deleted it in the meantime: nothing left to link.
        let link = self
            .update_item(keys::authorization_code(hash))
            .update_expression("SET family_id = :family")
            .condition_expression("attribute_exists(pk)")
            .expression_attribute_values(":family", s(family_id.to_string()));
        update_if("RecordCodeFamily", link).await?;
        Ok(())
    }
}
