//! Sign-in sessions and consents on DynamoDB, each in its principal's partition
//! (`SESSION#<principal>` / `<sid>`, `CONSENT#<principal>` / `<client>`), so that one `Query`
//! lists a user's. Every change is one conditional `UpdateItem` or `DeleteItem`: a session that
//! ended (deleted) or expired is never written back to life.

use async_trait::async_trait;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue};

use super::codec::{from_item, key, keys, n, s, to_item, PK};
use super::errors::store_error;
use super::requests::{query_items, update_if};
use super::DynamoStore;
use crate::clock::UnixTime;
use crate::domain::{ClientId, Consent, PrincipalId, SessionId, SignInSession};
use crate::{ConsentStore, SessionStore, StoreError, StoreResult};

impl DynamoStore {
    /// Every item of the partition `pk`, strongly consistent.
    pub(super) async fn partition(
        &self,
        op: &str,
        pk: String,
    ) -> StoreResult<Vec<super::codec::Item>> {
        let query = self
            .client
            .query()
            .table_name(&self.table)
            .key_condition_expression("#pk = :pk")
            .expression_attribute_names("#pk", PK)
            .expression_attribute_values(":pk", s(pk))
            .consistent_read(true);
        query_items(op, query).await
    }

    async fn delete_returning(
        &self,
        op: &str,
        (pk, sk): (String, String),
    ) -> StoreResult<Option<super::codec::Item>> {
        let out = self
            .client
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .return_values(ReturnValue::AllOld)
            .send()
            .await
            .map_err(|e| store_error(op, e))?;
        Ok(out.attributes.filter(|item| !item.is_empty()))
    }
}

fn hash_value(session: &SignInSession) -> StoreResult<AttributeValue> {
    serde_dynamo::aws_sdk_dynamodb_1::to_attribute_value(&session.cookie_hash)
        .map_err(|_| StoreError::internal("cannot encode a session's cookie hash"))
}

fn methods(session: &SignInSession) -> AttributeValue {
    AttributeValue::L(
        session
            .amr
            .iter()
            .map(|method| s(method.as_str()))
            .collect(),
    )
}

#[async_trait]
impl SessionStore for DynamoStore {
    async fn put_session(&self, session: &SignInSession) -> StoreResult<()> {
        let item = to_item(session, keys::session(&session.principal_id, &session.sid))?;
        self.client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(pk)")
            .send()
            .await
            .map_err(|e| store_error("PutSession", e))?;
        Ok(())
    }

    async fn get_session(
        &self,
        principal: &PrincipalId,
        sid: &SessionId,
        now: UnixTime,
    ) -> StoreResult<Option<SignInSession>> {
        Ok(self
            .get::<SignInSession>("GetSession", keys::session(principal, sid))
            .await?
            .filter(|session| session.is_live(now)))
    }

    async fn list_sessions(
        &self,
        principal: &PrincipalId,
        now: UnixTime,
    ) -> StoreResult<Vec<SignInSession>> {
        let items = self
            .partition("QuerySessions", keys::session_partition(principal))
            .await?;
        let mut sessions = items
            .into_iter()
            .map(from_item::<SignInSession>)
            .filter(|session| session.as_ref().map_or(true, |s| s.is_live(now)))
            .collect::<StoreResult<Vec<_>>>()?;
        sessions.sort_by(|a, b| (a.started_at, &a.sid).cmp(&(b.started_at, &b.sid)));
        Ok(sessions)
    }

    async fn touch_session(
        &self,
        principal: &PrincipalId,
        sid: &SessionId,
        last_seen: UnixTime,
        expires_at: UnixTime,
    ) -> StoreResult<bool> {
        let update = self
            .update_item(keys::session(principal, sid))
            .update_expression("SET last_seen = :seen, expires_at = :expires")
            .condition_expression(
                "attribute_exists(pk) AND expires_at > :seen AND last_seen < :seen",
            )
            .expression_attribute_values(":seen", n(last_seen))
            .expression_attribute_values(":expires", n(expires_at));
        update_if("TouchSession", update).await
    }

    async fn reauthenticate_session(
        &self,
        session: &SignInSession,
        now: UnixTime,
    ) -> StoreResult<bool> {
        let update = self
            .update_item(keys::session(&session.principal_id, &session.sid))
            .update_expression(
                "SET cookie_hash = :hash, authenticated_at = :auth, amr = :amr, \
                 last_seen = :seen, expires_at = :expires",
            )
            .condition_expression("attribute_exists(pk) AND expires_at > :now")
            .expression_attribute_values(":hash", hash_value(session)?)
            .expression_attribute_values(":auth", n(session.authenticated_at))
            .expression_attribute_values(":amr", methods(session))
            .expression_attribute_values(":seen", n(session.last_seen))
            .expression_attribute_values(":expires", n(session.expires_at))
            .expression_attribute_values(":now", n(now));
        update_if("ReauthenticateSession", update).await
    }

    async fn add_session_client(
        &self,
        principal: &PrincipalId,
        sid: &SessionId,
        client: &ClientId,
        now: UnixTime,
    ) -> StoreResult<bool> {
        let client = client.to_string();
        let update = self
            .update_item(keys::session(principal, sid))
            .update_expression("SET clients = list_append(if_not_exists(clients, :none), :new)")
            .condition_expression(
                "attribute_exists(pk) AND expires_at > :now \
                 AND (attribute_not_exists(clients) OR NOT contains(clients, :client))",
            )
            .expression_attribute_values(":none", AttributeValue::L(Vec::new()))
            .expression_attribute_values(":new", AttributeValue::L(vec![s(client.clone())]))
            .expression_attribute_values(":client", s(client))
            .expression_attribute_values(":now", n(now));
        if update_if("AddSessionClient", update).await? {
            return Ok(true);
        }
        // Already listed (nothing to write), or the session is gone.
        Ok(self.get_session(principal, sid, now).await?.is_some())
    }

    async fn delete_session(
        &self,
        principal: &PrincipalId,
        sid: &SessionId,
        now: UnixTime,
    ) -> StoreResult<Option<SignInSession>> {
        let (pk, sk) = keys::session(principal, sid);
        self.delete_returning("DeleteSession", (pk, sk))
            .await?
            .map(from_item::<SignInSession>)
            .transpose()
            .map(|session| session.filter(|session| session.is_live(now)))
    }
}

#[async_trait]
impl ConsentStore for DynamoStore {
    async fn put_consent(&self, consent: &Consent) -> StoreResult<()> {
        self.put(
            "PutConsent",
            to_item(
                consent,
                keys::consent(&consent.principal_id, &consent.client_id),
            )?,
        )
        .await
    }

    async fn get_consent(
        &self,
        principal: &PrincipalId,
        client: &ClientId,
    ) -> StoreResult<Option<Consent>> {
        self.get("GetConsent", keys::consent(principal, client))
            .await
    }

    async fn list_consents(&self, principal: &PrincipalId) -> StoreResult<Vec<Consent>> {
        self.partition("QueryConsents", keys::consent_partition(principal))
            .await?
            .into_iter()
            .map(from_item::<Consent>)
            .collect()
    }

    async fn delete_consent(
        &self,
        principal: &PrincipalId,
        client: &ClientId,
    ) -> StoreResult<bool> {
        Ok(self
            .delete_returning("DeleteConsent", keys::consent(principal, client))
            .await?
            .is_some())
    }
}
