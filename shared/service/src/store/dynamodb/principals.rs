//! Users (with their login items), companies and company-client enablement on DynamoDB.

use async_trait::async_trait;

use super::DynamoStore;
use aws_sdk_dynamodb::types::{Put, TransactWriteItem};

use super::codec::{key, keys, s, to_item, LoginOwner};
use super::errors::build_error;
use super::requests::Transaction;
use crate::domain::{ClientId, Company, Login, PrincipalId, User};
use crate::store::{Inserted, PrincipalStore, StoreError, StoreResult};

#[async_trait]
impl PrincipalStore for DynamoStore {
    async fn insert_user(&self, user: &User) -> StoreResult<Inserted> {
        let owner = LoginOwner { user_id: user.id };
        let items = vec![
            self.put_new(to_item(user, keys::user(&user.id))?)?,
            self.put_new(to_item(&owner, keys::login(&user.login))?)?,
        ];
        match self.transact("InsertUser", items).await? {
            Transaction::Committed => Ok(Inserted::Inserted),
            Transaction::ConditionsFailed(_) => Ok(Inserted::AlreadyExists),
        }
    }

    async fn put_user(&self, user: &User) -> StoreResult<()> {
        // Written with its login item, so a replaced user is still found by login; the
        // conditions refuse a changed login or one that belongs to someone else.
        let user_put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(to_item(user, keys::user(&user.id))?))
            .condition_expression("attribute_not_exists(pk) OR login = :login")
            .expression_attribute_values(":login", s(user.login.as_str()))
            .build()
            .map_err(build_error)?;
        let owner = LoginOwner { user_id: user.id };
        let login_put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(to_item(&owner, keys::login(&user.login))?))
            .condition_expression("attribute_not_exists(pk) OR user_id = :id")
            .expression_attribute_values(":id", s(user.id.to_string()))
            .build()
            .map_err(build_error)?;
        let items = vec![
            TransactWriteItem::builder().put(user_put).build(),
            TransactWriteItem::builder().put(login_put).build(),
        ];
        match self.transact("PutUser", items).await? {
            Transaction::Committed => Ok(()),
            Transaction::ConditionsFailed(_) => Err(StoreError::Internal(
                "PutUser: a user's login cannot change, nor take another user's".to_owned(),
            )),
        }
    }

    async fn get_user(&self, id: &PrincipalId) -> StoreResult<Option<User>> {
        self.get("GetUser", keys::user(id)).await
    }

    async fn get_user_by_login(&self, login: &Login) -> StoreResult<Option<User>> {
        let Some(owner) = self
            .get::<LoginOwner>("GetUserByLogin", keys::login(login))
            .await?
        else {
            return Ok(None);
        };
        Ok(self
            .get_user(&owner.user_id)
            .await?
            .filter(|user| &user.login == login))
    }

    async fn put_company(&self, company: &Company) -> StoreResult<()> {
        self.put("PutCompany", to_item(company, keys::company(&company.id))?)
            .await
    }

    async fn get_company(&self, id: &PrincipalId) -> StoreResult<Option<Company>> {
        self.get("GetCompany", keys::company(id)).await
    }

    async fn enable_company_for_client(
        &self,
        company: &PrincipalId,
        client: &ClientId,
    ) -> StoreResult<()> {
        let (pk, sk) = keys::enablement(company, client);
        let mut item = key(pk, sk);
        item.insert("company_id".to_owned(), s(company.to_string()));
        item.insert("client_id".to_owned(), s(client.to_string()));
        self.put("EnableCompanyForClient", item).await
    }

    async fn is_company_enabled_for_client(
        &self,
        company: &PrincipalId,
        client: &ClientId,
    ) -> StoreResult<bool> {
        let (pk, sk) = keys::enablement(company, client);
        Ok(self
            .get_item("IsCompanyEnabledForClient", key(pk, sk))
            .await?
            .is_some())
    }
}
