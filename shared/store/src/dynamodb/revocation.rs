//! Access-token and connection revocation on DynamoDB.
//!
//! "Every family of a principal with a client" is answered without a secondary index: each
//! family, in its creation transaction, also writes a connection item
//! (`pk = CONNECTION#<principal>#<client>`, `sk = FAMILY#<id>`, see [`keys::connection`]), so one
//! `Query` on that partition lists them. The connection item has no TTL (a family's expiry moves
//! with every rotation, which would have to move it too); revoking a connection gives its items
//! one, so the TTL removes them. Connection items of families that simply expire stay until their
//! connection is revoked (about 100 bytes each).
//!
//! A user's family also writes (overwrites) the item `pk = CONNECTION#<user>`,
//! `sk = CLIENT#<client>` ([`keys::user_connection`]): one `Query` lists the clients whose
//! connection partitions the account page then reads. It has no TTL either; a client whose
//! families are all dead is simply not listed.

use async_trait::async_trait;
use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem};
use serde::{Deserialize, Serialize};

use aws_sdk_dynamodb::types::{Put, Update};

use super::codec::{from_item, key, keys, n, to_item};
use super::errors::build_error;
use super::requests::{update_if, Transaction};
use super::DynamoStore;
use crate::clock::UnixTime;
use crate::domain::audit::AuditEvent;
use crate::domain::{ClientId, Family, FamilyId, PrincipalId, PrincipalType, TokenId};
use crate::{
    AuditFor, Connection, FamilyStore, RevocationStore, StoreError, StoreResult, TokenRevoked,
};

/// An access token that exists, is unexpired and is not marked revoked yet.
const UNMARKED: &str =
    "attribute_exists(pk) AND expires_at > :now AND (attribute_not_exists(revoked) OR revoked = :unmarked)";

/// One client of a user's connections.
#[derive(Serialize, Deserialize)]
struct UserConnection {
    client_id: ClientId,
}

/// One family of a (principal, client) connection.
#[derive(Serialize, Deserialize)]
struct ConnectionMember {
    family_id: FamilyId,
}

impl DynamoStore {
    /// The connection item written with `family` (see the module documentation).
    pub(super) fn put_connection_member(&self, family: &Family) -> StoreResult<TransactWriteItem> {
        let member = ConnectionMember {
            family_id: family.id,
        };
        self.put_new(to_item(
            &member,
            keys::connection(&family.principal_id, &family.client_id, &family.id),
        )?)
    }

    /// The user-connection item written with a user's `family`; none for other principals.
    pub(super) fn put_user_connection(
        &self,
        family: &Family,
    ) -> StoreResult<Option<TransactWriteItem>> {
        if family.principal_type != PrincipalType::User {
            return Ok(None);
        }
        let item = UserConnection {
            client_id: family.client_id,
        };
        let put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(to_item(
                &item,
                keys::user_connection(&family.principal_id, &family.client_id),
            )?))
            .build()
            .map_err(build_error)?;
        Ok(Some(TransactWriteItem::builder().put(put).build()))
    }

    async fn connection_members(
        &self,
        principal: &PrincipalId,
        client: &ClientId,
    ) -> StoreResult<Vec<FamilyId>> {
        let pk = keys::connection_partition(principal, client);
        self.partition("QueryConnection", pk)
            .await?
            .into_iter()
            .map(|item| Ok(from_item::<ConnectionMember>(item)?.family_id))
            .collect()
    }

    /// Revoked, expired or deleted: nothing a later revocation could still reach.
    async fn is_dead(&self, family_id: &FamilyId, now: UnixTime) -> StoreResult<bool> {
        Ok(self
            .get_family(family_id, now)
            .await?
            .is_none_or(|family| family.revoked_at.is_some()))
    }
}

#[async_trait]
impl RevocationStore for DynamoStore {
    async fn revoke_access_token_recorded(
        &self,
        jti: &TokenId,
        now: UnixTime,
        audit: &[AuditEvent],
    ) -> StoreResult<TokenRevoked> {
        let (pk, sk) = keys::access(jti);
        // First the write that only a live, unmarked token takes, with its events: one
        // `UpdateItem` without them, a transaction with them.
        let first = if audit.is_empty() {
            let update = self
                .update_item((pk.clone(), sk))
                .update_expression("SET revoked = :revoked")
                .condition_expression(UNMARKED)
                .expression_attribute_values(":revoked", AttributeValue::Bool(true))
                .expression_attribute_values(":unmarked", AttributeValue::Bool(false))
                .expression_attribute_values(":now", n(now));
            update_if("RevokeAccessToken", update).await?
        } else {
            let update = Update::builder()
                .table_name(&self.table)
                .set_key(Some(key(pk.clone(), sk)))
                .update_expression("SET revoked = :revoked")
                .condition_expression(UNMARKED)
                .expression_attribute_values(":revoked", AttributeValue::Bool(true))
                .expression_attribute_values(":unmarked", AttributeValue::Bool(false))
                .expression_attribute_values(":now", n(now))
                .build()
                .map_err(build_error)?;
            let mut items = vec![TransactWriteItem::builder().update(update).build()];
            items.extend(self.audit_puts(audit)?);
            match self.transact("RevokeAccessToken", items).await? {
                Transaction::Committed => true,
                Transaction::ConditionsFailed(failed) if failed.contains(&0) => false,
                Transaction::ConditionsFailed(failed) => {
                    return Err(StoreError::internal(format!(
                        "RevokeAccessToken: audit item(s) {failed:?} already taken"
                    )))
                }
            }
        };
        if first {
            return Ok(TokenRevoked::Revoked);
        }
        // Marked before, or no such unexpired token: this check tells which.
        let present = self
            .update_item((pk, sk))
            .update_expression("SET revoked = :revoked")
            .condition_expression("attribute_exists(pk) AND expires_at > :now")
            .expression_attribute_values(":revoked", AttributeValue::Bool(true))
            .expression_attribute_values(":now", n(now));
        Ok(if update_if("RevokeAccessToken", present).await? {
            TokenRevoked::AlreadyRevoked
        } else {
            TokenRevoked::NotFound
        })
    }

    async fn revoke_connection_started_by(
        &self,
        principal: &PrincipalId,
        client: &ClientId,
        started_by: UnixTime,
        now: UnixTime,
        audit: Option<AuditFor<'_>>,
    ) -> StoreResult<Vec<FamilyId>> {
        let mut revoked = Vec::new();
        for family_id in self.connection_members(principal, client).await? {
            // The family is dead for good once this is done (revoked, or already deleted by its
            // TTL), so its connection item may go: DynamoDB's TTL deletes it, which needs no
            // DeleteItem permission.
            let (pk, sk) = keys::connection(principal, client, &family_id);
            let expire = Update::builder()
                .table_name(&self.table)
                .set_key(Some(key(pk, sk)))
                .update_expression("SET expires_at = :now")
                .condition_expression("attribute_exists(pk)")
                .expression_attribute_values(":now", n(now))
                .build()
                .map_err(build_error)?;
            let expire = TransactWriteItem::builder().update(expire).build();
            // A live family started in time: its revocation, the listing's expiry and its event
            // in one write.
            let revoke = self.revoke_live_family_started_by(&family_id, started_by, now)?;
            let mut items = vec![revoke, expire.clone()];
            if let Some(audit) = audit {
                items.extend(self.audit_puts(&[audit(family_id)])?);
            }
            match self.transact("RevokeConnectionFamily", items).await? {
                Transaction::Committed => revoked.push(family_id),
                // Already revoked or gone (the listing is left to expire), or started later
                // (it stays listed).
                Transaction::ConditionsFailed(failed) if failed == [0] => {
                    if self.is_dead(&family_id, now).await? {
                        self.transact("ExpireConnectionMember", vec![expire])
                            .await?;
                    }
                }
                Transaction::ConditionsFailed(failed) => {
                    return Err(StoreError::internal(format!(
                        "RevokeConnectionFamily: condition failed on item(s) {failed:?}"
                    )))
                }
            }
        }
        Ok(revoked)
    }

    async fn user_connections(
        &self,
        user: &PrincipalId,
        now: UnixTime,
    ) -> StoreResult<Vec<Connection>> {
        let clients = self
            .partition(
                "QueryUserConnections",
                keys::user_connections_partition(user),
            )
            .await?
            .into_iter()
            .map(|item| Ok(from_item::<UserConnection>(item)?.client_id))
            .collect::<StoreResult<Vec<_>>>()?;
        let mut families = Vec::new();
        for client in clients {
            for family_id in self.connection_members(user, &client).await? {
                families.extend(self.get_family(&family_id, now).await?);
            }
        }
        Ok(Connection::of_live(user, &families, now))
    }
}
