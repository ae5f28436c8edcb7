//! Token families, refresh tokens (rotation as one transaction) and access tokens on DynamoDB.

mod rotation;

use async_trait::async_trait;

use super::DynamoStore;
use aws_sdk_dynamodb::types::{Put, TransactWriteItem, Update};
use rotation::rotation_request_token;

use super::codec::{key, keys, n, refresh_token_from_item, refresh_token_item, s, to_item};
use super::errors::build_error;
use super::requests::{update_if, Transaction};
use crate::clock::UnixTime;
use crate::domain::audit::AuditEvent;
use crate::domain::{AccessTokenRecord, Family, FamilyId, RefreshTokenRecord, TokenId};
use crate::secrets::TokenHash;
use crate::{
    FamilyCreated, FamilyOrigin, FamilyRevoked, FamilyStore, Hit, NewFamily, RateKey, RateLimit,
    RateLimitStore, RefreshTokenWithOrigin, Renewal, Renewed, Rotated, Rotation, StoreError,
    StoreResult,
};

#[async_trait]
impl FamilyStore for DynamoStore {
    async fn create_family(&self, new: NewFamily<'_>) -> StoreResult<FamilyCreated> {
        let mut common = vec![
            self.put_new(to_item(new.family, keys::family(&new.family.id))?)?,
            self.put_new(refresh_token_item(
                new.refresh_token,
                Some(&FamilyOrigin::from(new.family)),
            )?)?,
            self.put_new(to_item(
                new.access_token,
                keys::access(&new.access_token.jti),
            )?)?,
            // Lists the family under its (principal, client) connection; see revocation.rs.
            self.put_connection_member(new.family)?,
        ];
        // The family's audit event lands with it or not at all.
        common.extend(self.audit_puts(new.audit)?);
        let Some(update) = new.legacy_exchange else {
            let refund_index = common.len();
            let mut items = common.clone();
            if let Some(refund) = &new.login_refund {
                items.push(self.refund_item(refund)?);
            }
            let mut outcome = self.transact("CreateFamily", items).await?;
            if let Transaction::ConditionsFailed(failed) = &outcome {
                if new.login_refund.is_some() && failed == &[refund_index] {
                    // The attempt's window ended (or was refunded to zero): nothing to take
                    // back, the family still has to be written.
                    outcome = self.transact("CreateFamily", common).await?;
                }
            }
            return match outcome {
                Transaction::Committed => Ok(FamilyCreated::Created),
                Transaction::ConditionsFailed(_) => Err(StoreError::internal(
                    "CreateFamily: family, refresh token or access token id already taken"
                        .to_owned(),
                )),
            };
        };
        if new.login_refund.is_some() {
            return Err(StoreError::internal(
                "CreateFamily: a legacy exchange takes back no login attempt".to_owned(),
            ));
        }

        // The link moves only if it still points where the caller saw it: of two concurrent
        // exchanges of one legacy token, one wins and the other writes nothing.
        let link_index = common.len();
        let mut link = Put::builder()
            .table_name(&self.table)
            .set_item(Some(to_item(
                &update.exchange,
                keys::legacy_exchange(&update.exchange.token_hash),
            )?));
        link = match &update.previous_family {
            None => link.condition_expression("attribute_not_exists(pk)"),
            Some(previous) => link
                .condition_expression("family_id = :previous")
                .expression_attribute_values(":previous", s(previous.to_string())),
        };
        common.push(
            TransactWriteItem::builder()
                .put(link.build().map_err(build_error)?)
                .build(),
        );

        // Only a live family is revoked here, with its event: one revoked already (or gone, its
        // TTL passed) fails this item's condition, and the write is made again without both.
        let mut revoke_previous = Vec::new();
        if let Some(previous) = &update.previous_family {
            revoke_previous.push(self.revoke_live_family(previous, update.exchange.exchanged_at)?);
            revoke_previous.extend(self.audit_puts(&update.previous_revoked)?);
        }
        let revoke_index = link_index + 1;

        let revoking = !revoke_previous.is_empty();
        let mut items = common.clone();
        items.extend(revoke_previous);
        let mut outcome = self.transact("CreateFamily", items).await?;
        let mut created = if revoking {
            FamilyCreated::CreatedRevokingPrevious
        } else {
            FamilyCreated::Created
        };
        if let Transaction::ConditionsFailed(failed) = &outcome {
            if failed == &[revoke_index] {
                outcome = self.transact("CreateFamily", common).await?;
                created = FamilyCreated::Created;
            }
        }
        match outcome {
            Transaction::Committed => Ok(created),
            Transaction::ConditionsFailed(failed) if failed.contains(&link_index) => {
                Ok(FamilyCreated::LegacyExchangeRaced)
            }
            Transaction::ConditionsFailed(_) => Err(StoreError::internal(
                "CreateFamily: family, refresh token or access token id already taken".to_owned(),
            )),
        }
    }

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

    async fn rotate_refresh_token(&self, rotation: Rotation<'_>) -> StoreResult<Rotated> {
        let successor = rotation.successor;
        let (pk, sk) = keys::family(&rotation.family_id);
        // The compare-and-swap on `current_token` is what guarantees at most one successor per
        // refresh token: of concurrent rotations only one transaction can see its condition hold.
        let family = Update::builder()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .update_expression(
                "SET current_token = :next, generation = :generation, expires_at = :expires_at",
            )
            .condition_expression(
                "current_token = :presented AND attribute_not_exists(revoked_at) \
                 AND expires_at > :now",
            )
            .expression_attribute_values(":next", s(successor.token_hash.to_hex()))
            .expression_attribute_values(":generation", n(successor.generation))
            .expression_attribute_values(":expires_at", n(successor.expires_at))
            .expression_attribute_values(":presented", s(rotation.presented.to_hex()))
            .expression_attribute_values(":now", n(rotation.now))
            .build()
            .map_err(build_error)?;
        let (pk, sk) = keys::refresh(rotation.presented);
        let presented = Update::builder()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .update_expression("SET rotated_at = :now")
            .condition_expression("attribute_exists(pk)")
            .expression_attribute_values(":now", n(rotation.now))
            .build()
            .map_err(build_error)?;
        let mut items = vec![
            TransactWriteItem::builder().update(family).build(),
            TransactWriteItem::builder().update(presented).build(),
            self.put_new(refresh_token_item(successor, rotation.origin)?)?,
            self.put_new(to_item(
                rotation.access_token,
                keys::access(&rotation.access_token.jti),
            )?)?,
        ];
        items.extend(self.audit_puts(rotation.audit)?);
        let request_token = rotation_request_token(&rotation.family_id, successor.generation);
        let outcome = self
            .transact_with_request_token("RotateRefreshToken", items, Some(request_token))
            .await;
        match outcome {
            Ok(Transaction::Committed) => Ok(Rotated::Rotated),
            Ok(Transaction::ConditionsFailed(failed)) if failed.contains(&0) => {
                Ok(Rotated::NotCurrent)
            }
            Ok(Transaction::ConditionsFailed(failed)) => Err(StoreError::internal(format!(
                "RotateRefreshToken: integrity condition failed on item(s) {failed:?}"
            ))),
            // A timeout or a lost answer says nothing about whether the write landed.
            Err(StoreError::Unavailable(reason)) => {
                self.read_back_rotation(&rotation, reason).await
            }
            Err(other) => Err(other),
        }
    }

    async fn renew_refresh_token(&self, renewal: Renewal<'_>) -> StoreResult<Renewed> {
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
        let (pk, sk) = keys::refresh(renewal.presented);
        let token = Update::builder()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .update_expression("SET expires_at = :expires_at")
            .condition_expression("attribute_exists(pk)")
            .expression_attribute_values(":expires_at", n(renewal.expires_at))
            .build()
            .map_err(build_error)?;
        let mut items = vec![
            TransactWriteItem::builder().update(family).build(),
            TransactWriteItem::builder().update(token).build(),
            self.put_new(to_item(
                renewal.access_token,
                keys::access(&renewal.access_token.jti),
            )?)?,
        ];
        items.extend(self.audit_puts(renewal.audit)?);
        // Renewing is idempotent for the client (the token does not change), so an unknown
        // outcome is left to the client's retry of the same request.
        match self.transact("RenewRefreshToken", items).await? {
            Transaction::Committed => Ok(Renewed::Renewed),
            Transaction::ConditionsFailed(failed) if failed.contains(&0) => Ok(Renewed::NotCurrent),
            Transaction::ConditionsFailed(failed) => Err(StoreError::internal(format!(
                "RenewRefreshToken: integrity condition failed on item(s) {failed:?}"
            ))),
        }
    }

    async fn revoke_family(&self, id: &FamilyId, now: UnixTime) -> StoreResult<bool> {
        // One plain update where no event rides along.
        self.mark_family_revoked(id, now).await
    }

    async fn revoke_family_recorded(
        &self,
        id: &FamilyId,
        now: UnixTime,
        audit: &[AuditEvent],
    ) -> StoreResult<FamilyRevoked> {
        let mut items = vec![self.revoke_live_family(id, now)?];
        items.extend(self.audit_puts(audit)?);
        match self.transact("RevokeFamily", items).await? {
            Transaction::Committed => Ok(FamilyRevoked::Revoked),
            // Already revoked, or no such family: the plain update tells which, and keeps the
            // first revocation time; no event, since this call revoked nothing.
            Transaction::ConditionsFailed(failed) if failed.contains(&0) => {
                Ok(if self.mark_family_revoked(id, now).await? {
                    FamilyRevoked::AlreadyRevoked
                } else {
                    FamilyRevoked::NotFound
                })
            }
            Transaction::ConditionsFailed(failed) => Err(StoreError::internal(format!(
                "RevokeFamily: audit item(s) {failed:?} already taken"
            ))),
        }
    }

    async fn put_access_token(&self, record: &AccessTokenRecord) -> StoreResult<()> {
        self.put(
            "PutAccessToken",
            to_item(record, keys::access(&record.jti))?,
        )
        .await
    }

    async fn put_counted_access_token(
        &self,
        record: &AccessTokenRecord,
        key: &RateKey,
        limit: RateLimit,
        now: UnixTime,
    ) -> StoreResult<Hit> {
        let hit = RateLimitStore::count_hit(self, key, limit, now).await?;
        if let Hit::Counted { .. } = hit {
            self.put_access_token(record).await?;
        }
        Ok(hit)
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
        Ok(Some(record))
    }
}

impl DynamoStore {
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
        let (pk, sk) = keys::family(id);
        let update = Update::builder()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .update_expression("SET revoked_at = :now")
            .condition_expression("attribute_exists(pk) AND attribute_not_exists(revoked_at)")
            .expression_attribute_values(":now", n(now))
            .build()
            .map_err(build_error)?;
        Ok(TransactWriteItem::builder().update(update).build())
    }
}
