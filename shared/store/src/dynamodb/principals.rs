//! Users (with their login items), companies and company-client enablement on DynamoDB.

use async_trait::async_trait;

use super::DynamoStore;
use aws_sdk_dynamodb::types::{Delete, Put, TransactWriteItem};

use super::codec::{key, keys, s, to_item, LoginOwner};
use super::errors::build_error;
use super::requests::Transaction;
use crate::domain::{ChannelHandle, ClientId, Company, Login, PrincipalId, User};
use crate::secrets::TokenHash;
use crate::{EmailUpdate, ExternalIdUpdate, Inserted, PrincipalStore, StoreError, StoreResult};

/// The key of an address's uniqueness item: the hash of the lower-cased address (the same key
/// one-time passwords use), so the table holds no address in a key.
pub(super) fn email_key(address: &str) -> (String, &'static str) {
    keys::email(&TokenHash::of(&address.to_lowercase()))
}

/// Whether `user` holds `address`, compared as the uniqueness item keys it.
fn holds(user: &User, address: &str) -> bool {
    user.email
        .as_deref()
        .is_some_and(|email| email.to_lowercase() == address.to_lowercase())
}

/// The key of an external id's uniqueness item in the company.
fn external_id_key(company: &PrincipalId, value: &str) -> (String, &'static str) {
    keys::external_id(company, &TokenHash::of(value))
}

/// The user's external id's uniqueness item, when it has one (only a company's user can).
pub(super) fn own_external_id_key(user: &User) -> Option<(String, &'static str)> {
    let company = user.company_id.as_ref()?;
    Some(external_id_key(company, user.external_id.as_deref()?))
}

/// The condition that the stored user's `external_id` is `value` (absent for `None`), and its
/// value for `:name`.
fn same_external_id(value: Option<&str>, name: &str) -> (String, Option<(String, String)>) {
    match value {
        Some(value) => (
            format!("external_id = {name}"),
            Some((name.to_owned(), value.to_owned())),
        ),
        None => ("attribute_not_exists(external_id)".to_owned(), None),
    }
}

impl DynamoStore {
    /// The user a uniqueness item (login or address) names, if `still_holds` it: the item and
    /// the user are two reads, and the user may have changed in between.
    async fn user_owning(
        &self,
        op: &str,
        uniqueness_key: (String, &'static str),
        still_holds: impl FnOnce(&User) -> bool,
    ) -> StoreResult<Option<User>> {
        let Some(owner) = self.get::<LoginOwner>(op, uniqueness_key).await? else {
            return Ok(None);
        };
        let user = match owner.user {
            Some(copy) => Some(copy),
            None => self.get_user(&owner.user_id).await?,
        };
        Ok(user.filter(still_holds))
    }

    /// Puts a uniqueness item (login or address) unless another user holds it.
    pub(super) fn put_owned_by(
        &self,
        owner: &LoginOwner,
        item_key: (String, &'static str),
    ) -> StoreResult<TransactWriteItem> {
        let put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(to_item(owner, item_key)?))
            .condition_expression("attribute_not_exists(pk) OR user_id = :id")
            .expression_attribute_values(":id", s(owner.user_id.to_string()))
            .build()
            .map_err(build_error)?;
        Ok(TransactWriteItem::builder().put(put).build())
    }
}

#[async_trait]
impl PrincipalStore for DynamoStore {
    async fn insert_user(&self, user: &User) -> StoreResult<Inserted> {
        // The address's item has the login item's shape: which user holds it.
        let mut items = vec![
            self.put_new(to_item(user, keys::user(&user.id))?)?,
            self.put_new(to_item(
                &LoginOwner::copy_of(user),
                keys::login(&user.login),
            )?)?,
        ];
        if let Some(email) = &user.email {
            items.push(self.put_new(to_item(&LoginOwner::id_of(user), email_key(email))?)?);
        }
        if let Some(external_id) = own_external_id_key(user) {
            items.push(self.put_new(to_item(&LoginOwner::id_of(user), external_id)?)?);
        }
        if let Some(company) = &user.company_id {
            items.extend(self.directory_copy(user)?);
            items.push(self.count_users(company, 1)?);
        }
        match self.transact("InsertUser", items).await? {
            Transaction::Committed => Ok(Inserted::Inserted),
            Transaction::ConditionsFailed(_) => Ok(Inserted::AlreadyExists),
        }
    }

    async fn put_user(&self, user: &User) -> StoreResult<()> {
        // Written with its login item (and its address's), so a replaced user is still found by
        // login; the conditions refuse a changed login or address, or one that belongs to
        // someone else.
        let same_email = match &user.email {
            Some(_) => "email = :email",
            None => "attribute_not_exists(email)",
        };
        let (same_external_id, external_id_value) =
            same_external_id(user.external_id.as_deref(), ":external_id");
        let mut user_put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(to_item(user, keys::user(&user.id))?))
            .condition_expression(format!(
                "attribute_not_exists(pk) OR (login = :login AND {same_email} AND \
                 {same_external_id})"
            ))
            .expression_attribute_values(":login", s(user.login.as_str()));
        if let Some(email) = &user.email {
            user_put = user_put.expression_attribute_values(":email", s(email.as_str()));
        }
        if let Some((name, value)) = external_id_value {
            user_put = user_put.expression_attribute_values(name, s(value));
        }
        let user_put = user_put.build().map_err(build_error)?;
        let mut items = vec![
            TransactWriteItem::builder().put(user_put).build(),
            self.put_owned_by(&LoginOwner::copy_of(user), keys::login(&user.login))?,
        ];
        if let Some(email) = &user.email {
            items.push(self.put_owned_by(&LoginOwner::id_of(user), email_key(email))?);
        }
        if let Some(external_id) = own_external_id_key(user) {
            items.push(self.put_owned_by(&LoginOwner::id_of(user), external_id)?);
        }
        items.extend(self.directory_copy(user)?);
        match self.transact("PutUser", items).await? {
            Transaction::Committed => Ok(()),
            Transaction::ConditionsFailed(_) => Err(StoreError::internal(
                "PutUser: a user's login, address or external id cannot change, nor take \
                 another user's"
                    .to_owned(),
            )),
        }
    }

    async fn get_user(&self, id: &PrincipalId) -> StoreResult<Option<User>> {
        self.get("GetUser", keys::user(id)).await
    }

    async fn get_user_by_login(&self, login: &Login) -> StoreResult<Option<User>> {
        self.user_owning("GetUserByLogin", keys::login(login), |user| {
            &user.login == login
        })
        .await
    }

    async fn get_user_by_email(&self, address: &ChannelHandle) -> StoreResult<Option<User>> {
        self.user_owning("GetUserByEmail", email_key(address.as_str()), |user| {
            holds(user, address.as_str())
        })
        .await
    }

    async fn set_user_email(
        &self,
        id: &PrincipalId,
        address: &ChannelHandle,
    ) -> StoreResult<EmailUpdate> {
        let Some(mut user) = self.get_user(id).await? else {
            return Ok(EmailUpdate::UnknownUser);
        };
        let previous = user.email.replace(address.as_str().to_owned());
        // One transaction: the user item (unless it changed since it was read), the new
        // address's item (unless another user holds it), and the release of the old address.
        let same_email = match &previous {
            Some(_) => "email = :previous",
            None => "attribute_not_exists(email)",
        };
        let mut user_put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(to_item(&user, keys::user(id))?))
            .condition_expression(format!("login = :login AND {same_email}"))
            .expression_attribute_values(":login", s(user.login.as_str()));
        if let Some(email) = &previous {
            user_put = user_put.expression_attribute_values(":previous", s(email.as_str()));
        }
        let user_put = user_put.build().map_err(build_error)?;
        let mut items = vec![
            TransactWriteItem::builder().put(user_put).build(),
            self.put_owned_by(&LoginOwner::id_of(&user), email_key(address.as_str()))?,
        ];
        let new_key = email_key(address.as_str());
        if let Some(old_key) = previous.as_deref().map(email_key).filter(|k| *k != new_key) {
            let release = Delete::builder()
                .table_name(&self.table)
                .set_key(Some(key(old_key.0, old_key.1)))
                .condition_expression("attribute_not_exists(pk) OR user_id = :id")
                .expression_attribute_values(":id", s(id.to_string()))
                .build()
                .map_err(build_error)?;
            items.push(TransactWriteItem::builder().delete(release).build());
        }
        // Last, so that the address's item stays at index 1 for the outcome below.
        items.push(self.put_owned_by(&LoginOwner::copy_of(&user), keys::login(&user.login))?);
        items.extend(self.directory_copy(&user)?);
        match self.transact("SetUserEmail", items).await? {
            Transaction::Committed => Ok(EmailUpdate::Updated),
            Transaction::ConditionsFailed(failed) if failed == [1] => Ok(EmailUpdate::Taken),
            Transaction::ConditionsFailed(_) => Err(StoreError::unavailable(
                "SetUserEmail: the user changed meanwhile; try again".to_owned(),
            )),
        }
    }

    async fn get_user_by_external_id(
        &self,
        company: &PrincipalId,
        external_id: &str,
    ) -> StoreResult<Option<User>> {
        let item = external_id_key(company, external_id);
        self.user_owning("GetUserByExternalId", item, |user| {
            user.company_id.as_ref() == Some(company)
                && user.external_id.as_deref() == Some(external_id)
        })
        .await
    }

    async fn set_user_external_id(
        &self,
        id: &PrincipalId,
        external_id: Option<&str>,
    ) -> StoreResult<ExternalIdUpdate> {
        let Some(mut user) = self.get_user(id).await? else {
            return Ok(ExternalIdUpdate::UnknownUser);
        };
        let Some(company) = user.company_id else {
            return Ok(ExternalIdUpdate::NoCompany);
        };
        let previous = std::mem::replace(&mut user.external_id, external_id.map(str::to_owned));
        // One transaction, as for an address: the user item (unless it changed since it was
        // read), the new value's item (unless another user of the company holds it), and the
        // release of the old value's.
        let (same_external_id, previous_value) = same_external_id(previous.as_deref(), ":previous");
        let mut user_put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(to_item(&user, keys::user(id))?))
            .condition_expression(format!("login = :login AND {same_external_id}"))
            .expression_attribute_values(":login", s(user.login.as_str()));
        if let Some((name, value)) = previous_value {
            user_put = user_put.expression_attribute_values(name, s(value));
        }
        let user_put = user_put.build().map_err(build_error)?;
        let mut items = vec![TransactWriteItem::builder().put(user_put).build()];
        let new_key = external_id.map(|value| external_id_key(&company, value));
        if let Some(new_key) = &new_key {
            items.push(self.put_owned_by(&LoginOwner::id_of(&user), new_key.clone())?);
        }
        let old_key = previous
            .as_deref()
            .map(|value| external_id_key(&company, value))
            .filter(|old| Some(old) != new_key.as_ref());
        if let Some(old_key) = old_key {
            let release = Delete::builder()
                .table_name(&self.table)
                .set_key(Some(key(old_key.0, old_key.1)))
                .condition_expression("attribute_not_exists(pk) OR user_id = :id")
                .expression_attribute_values(":id", s(id.to_string()))
                .build()
                .map_err(build_error)?;
            items.push(TransactWriteItem::builder().delete(release).build());
        }
        items.extend(self.directory_copy(&user)?);
        match self.transact("SetUserExternalId", items).await? {
            Transaction::Committed => Ok(ExternalIdUpdate::Updated),
            // Index 1 is the new value's item, when there is one.
            Transaction::ConditionsFailed(failed) if new_key.is_some() && failed == [1] => {
                Ok(ExternalIdUpdate::Taken)
            }
            Transaction::ConditionsFailed(_) => Err(StoreError::unavailable(
                "SetUserExternalId: the user changed meanwhile; try again".to_owned(),
            )),
        }
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
