//! Token families, refresh tokens and access tokens on DynamoDB, and the transaction items of
//! their batch operations (`super::batch`).

mod rotation;

use async_trait::async_trait;

use super::DynamoStore;
use aws_sdk_dynamodb::types::{Put, TransactWriteItem, Update};

use super::codec::{key, keys, n, refresh_token_from_item, refresh_token_item, s, to_item};
use super::errors::build_error;
use super::requests::update_if;
use crate::clock::UnixTime;
use crate::domain::{
    AccessTokenRecord, Family, FamilyId, RefreshTokenRecord, TokenId, MAX_EXCHANGE_CHAIN,
};
use crate::secrets::TokenHash;
use crate::{FamilyOrigin, FamilyStore, FamilyWrite, RefreshTokenWithOrigin, Renewal, StoreResult};

#[async_trait]
impl FamilyStore for DynamoStore {
    async fn get_family(&self, id: &FamilyId, now: UnixTime) -> StoreResult<Option<Family>> {
        Ok(self
            .get::<Family>("GetFamily", keys::family(id))
            .await?
            .filter(|family| family.expires_at > now))
    }

    async fn get_refresh_token(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<RefreshTokenRecord>> {
        Ok(self
            .get::<RefreshTokenRecord>("GetRefreshToken", keys::refresh(hash))
            .await?
            .filter(|record| record.expires_at > now))
    }

    async fn get_refresh_token_with_origin(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<RefreshTokenWithOrigin>> {
        let (pk, sk) = keys::refresh(hash);
        let Some(item) = self.get_item("GetRefreshToken", key(pk, sk)).await? else {
            return Ok(None);
        };
        let (record, origin) = refresh_token_from_item(item)?;
        if record.expires_at <= now {
            return Ok(None);
        }
        let origin = match origin {
            Some(origin) => origin,
            // Written before tokens carried their family's origin: the family has it. Read
            // whatever its state, which is not this read's to judge.
            None => match self
                .get::<Family>("GetRefreshTokenFamily", keys::family(&record.family_id))
                .await?
            {
                Some(family) => FamilyOrigin::from(&family),
                None => return Ok(None),
            },
        };
        Ok(Some(RefreshTokenWithOrigin { record, origin }))
    }

    async fn revoke_family(&self, id: &FamilyId, now: UnixTime) -> StoreResult<bool> {
        // One plain update where no event rides along.
        self.mark_family_revoked(id, now).await
    }

    async fn put_access_token(&self, record: &AccessTokenRecord) -> StoreResult<()> {
        self.put(
            "PutAccessToken",
            to_item(record, keys::access(&record.jti))?,
        )
        .await
    }

    async fn get_access_token(
        &self,
        jti: &TokenId,
        now: UnixTime,
    ) -> StoreResult<Option<AccessTokenRecord>> {
        let Some(mut record) = self
            .get::<AccessTokenRecord>("GetAccessToken", keys::access(jti))
            .await?
            .filter(|record| record.expires_at > now)
        else {
            return Ok(None);
        };
        if let (false, Some(family_id)) = (record.revoked, record.family_id) {
            // Revocation lives on the family only, so that revoking is one write however many
            // access tokens the family minted. Read regardless of the family's own expiry.
            let family = self
                .get::<Family>("GetAccessTokenFamily", keys::family(&family_id))
                .await?;
            record.revoked = family.is_some_and(|f| f.revoked_at.is_some());
        }
        if !record.revoked {
            record.revoked = self.any_revoked(&record.exchanged_from).await?;
        }
        Ok(Some(record))
    }
}

impl DynamoStore {
    /// Whether any of the access tokens a token was exchanged from reads revoked, or is gone
    /// (they outlive it): one read each, at most [`MAX_EXCHANGE_CHAIN`], none when nothing is.
    /// Revoking one access token stays one write, however much was exchanged from it.
    async fn any_revoked(&self, exchanged_from: &[TokenId]) -> StoreResult<bool> {
        for jti in exchanged_from.iter().take(MAX_EXCHANGE_CHAIN) {
            let from = self
                .get::<AccessTokenRecord>("GetExchangedFrom", keys::access(jti))
                .await?;
            if from.is_none_or(|from| from.revoked) {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// An item of a batch's transaction, and whether its condition decides an outcome (`true`) or
/// only guards integrity (a new item's id is free).
pub(in super::super) type BatchItem = (TransactWriteItem, bool);

impl DynamoStore {
    /// A batch's family operation as transaction items.
    pub(in super::super) fn family_items(
        &self,
        write: &FamilyWrite,
    ) -> StoreResult<Vec<BatchItem>> {
        let integrity = |item| (item, false);
        Ok(match write {
            FamilyWrite::Start(new) => {
                let mut items = vec![integrity(
                    self.put_new(to_item(&new.family, keys::family(&new.family.id))?)?,
                )];
                // A first token that names its family has no record: the family is its record.
                if let Some(record) = &new.refresh_token {
                    items.push(integrity(self.put_new(refresh_token_item(
                        record,
                        Some(&FamilyOrigin::from(&new.family)),
                    )?)?));
                }
                items.extend([
                    integrity(self.put_new(to_item(
                        &new.access_token,
                        keys::access(&new.access_token.jti),
                    )?)?),
                    // Lists the family under its (principal, client) connection, and the client
                    // among the user's connections; see revocation.rs.
                    integrity(self.put_connection_member(&new.family)?),
                ]);
                items.extend(self.put_user_connection(&new.family)?.map(integrity));
                items
            }
            FamilyWrite::Renew(renewal) => self.renewal_items(renewal)?,
            FamilyWrite::Revoke { id, now } => vec![(self.revoke_live_family(id, *now)?, true)],
            FamilyWrite::PutAccessToken(record) => {
                let put = Put::builder()
                    .table_name(&self.table)
                    .set_item(Some(to_item(record, keys::access(&record.jti))?))
                    .build()
                    .map_err(build_error)?;
                vec![integrity(TransactWriteItem::builder().put(put).build())]
            }
        })
    }

    fn renewal_items(&self, renewal: &Renewal) -> StoreResult<Vec<BatchItem>> {
        let (pk, sk) = keys::family(&renewal.family_id);
        let family = Update::builder()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .update_expression("SET expires_at = :expires_at")
            .condition_expression(
                "current_token = :presented AND attribute_not_exists(revoked_at) \
                 AND expires_at > :now",
            )
            .expression_attribute_values(":expires_at", n(renewal.expires_at))
            .expression_attribute_values(":presented", s(renewal.presented.to_hex()))
            .expression_attribute_values(":now", n(renewal.now))
            .build()
            .map_err(build_error)?;
        let mut items = vec![
            (TransactWriteItem::builder().update(family).build(), true),
            (
                self.put_new(to_item(
                    &renewal.access_token,
                    keys::access(&renewal.access_token.jti),
                )?)?,
                false,
            ),
        ];
        if renewal.renews_record {
            let (pk, sk) = keys::refresh(&renewal.presented);
            let token = Update::builder()
                .table_name(&self.table)
                .set_key(Some(key(pk, sk)))
                .update_expression("SET expires_at = :expires_at")
                .condition_expression("attribute_exists(pk)")
                .expression_attribute_values(":expires_at", n(renewal.expires_at))
                .build()
                .map_err(build_error)?;
            items.push((TransactWriteItem::builder().update(token).build(), false));
        }
        Ok(items)
    }

    /// Revokes the family unless it is already: `false` if there is no such family.
    pub(super) async fn mark_family_revoked(
        &self,
        id: &FamilyId,
        now: UnixTime,
    ) -> StoreResult<bool> {
        let (pk, sk) = keys::family(id);
        // `if_not_exists` keeps the first revocation time, so revoking again changes nothing.
        let update = self
            .update_item((pk, sk))
            .update_expression("SET revoked_at = if_not_exists(revoked_at, :now)")
            .condition_expression("attribute_exists(pk)")
            .expression_attribute_values(":now", n(now));
        update_if("RevokeFamily", update).await
    }

    /// A transaction's revocation of a family that exists and is not revoked yet: its condition
    /// failing means this write revokes nothing.
    pub(super) fn revoke_live_family(
        &self,
        id: &FamilyId,
        now: UnixTime,
    ) -> StoreResult<TransactWriteItem> {
        self.revoke_family_if(id, None, now)
    }

    /// [`Self::revoke_live_family`], on condition that the family was created at or before
    /// `started_by`.
    pub(super) fn revoke_live_family_started_by(
        &self,
        id: &FamilyId,
        started_by: UnixTime,
        now: UnixTime,
    ) -> StoreResult<TransactWriteItem> {
        self.revoke_family_if(id, Some(started_by), now)
    }

    fn revoke_family_if(
        &self,
        id: &FamilyId,
        started_by: Option<UnixTime>,
        now: UnixTime,
    ) -> StoreResult<TransactWriteItem> {
        let (pk, sk) = keys::family(id);
        let live = "attribute_exists(pk) AND attribute_not_exists(revoked_at)";
        let update = Update::builder()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .update_expression("SET revoked_at = :now")
            .expression_attribute_values(":now", n(now));
        let update = match started_by {
            None => update.condition_expression(live),
            Some(started_by) => update
                .condition_expression(format!("{live} AND created_at <= :started_by"))
                .expression_attribute_values(":started_by", n(started_by)),
        };
        let update = update.build().map_err(build_error)?;
        Ok(TransactWriteItem::builder().update(update).build())
    }
}
