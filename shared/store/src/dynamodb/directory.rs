//! A company's directory on DynamoDB (docs/decisions.md, "SCIM provisioning: what is stored"):
//! the partition `DIRECTORY#{company}` holds the listing of its provisioning tokens, a copy of
//! each of its users (written with every write of the user), its groups and its user count, so
//! that listing a company reads that partition alone; a token is found by its digest.

use async_trait::async_trait;
use aws_sdk_dynamodb::types::{Delete, Put, TransactWriteItem, Update};

use super::codec::{from_item, key, keys, n, s, to_item, Item, LoginOwner};
use super::errors::build_error;
use super::requests::{query_items, Transaction};
use super::DynamoStore;
use crate::clock::UnixTime;
use crate::domain::{DirectoryGroup, PrincipalId, ProvisioningToken, User};
use crate::secrets::TokenHash;
use crate::{DirectoryStore, Replaced, StoreError, StoreResult, UserPage};

/// How many of a company's user copies one query page asks for: small enough that a page of
/// 200 users costs few reads, large enough that skipping is few round trips.
const USER_PAGE: i32 = 200;

impl DynamoStore {
    /// The copy of `user` in its company's directory, when it has a company.
    pub(super) fn directory_copy(&self, user: &User) -> StoreResult<Option<TransactWriteItem>> {
        let Some(company) = &user.company_id else {
            return Ok(None);
        };
        let put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(to_item(
                user,
                keys::directory_user(company, &user.id),
            )?))
            .build()
            .map_err(build_error)?;
        Ok(Some(TransactWriteItem::builder().put(put).build()))
    }

    /// The company's user count moved by `by` (one more user, or one fewer).
    pub(super) fn count_users(
        &self,
        company: &PrincipalId,
        by: i64,
    ) -> StoreResult<TransactWriteItem> {
        let (pk, sk) = keys::directory_count(company);
        let update = Update::builder()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .update_expression("ADD user_count :by")
            .expression_attribute_values(":by", n(by))
            .build()
            .map_err(build_error)?;
        Ok(TransactWriteItem::builder().update(update).build())
    }

    /// A delete of a uniqueness item (login, address, external id) that `user` holds; an item
    /// already gone is no failure.
    fn release(
        &self,
        user: &User,
        item_key: (String, &'static str),
    ) -> StoreResult<TransactWriteItem> {
        let delete = Delete::builder()
            .table_name(&self.table)
            .set_key(Some(key(item_key.0, item_key.1)))
            .condition_expression("attribute_not_exists(pk) OR user_id = :id")
            .expression_attribute_values(":id", s(user.id.to_string()))
            .build()
            .map_err(build_error)?;
        Ok(TransactWriteItem::builder().delete(delete).build())
    }

    /// The user item's condition that it is still the revision `user` has.
    fn at_revision(
        user: &User,
    ) -> (
        String,
        Option<(&'static str, aws_sdk_dynamodb::types::AttributeValue)>,
    ) {
        if user.revision == 0 {
            (
                "attribute_exists(pk) AND attribute_not_exists(revision)".to_owned(),
                None,
            )
        } else {
            (
                "revision = :revision".to_owned(),
                Some((":revision", n(user.revision))),
            )
        }
    }

    /// The uniqueness items `user` holds: login (with the copy), address, external id.
    fn uniqueness_items(user: &User) -> Vec<((String, &'static str), LoginOwner)> {
        let mut items = vec![(keys::login(&user.login), LoginOwner::copy_of(user))];
        if let Some(email) = &user.email {
            items.push((super::principals::email_key(email), LoginOwner::id_of(user)));
        }
        if let Some(external_id) = super::principals::own_external_id_key(user) {
            items.push((external_id, LoginOwner::id_of(user)));
        }
        items
    }
}

#[async_trait]
impl DirectoryStore for DynamoStore {
    async fn insert_provisioning_token(&self, token: &ProvisioningToken) -> StoreResult<()> {
        let items = vec![
            self.put_new(to_item(token, keys::provisioning_token(&token.token_hash))?)?,
            self.put_new(to_item(
                token,
                keys::directory_token(&token.company_id, &token.id),
            )?)?,
        ];
        match self.transact("InsertProvisioningToken", items).await? {
            Transaction::Committed => Ok(()),
            Transaction::ConditionsFailed(_) => Err(StoreError::internal(
                "InsertProvisioningToken: the token exists".to_owned(),
            )),
        }
    }

    async fn get_provisioning_token(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<ProvisioningToken>> {
        let token: Option<ProvisioningToken> = self
            .get("GetProvisioningToken", keys::provisioning_token(hash))
            .await?;
        Ok(token.filter(|token| token.is_live(now)))
    }

    async fn list_provisioning_tokens(
        &self,
        company: &PrincipalId,
    ) -> StoreResult<Vec<ProvisioningToken>> {
        let query = self
            .client
            .query()
            .table_name(&self.table)
            .consistent_read(true)
            .key_condition_expression("pk = :pk AND begins_with(sk, :prefix)")
            .expression_attribute_values(":pk", s(keys::directory_partition(company)))
            .expression_attribute_values(":prefix", s("TOKEN#"));
        let mut tokens: Vec<ProvisioningToken> = query_items("ListProvisioningTokens", query)
            .await?
            .into_iter()
            .map(from_item)
            .collect::<StoreResult<_>>()?;
        tokens.sort_by_key(|token| (token.created_at, token.id));
        Ok(tokens)
    }

    async fn delete_provisioning_token(
        &self,
        company: &PrincipalId,
        id: &uuid::Uuid,
    ) -> StoreResult<bool> {
        let listed: Option<ProvisioningToken> = self
            .get("GetProvisioningToken", keys::directory_token(company, id))
            .await?;
        let Some(token) = listed else {
            return Ok(false);
        };
        let delete = |(pk, sk): (String, String)| -> StoreResult<TransactWriteItem> {
            let delete = Delete::builder()
                .table_name(&self.table)
                .set_key(Some(key(pk, sk)))
                .build()
                .map_err(build_error)?;
            Ok(TransactWriteItem::builder().delete(delete).build())
        };
        let (pk, sk) = keys::provisioning_token(&token.token_hash);
        let items = vec![
            delete((pk, sk.to_owned()))?,
            delete(keys::directory_token(company, id))?,
        ];
        self.transact("DeleteProvisioningToken", items).await?;
        Ok(true)
    }

    async fn replace_user(&self, previous: &User, next: &User) -> StoreResult<Replaced> {
        let (condition, revision) = Self::at_revision(previous);
        let mut user_put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(to_item(next, keys::user(&next.id))?))
            .condition_expression(condition);
        if let Some((name, value)) = revision {
            user_put = user_put.expression_attribute_values(name, value);
        }
        let mut items = vec![TransactWriteItem::builder()
            .put(user_put.build().map_err(build_error)?)
            .build()];
        // Index 1.. : the new uniqueness items (their conditions say whether one is taken),
        // then the releases of those the user no longer holds.
        let kept = Self::uniqueness_items(next);
        for (item_key, owner) in &kept {
            items.push(self.put_owned_by(owner, item_key.clone())?);
        }
        let claims = items.len();
        for (item_key, _) in Self::uniqueness_items(previous) {
            if !kept.iter().any(|(kept_key, _)| *kept_key == item_key) {
                items.push(self.release(previous, item_key)?);
            }
        }
        items.extend(self.directory_copy(next)?);
        match self.transact("ReplaceUser", items).await? {
            Transaction::Committed => Ok(Replaced::Replaced),
            Transaction::ConditionsFailed(failed) if failed.contains(&0) => Ok(Replaced::Changed),
            Transaction::ConditionsFailed(failed) if failed.iter().all(|i| *i < claims) => {
                Ok(Replaced::Taken)
            }
            Transaction::ConditionsFailed(_) => Ok(Replaced::Changed),
        }
    }

    async fn delete_user(&self, user: &User) -> StoreResult<Replaced> {
        let (condition, revision) = Self::at_revision(user);
        let (pk, sk) = keys::user(&user.id);
        let mut user_delete = Delete::builder()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .condition_expression(condition);
        if let Some((name, value)) = revision {
            user_delete = user_delete.expression_attribute_values(name, value);
        }
        let mut items = vec![TransactWriteItem::builder()
            .delete(user_delete.build().map_err(build_error)?)
            .build()];
        for (item_key, _) in Self::uniqueness_items(user) {
            items.push(self.release(user, item_key)?);
        }
        if let Some(company) = &user.company_id {
            let (pk, sk) = keys::directory_user(company, &user.id);
            let delete = Delete::builder()
                .table_name(&self.table)
                .set_key(Some(key(pk, sk)))
                .build()
                .map_err(build_error)?;
            items.push(TransactWriteItem::builder().delete(delete).build());
            items.push(self.count_users(company, -1)?);
        }
        match self.transact("DeleteUser", items).await? {
            Transaction::Committed => Ok(Replaced::Replaced),
            Transaction::ConditionsFailed(_) => Ok(Replaced::Changed),
        }
    }

    async fn company_users(
        &self,
        company: &PrincipalId,
        skip: usize,
        limit: usize,
    ) -> StoreResult<UserPage> {
        #[derive(serde::Deserialize)]
        struct Count {
            #[serde(default)]
            user_count: i64,
        }
        let count: Option<Count> = self
            .get("CountCompanyUsers", keys::directory_count(company))
            .await?;
        let total = usize::try_from(count.map_or(0, |count| count.user_count)).unwrap_or(0);
        let mut users = Vec::new();
        if limit == 0 || skip >= total {
            return Ok(UserPage { users, total });
        }
        // The users before the page are read as keys only: a page deep into a large company
        // costs skip/USER_PAGE round trips, never a scan of the table.
        let query = self
            .client
            .query()
            .table_name(&self.table)
            .consistent_read(true)
            .key_condition_expression("pk = :pk AND begins_with(sk, :prefix)")
            .expression_attribute_values(":pk", s(keys::directory_partition(company)))
            .expression_attribute_values(":prefix", s(keys::prefix::USER))
            .limit(USER_PAGE);
        let mut start: Option<Item> = None;
        let mut skipped = 0;
        if skip > 0 {
            let keys_only = query.clone().projection_expression("pk, sk");
            loop {
                let page = keys_only
                    .clone()
                    .limit(
                        i32::try_from((skip - skipped).min(USER_PAGE as usize))
                            .unwrap_or(USER_PAGE),
                    )
                    .set_exclusive_start_key(start.take())
                    .send()
                    .await
                    .map_err(|e| super::errors::store_error("SkipCompanyUsers", e))?;
                skipped += page.items.as_ref().map_or(0, Vec::len);
                start = page.last_evaluated_key.filter(|key| !key.is_empty());
                if skipped >= skip || start.is_none() {
                    break;
                }
            }
            if start.is_none() {
                return Ok(UserPage { users, total });
            }
        }
        // `query_pages` starts from the first page: this one starts where the skip ended.
        loop {
            let wanted = limit - users.len();
            let page = query
                .clone()
                .limit(i32::try_from(wanted.min(USER_PAGE as usize)).unwrap_or(USER_PAGE))
                .set_exclusive_start_key(start.take())
                .send()
                .await
                .map_err(|e| super::errors::store_error("ListCompanyUsers", e))?;
            for item in page.items.unwrap_or_default() {
                users.push(from_item::<User>(item)?);
            }
            start = page.last_evaluated_key.filter(|key| !key.is_empty());
            if users.len() >= limit || start.is_none() {
                break;
            }
        }
        Ok(UserPage { users, total })
    }

    async fn company_users_after(
        &self,
        company: &PrincipalId,
        after: Option<&PrincipalId>,
        limit: usize,
    ) -> StoreResult<Vec<User>> {
        let query = self
            .client
            .query()
            .table_name(&self.table)
            .consistent_read(true)
            .key_condition_expression("pk = :pk AND begins_with(sk, :prefix)")
            .expression_attribute_values(":pk", s(keys::directory_partition(company)))
            .expression_attribute_values(":prefix", s(keys::prefix::USER));
        // The user's copy is the start key itself: no read of the users before it.
        let mut start = after.map(|id| {
            let (pk, sk) = keys::directory_user(company, id);
            key(pk, sk)
        });
        let mut users = Vec::new();
        while users.len() < limit {
            let wanted = (limit - users.len()).min(USER_PAGE as usize);
            let page = query
                .clone()
                .limit(i32::try_from(wanted).unwrap_or(USER_PAGE))
                .set_exclusive_start_key(start.take())
                .send()
                .await
                .map_err(|e| super::errors::store_error("ScanCompanyUsers", e))?;
            for item in page.items.unwrap_or_default() {
                users.push(from_item::<User>(item)?);
            }
            start = page.last_evaluated_key.filter(|key| !key.is_empty());
            if start.is_none() {
                break;
            }
        }
        Ok(users)
    }

    async fn insert_group(&self, group: &DirectoryGroup) -> StoreResult<bool> {
        let items = vec![self.put_new(to_item(
            group,
            keys::directory_group(&group.company_id, &group.id),
        )?)?];
        match self.transact("InsertGroup", items).await? {
            Transaction::Committed => Ok(true),
            Transaction::ConditionsFailed(_) => Ok(false),
        }
    }

    async fn get_group(
        &self,
        company: &PrincipalId,
        id: &uuid::Uuid,
    ) -> StoreResult<Option<DirectoryGroup>> {
        self.get("GetGroup", keys::directory_group(company, id))
            .await
    }

    async fn replace_group(
        &self,
        previous: &DirectoryGroup,
        next: &DirectoryGroup,
    ) -> StoreResult<Replaced> {
        let put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(to_item(
                next,
                keys::directory_group(&next.company_id, &next.id),
            )?))
            .condition_expression("revision = :revision")
            .expression_attribute_values(":revision", n(previous.revision))
            .build()
            .map_err(build_error)?;
        let items = vec![TransactWriteItem::builder().put(put).build()];
        match self.transact("ReplaceGroup", items).await? {
            Transaction::Committed => Ok(Replaced::Replaced),
            Transaction::ConditionsFailed(_) => Ok(Replaced::Changed),
        }
    }

    async fn delete_group(&self, group: &DirectoryGroup) -> StoreResult<Replaced> {
        let (pk, sk) = keys::directory_group(&group.company_id, &group.id);
        let delete = Delete::builder()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .condition_expression("revision = :revision")
            .expression_attribute_values(":revision", n(group.revision))
            .build()
            .map_err(build_error)?;
        let items = vec![TransactWriteItem::builder().delete(delete).build()];
        match self.transact("DeleteGroup", items).await? {
            Transaction::Committed => Ok(Replaced::Replaced),
            Transaction::ConditionsFailed(_) => Ok(Replaced::Changed),
        }
    }

    async fn company_groups(&self, company: &PrincipalId) -> StoreResult<Vec<DirectoryGroup>> {
        let query = self
            .client
            .query()
            .table_name(&self.table)
            .consistent_read(true)
            .key_condition_expression("pk = :pk AND begins_with(sk, :prefix)")
            .expression_attribute_values(":pk", s(keys::directory_partition(company)))
            .expression_attribute_values(":prefix", s("GROUP#"));
        query_items("ListGroups", query)
            .await?
            .into_iter()
            .map(from_item)
            .collect()
    }
}
