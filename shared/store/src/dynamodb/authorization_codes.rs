//! Authorization codes on DynamoDB: one item per code, redeemed by a conditional update.

use async_trait::async_trait;

use super::codec::{keys, n, s, to_item};
use super::requests::update_if;
use super::DynamoStore;
use crate::clock::UnixTime;
use crate::domain::{AuthorizationCode, ClientId, FamilyId, REDEEMED_CODE_RETENTION_SECONDS};
use crate::secrets::TokenHash;
use crate::{AuthorizationCodeStore, CodeRedeemed, StoreResult};

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
        family_id: Option<&FamilyId>,
        now: UnixTime,
    ) -> StoreResult<CodeRedeemed> {
        // The condition is the whole guarantee: of concurrent redemptions only one can see
        // `redeemed_at` absent. The second branch lets the same redemption land twice (the
        // SDK resubmits an update whose answer was lost), never a competitor with its own family.
        let redeem = self
            .update_item(keys::authorization_code(hash))
            .condition_expression(
                "attribute_exists(pk) AND client_id = :client AND \
                 ((attribute_not_exists(redeemed_at) AND expires_at > :now) \
                  OR family_id = :family)",
            )
            .expression_attribute_values(":now", n(now))
            // The item's TTL moves a day on: a later second use must still find it.
            .expression_attribute_values(":retain", n(now + REDEEMED_CODE_RETENTION_SECONDS))
            .expression_attribute_values(":client", s(client_id.to_string()));
        let redeem = match family_id {
            Some(family_id) => redeem
                .update_expression(
                    "SET redeemed_at = if_not_exists(redeemed_at, :now), family_id = :family, \
                     expires_at = :retain",
                )
                .expression_attribute_values(":family", s(family_id.to_string())),
            // No family can match an empty string: a refused code is simply used up.
            None => redeem
                .update_expression("SET redeemed_at = :now, expires_at = :retain")
                .expression_attribute_values(":family", s(String::new())),
        };
        let redeemed = match update_if("RedeemAuthorizationCode", redeem).await {
            Ok(redeemed) => redeemed,
            // Every attempt may have landed with its answer lost: read the code back, and if
            // it names our family, the redemption is ours.
            Err(lost) => match family_id {
                Some(family_id) => self
                    .get_authorization_code(hash, now)
                    .await
                    .ok()
                    .flatten()
                    .filter(|code| code.family_id.as_ref() == Some(family_id))
                    .map(|_| true)
                    .ok_or(lost)?,
                None => return Err(lost),
            },
        };
        Ok(if redeemed {
            CodeRedeemed::Redeemed
        } else {
            CodeRedeemed::NotRedeemable
        })
    }
}
