//! Company identity providers (docs/decisions.md, "Company identity providers: what is
//! stored"): the connections, found by id, by company and by a login's domain in one read each;
//! the links from upstream subjects to users, written once; and the sign-ins sent to an IdP,
//! kept under the digest of their `state` until their answer takes them once.

use async_trait::async_trait;

use super::StoreResult;
use crate::clock::UnixTime;
use crate::domain::{
    FederationLink, IdentityProvider, IdpDomain, IdpId, PendingUpstreamRequest, PrincipalId,
    UpstreamSubject,
};
use crate::secrets::TokenHash;

/// How adding an identity provider ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdpInserted {
    Inserted,
    /// An IdP with this id exists; nothing was written.
    IdTaken,
    /// Another IdP of the same company claims this domain; nothing was written.
    DomainTaken(IdpDomain),
}

/// How linking an upstream subject ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Linked {
    Linked,
    /// The subject was linked already, to the user of this link, which stays as it was.
    AlreadyLinked(FederationLink),
}

#[async_trait]
pub trait FederationStore: Send + Sync {
    /// Adds an IdP with its domain claims, all or nothing. Two IdPs of one company never claim
    /// the same domain; IdPs of different companies may.
    async fn put_identity_provider(&self, idp: &IdentityProvider) -> StoreResult<IdpInserted>;

    /// Writes `idp` over the stored IdP of its id, its company and domains unchanged (a SAML
    /// IdP's refreshed metadata), every copy of it in one write. `false` when there is none.
    async fn replace_identity_provider(&self, idp: &IdentityProvider) -> StoreResult<bool>;

    async fn get_identity_provider(&self, id: &IdpId) -> StoreResult<Option<IdentityProvider>>;

    /// The company's IdPs, oldest first.
    async fn list_identity_providers(
        &self,
        company: &PrincipalId,
    ) -> StoreResult<Vec<IdentityProvider>>;

    /// The IdPs that claim `domain`, of every company, oldest first: home-realm discovery on
    /// every sign-in, so one read.
    async fn identity_providers_for_domain(
        &self,
        domain: &IdpDomain,
    ) -> StoreResult<Vec<IdentityProvider>>;

    /// The OpenID Connect IdPs whose issuer is `issuer`, of every company, that accept identity
    /// assertions (`id_jag`), oldest first: the issuers an ID-JAG may come from, one read.
    async fn identity_providers_for_issuer(
        &self,
        issuer: &str,
    ) -> StoreResult<Vec<IdentityProvider>>;

    /// Removes the IdP, its domain claims and every link to it, and answers the IdP as it was.
    /// The links go even when the IdP is already gone, so that removing again finishes a
    /// removal that was interrupted.
    async fn delete_identity_provider(&self, id: &IdpId) -> StoreResult<Option<IdentityProvider>>;

    /// Links an upstream subject to a user, unless it is linked already (to anyone: a link
    /// never moves; remove it first).
    async fn put_federation_link(&self, link: &FederationLink) -> StoreResult<Linked>;

    async fn get_federation_link(
        &self,
        idp: &IdpId,
        subject: &UpstreamSubject,
    ) -> StoreResult<Option<FederationLink>>;

    /// The user's links, oldest first.
    async fn list_user_links(&self, user: &PrincipalId) -> StoreResult<Vec<FederationLink>>;

    /// Removes one link and answers it as it was.
    async fn delete_federation_link(
        &self,
        idp: &IdpId,
        subject: &UpstreamSubject,
    ) -> StoreResult<Option<FederationLink>>;

    /// Every link to the IdP, oldest first: whose sessions its removal ends.
    async fn list_idp_links(&self, idp: &IdpId) -> StoreResult<Vec<FederationLink>>;

    /// Removes every link to the IdP; answers how many there were.
    async fn delete_idp_links(&self, idp: &IdpId) -> StoreResult<usize>;

    /// Keeps a sign-in sent to an IdP until its `expires_at`.
    async fn put_upstream_request(&self, request: &PendingUpstreamRequest) -> StoreResult<()>;

    /// The request under `state_hash` if it is live at `now`, left in place: read before the
    /// answer is checked, taken only once everything else is done, so that a retry after a
    /// failure in between finds it still.
    async fn get_upstream_request(
        &self,
        state_hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<PendingUpstreamRequest>>;

    /// Deletes and answers the request under `state_hash` if it is live at `now`, in one
    /// conditional write: of concurrent takes, one gets it. `None` for an unknown, used or
    /// expired one.
    async fn take_upstream_request(
        &self,
        state_hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<PendingUpstreamRequest>>;
}
