//! Company identity providers on DynamoDB. An IdP is its item (`IDP#<id>`), a copy in its
//! company's partition (`COMPANYIDP#<company>` / `<id>`, the listing) and a copy per domain it
//! claims (`IDPDOMAIN#<domain>` / `<company>`), all written by one transaction whose
//! `attribute_not_exists` conditions refuse a second claim of a domain by the same company and
//! make discovery one `Query`; an OpenID Connect IdP that accepts identity assertions (ID-JAG)
//! has a copy under its issuer too (`IDPISSUER#<issuer>` / `<id>`), in the same transaction. A
//! link is its item in the IdP's partition (`FEDLINK#<idp>` / `<subject>`) and a copy in the
//! user's (`USERLINK#<user>`), written together, both only if absent, so a link never moves. A
//! pending upstream request is one item per `state` digest (`UPSTREAMREQ#<digest>`) with the TTL
//! `expires_at`, taken by one `DeleteItem` conditioned on the expiry that answers the old item.

use async_trait::async_trait;
use aws_sdk_dynamodb::types::{Delete, DeleteRequest, TransactWriteItem, WriteRequest};

use super::codec::{from_item, key, keys, n, to_item};
use super::errors::build_error;
use super::requests::{take_if, Transaction};
use super::DynamoStore;
use crate::clock::UnixTime;
use crate::domain::{
    FederationLink, IdentityProvider, IdpDomain, IdpId, IdpProtocol, PendingUpstreamRequest,
    PrincipalId, UpstreamSubject,
};
use crate::secrets::TokenHash;
use crate::{FederationStore, IdpInserted, Linked, StoreError, StoreResult};

/// Links per `BatchWriteItem`: each is two deletes, and a batch holds at most 25.
const LINKS_PER_BATCH: usize = 12;

fn sorted_idps(items: Vec<super::codec::Item>) -> StoreResult<Vec<IdentityProvider>> {
    let mut idps = items
        .into_iter()
        .map(from_item::<IdentityProvider>)
        .collect::<StoreResult<Vec<_>>>()?;
    idps.sort_by_key(|idp| (idp.created_at, idp.id));
    Ok(idps)
}

/// The issuer under which an IdP is found when an identity assertion names it: an OpenID
/// Connect IdP's, if it accepts them.
fn assertion_issuer(idp: &IdentityProvider) -> Option<&str> {
    match &idp.protocol {
        IdpProtocol::Oidc(oidc) if idp.id_jag => Some(&oidc.issuer),
        _ => None,
    }
}

impl DynamoStore {
    fn delete_in_transaction(
        &self,
        (pk, sk): (String, String),
        condition: Option<&str>,
    ) -> StoreResult<TransactWriteItem> {
        let delete = Delete::builder()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .set_condition_expression(condition.map(str::to_owned))
            .build()
            .map_err(build_error)?;
        Ok(TransactWriteItem::builder().delete(delete).build())
    }

    /// The IdP's links, from its partition (`FEDLINK#<idp>`), in the order the query gives.
    async fn idp_links(&self, idp: &IdpId) -> StoreResult<Vec<FederationLink>> {
        self.partition("QueryIdpLinks", keys::federation_link_partition(idp))
            .await?
            .into_iter()
            .map(from_item::<FederationLink>)
            .collect()
    }

    fn link_keys(link: &FederationLink) -> [(String, String); 2] {
        [
            keys::federation_link(&link.idp_id, &link.subject),
            keys::user_link(&link.user_id, &link.idp_id, &link.subject),
        ]
    }
}

#[async_trait]
impl FederationStore for DynamoStore {
    async fn put_identity_provider(&self, idp: &IdentityProvider) -> StoreResult<IdpInserted> {
        let (pk, sk) = keys::idp(&idp.id);
        let mut items = vec![
            self.put_new(to_item(idp, (pk, sk))?)?,
            self.put_new(to_item(idp, keys::company_idp(&idp.company_id, &idp.id))?)?,
        ];
        for domain in idp.domains.as_slice() {
            let claim = keys::idp_domain(domain, &idp.company_id);
            items.push(self.put_new(to_item(idp, claim)?)?);
        }
        // Last, so that the failed conditions' indexes above still name the domains.
        if let Some(issuer) = assertion_issuer(idp) {
            items.push(self.put_new(to_item(idp, keys::idp_issuer(issuer, &idp.id))?)?);
        }
        match self.transact("PutIdentityProvider", items).await? {
            Transaction::Committed => Ok(IdpInserted::Inserted),
            Transaction::ConditionsFailed(failed) => {
                let domains = idp.domains.as_slice();
                match failed.iter().find_map(|index| index.checked_sub(2)) {
                    Some(claim) if !failed.contains(&0) && claim < domains.len() => {
                        Ok(IdpInserted::DomainTaken(domains[claim].clone()))
                    }
                    _ => Ok(IdpInserted::IdTaken),
                }
            }
        }
    }

    async fn replace_identity_provider(&self, idp: &IdentityProvider) -> StoreResult<bool> {
        let mut items = vec![
            self.put_existing(to_item(idp, keys::idp(&idp.id))?)?,
            self.put_existing(to_item(idp, keys::company_idp(&idp.company_id, &idp.id))?)?,
        ];
        for domain in idp.domains.as_slice() {
            let claim = keys::idp_domain(domain, &idp.company_id);
            items.push(self.put_existing(to_item(idp, claim)?)?);
        }
        if let Some(issuer) = assertion_issuer(idp) {
            items.push(self.put_existing(to_item(idp, keys::idp_issuer(issuer, &idp.id))?)?);
        }
        Ok(matches!(
            self.transact("ReplaceIdentityProvider", items).await?,
            Transaction::Committed
        ))
    }

    async fn get_identity_provider(&self, id: &IdpId) -> StoreResult<Option<IdentityProvider>> {
        self.get("GetIdentityProvider", keys::idp(id)).await
    }

    async fn list_identity_providers(
        &self,
        company: &PrincipalId,
    ) -> StoreResult<Vec<IdentityProvider>> {
        let pk = keys::company_idps_partition(company);
        sorted_idps(self.partition("QueryCompanyIdps", pk).await?)
    }

    async fn identity_providers_for_domain(
        &self,
        domain: &IdpDomain,
    ) -> StoreResult<Vec<IdentityProvider>> {
        let pk = keys::idp_domain_partition(domain);
        sorted_idps(self.partition("QueryIdpDomain", pk).await?)
    }

    async fn identity_providers_for_issuer(
        &self,
        issuer: &str,
    ) -> StoreResult<Vec<IdentityProvider>> {
        let pk = keys::idp_issuer_partition(issuer);
        sorted_idps(self.partition("QueryIdpIssuer", pk).await?)
    }

    async fn delete_identity_provider(&self, id: &IdpId) -> StoreResult<Option<IdentityProvider>> {
        let idp: Option<IdentityProvider> = self.get_identity_provider(id).await?;
        if let Some(idp) = &idp {
            let (pk, sk) = keys::idp(id);
            let mut items = vec![
                self.delete_in_transaction((pk, sk.to_owned()), None)?,
                self.delete_in_transaction(keys::company_idp(&idp.company_id, id), None)?,
            ];
            for domain in idp.domains.as_slice() {
                let claim = keys::idp_domain(domain, &idp.company_id);
                items.push(self.delete_in_transaction(claim, None)?);
            }
            if let Some(issuer) = assertion_issuer(idp) {
                let copy = keys::idp_issuer(issuer, id);
                items.push(self.delete_in_transaction(copy, None)?);
            }
            if let Transaction::ConditionsFailed(_) =
                self.transact("DeleteIdentityProvider", items).await?
            {
                return Err(StoreError::internal(
                    "DeleteIdentityProvider: an unconditional delete failed a condition",
                ));
            }
        }
        // After the IdP, so that no sign-in starting now can add a link this misses.
        self.delete_idp_links(id).await?;
        Ok(idp)
    }

    async fn put_federation_link(&self, link: &FederationLink) -> StoreResult<Linked> {
        let [main, copy] = Self::link_keys(link);
        let items = vec![
            self.put_new(to_item(link, main.clone())?)?,
            self.put_new(to_item(link, copy)?)?,
        ];
        match self.transact("PutFederationLink", items).await? {
            Transaction::Committed => Ok(Linked::Linked),
            Transaction::ConditionsFailed(_) => self
                .get::<FederationLink>("GetFederationLink", main)
                .await?
                .map(Linked::AlreadyLinked)
                .ok_or_else(|| {
                    StoreError::unavailable(
                        "PutFederationLink: the link changed meanwhile; try again".to_owned(),
                    )
                }),
        }
    }

    async fn get_federation_link(
        &self,
        idp: &IdpId,
        subject: &UpstreamSubject,
    ) -> StoreResult<Option<FederationLink>> {
        self.get("GetFederationLink", keys::federation_link(idp, subject))
            .await
    }

    async fn list_user_links(&self, user: &PrincipalId) -> StoreResult<Vec<FederationLink>> {
        let pk = keys::user_links_partition(user);
        let mut links = self
            .partition("QueryUserLinks", pk)
            .await?
            .into_iter()
            .map(from_item::<FederationLink>)
            .collect::<StoreResult<Vec<_>>>()?;
        links.sort_by_key(|link| (link.linked_at, link.idp_id, link.subject.key()));
        Ok(links)
    }

    async fn delete_federation_link(
        &self,
        idp: &IdpId,
        subject: &UpstreamSubject,
    ) -> StoreResult<Option<FederationLink>> {
        let Some(link) = self.get_federation_link(idp, subject).await? else {
            return Ok(None);
        };
        let [main, copy] = Self::link_keys(&link);
        let items = vec![
            self.delete_in_transaction(main, Some("attribute_exists(pk)"))?,
            self.delete_in_transaction(copy, None)?,
        ];
        match self.transact("DeleteFederationLink", items).await? {
            Transaction::Committed => Ok(Some(link)),
            Transaction::ConditionsFailed(_) => Ok(None),
        }
    }

    async fn list_idp_links(&self, idp: &IdpId) -> StoreResult<Vec<FederationLink>> {
        let mut links = self.idp_links(idp).await?;
        links.sort_by_key(|link| (link.linked_at, link.subject.key()));
        Ok(links)
    }

    async fn delete_idp_links(&self, idp: &IdpId) -> StoreResult<usize> {
        let links = self.idp_links(idp).await?;
        for batch in links.chunks(LINKS_PER_BATCH) {
            let deletes = batch
                .iter()
                .flat_map(Self::link_keys)
                .map(|(pk, sk)| {
                    let delete = DeleteRequest::builder()
                        .set_key(Some(key(pk, sk)))
                        .build()
                        .map_err(build_error)?;
                    Ok(WriteRequest::builder().delete_request(delete).build())
                })
                .collect::<StoreResult<Vec<_>>>()?;
            self.write_batch(deletes).await?;
        }
        Ok(links.len())
    }

    async fn put_upstream_request(&self, request: &PendingUpstreamRequest) -> StoreResult<()> {
        let item = to_item(request, keys::upstream_request(&request.state_hash))?;
        self.put("PutUpstreamRequest", item).await
    }

    async fn get_upstream_request(
        &self,
        state_hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<PendingUpstreamRequest>> {
        let request: Option<PendingUpstreamRequest> = self
            .get("GetUpstreamRequest", keys::upstream_request(state_hash))
            .await?;
        Ok(request.filter(|request| request.expires_at > now))
    }

    async fn take_upstream_request(
        &self,
        state_hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<PendingUpstreamRequest>> {
        let (pk, sk) = keys::upstream_request(state_hash);
        let delete = self
            .client
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .condition_expression("expires_at > :now")
            .expression_attribute_values(":now", n(now));
        take_if("TakeUpstreamRequest", delete).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_users_copy_of_a_link_is_keyed_by_idp_and_subject() {
        let subject = UpstreamSubject::new("https://idp.example", "u 1").unwrap();
        let idp = IdpId::new(uuid::Uuid::nil());
        let user = PrincipalId::new(uuid::Uuid::nil());
        let (pk, sk) = keys::user_link(&user, &idp, &subject);
        assert_eq!(pk, format!("USERLINK#{user}"));
        assert_eq!(sk, format!("{idp} https://idp.example u 1"));
    }
}
