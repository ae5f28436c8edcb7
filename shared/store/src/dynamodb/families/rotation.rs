//! A rotation on DynamoDB (docs/decisions.md, "What a refresh writes"): one conditional
//! `UpdateItem` of the family decides it, alone, at one write unit; the access token's `jti` and
//! the events are written after it, each as a single-item put. A transaction of them all would
//! cost two units per item. The successor has no record: it names its family, whose item is its
//! record ([`crate::domain::RefreshTokenName`]).
//!
//! What a failure after the decisive write leaves unwritten, the client's retry makes good
//! ([`BatchWrites::complete_rotation`](crate::BatchWrites::complete_rotation)): the events' ids
//! are derived from the rotation, so the retry writes the same records, each only if absent.

use aws_sdk_dynamodb::operation::update_item::builders::UpdateItemFluentBuilder;
use futures::future::try_join_all;

use super::super::audit::audit_items;
use super::super::codec::{keys, n, s, to_item, Item, PK, SK};
use super::super::requests::update_if;
use super::super::DynamoStore;
use crate::domain::audit::AuditEvent;
use crate::domain::Family;
use crate::{Failure, Rotation, StoreError, StoreResult};

impl DynamoStore {
    pub(in super::super) async fn rotate_family(
        &self,
        rotation: &Rotation,
        events: &[AuditEvent],
    ) -> StoreResult<bool> {
        let landed = match update_if("RotateRefreshToken", self.rotation_update(rotation)).await {
            Ok(landed) => landed,
            Err(StoreError::Unavailable(reason)) => {
                self.read_back_rotation(rotation, reason).await?
            }
            Err(other) => return Err(other),
        };
        if landed {
            let access = to_item(
                &rotation.access_token,
                keys::access(&rotation.access_token.jti),
            )?;
            let puts = events
                .iter()
                .flat_map(audit_items)
                .map(|item| self.put_if_absent("RotateRefreshToken", item));
            let access = self.put("RotateRefreshToken", access);
            futures::try_join!(access, try_join_all(puts))?;
        }
        Ok(landed)
    }

    /// The compare-and-swap on `current_token` guarantees at most one successor per refresh
    /// token: of concurrent rotations only one sees its condition hold.
    fn rotation_update(&self, rotation: &Rotation) -> UpdateItemFluentBuilder {
        let successor = &rotation.successor;
        // The successor's DPoP binding, and from which generation the family is bound: a named
        // token has no record to keep its own.
        let (bind, unbind) = match &successor.jkt {
            Some(_) => (
                ", current_jkt = :jkt, bound_from = if_not_exists(bound_from, :generation)",
                "",
            ),
            None => ("", " REMOVE current_jkt"),
        };
        let set = format!(
            "SET current_token = :next, generation = :generation, expires_at = :expires_at, \
             rotated_at = :now, rotated_by = :jti{bind}{unbind}"
        );
        let mut update = self
            .update_item(keys::family(&rotation.family_id))
            .update_expression(set)
            .condition_expression(
                "current_token = :presented AND attribute_not_exists(revoked_at) \
                 AND expires_at > :now",
            )
            .expression_attribute_values(":next", s(successor.token_hash.to_hex()))
            .expression_attribute_values(":generation", n(successor.generation))
            .expression_attribute_values(":expires_at", n(successor.expires_at))
            .expression_attribute_values(":jti", s(rotation.access_token.jti.to_string()))
            .expression_attribute_values(":presented", s(rotation.presented.to_hex()))
            .expression_attribute_values(":now", n(rotation.now));
        if let Some(jkt) = &successor.jkt {
            update = update.expression_attribute_values(":jkt", s(jkt.clone()));
        }
        update
    }

    /// Resolves a rotation whose outcome is unknown by reading the family back (`true`: it
    /// landed): the successor is derived, so whether it is current is a comparison, and the
    /// access token's `jti` the rotation recorded tells this request's rotation from a concurrent
    /// one's (which is a refusal: the caller reads again and answers as a retry). Still the
    /// presented token: nothing landed, and the caller's 503 invites a retry, which is safe.
    async fn read_back_rotation(&self, rotation: &Rotation, reason: Failure) -> StoreResult<bool> {
        let family = self
            .get::<Family>(
                "RotateRefreshTokenReadBack",
                keys::family(&rotation.family_id),
            )
            .await?;
        match family {
            Some(family) if family.current_token == rotation.successor.token_hash => {
                let ours = family.rotated_by == Some(rotation.access_token.jti);
                tracing::info!(family_id = %rotation.family_id, ours, "ambiguous rotation resolved");
                Ok(ours)
            }
            Some(family)
                if family.current_token == rotation.presented && family.revoked_at.is_none() =>
            {
                Err(StoreError::Unavailable(reason))
            }
            _ => Ok(false),
        }
    }

    pub(in super::super) async fn complete_family_rotation(
        &self,
        family: &Family,
        events: &[AuditEvent],
    ) -> StoreResult<bool> {
        // Rotations made in one transaction (before the family recorded its rotation time)
        // cannot be incomplete.
        if family.rotated_at.is_none() {
            return Ok(false);
        }
        let items = events.iter().flat_map(audit_items);
        let written =
            try_join_all(items.map(|item| self.put_unless_present("CompleteRotation", item)))
                .await?;
        let missing = written.iter().any(|put| *put);
        if missing {
            tracing::warn!(family_id = %family.id, "rotation completed by a retry");
        }
        Ok(missing)
    }

    /// [`Self::put_if_absent`] after a read: every retry of a rotation checks its completion,
    /// and a read of a present item costs less than a conditional put that finds it (a refused
    /// condition is charged its write units).
    async fn put_unless_present(&self, op: &str, item: Item) -> StoreResult<bool> {
        let (Some(pk), Some(sk)) = (item.get(PK).cloned(), item.get(SK).cloned()) else {
            return Err(StoreError::internal(format!(
                "{op}: an item without its key"
            )));
        };
        let key = Item::from([(PK.to_owned(), pk), (SK.to_owned(), sk)]);
        if self.get_item(op, key).await?.is_some() {
            return Ok(false);
        }
        self.put_if_absent(op, item).await
    }

    /// A put on condition that the item is absent: `false` if it was there (nothing written).
    async fn put_if_absent(&self, op: &str, item: Item) -> StoreResult<bool> {
        let put = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(pk)");
        match put.send().await {
            Ok(_) => Ok(true),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
            {
                Ok(false)
            }
            Err(e) => Err(super::super::errors::store_error(op, e)),
        }
    }
}
