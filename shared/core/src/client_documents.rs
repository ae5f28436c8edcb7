//! Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document; docs/decisions.md,
//! "Client ID metadata documents"), when `CLIENT_ID_METADATA_DOCUMENTS=on`: a `client_id` that is
//! a URL names the JSON document at that URL, which describes the client. The document is
//! fetched through [`crate::outbound`] (https only unless `CLIENT_ID_METADATA_ALLOW_HOSTS` allows
//! the host, every resolved address checked and the connection pinned to it, no redirect, 5 s,
//! 64 KiB), checked by the domain's rules (`MetadataDocument`), and its client kept in the store
//! (`DocumentClientStore`) for as long as its `Cache-Control` allows, clamped between five
//! minutes and a day: every instance of every function then uses that one fetch.
//!
//! Whatever names the client by its URL (an authorization request, client authentication at
//! the token, introspection, revocation and PAR endpoints) gets the kept client while it is
//! fresh, and fetches the document again after. What names it by its id only (the pending
//! sign-in's cookie) gets the kept client, fresh or not, until it expires.
//!
//! Each fetch (never a kept, fresh client) is counted against the address of the request that
//! caused it (`RATE_LIMIT_DOCUMENT_FETCHES_PER_HOUR`): a request naming new URLs makes this
//! server call addresses of the caller's choosing.

use std::sync::Arc;

use crate::context::Context;
use crate::domain::audit::RequestFacts;
use crate::domain::{
    cache_lifetime, is_url_client_id, Client, ClientId, DocumentClient, DocumentRefusal,
    DocumentUrl, MetadataDocument, Scopes,
};
use crate::limits::{source_subject, Exceeded, Limit, LimitError, Limiter};
use crate::outbound::{FetchError, Fetcher};
use crate::store::{StoreError, StoreResult};

/// What `Accept` asks the document's and the keys' addresses for.
const ACCEPT: &str = "application/json";

/// The documents' switch and the outbound client that fetches them.
#[derive(Debug, Clone)]
pub struct ClientDocuments {
    enabled: bool,
    fetcher: Arc<Fetcher>,
}

/// Why the client of a document cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    /// The URL, its address, the fetch or the document is refused: the client does not exist
    /// as far as the request is concerned.
    #[error(transparent)]
    Unusable(#[from] Unusable),
    /// The document would be fetched, but the requests from this source address have fetched
    /// as many as `RATE_LIMIT_DOCUMENT_FETCHES_PER_HOUR` allows (429).
    #[error("rate limit exceeded: {0:?}")]
    Limited(Exceeded),
    /// The store failed (503).
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Why a document is not used (logged; the user sees one page whatever the reason).
#[derive(Debug, thiserror::Error)]
pub enum Unusable {
    #[error(transparent)]
    Refused(#[from] DocumentRefusal),
    #[error("fetching the document: {0}")]
    Fetch(#[source] FetchError),
    #[error(
        "the document's address answered {0}: only 200 is accepted, and no redirect is followed"
    )]
    Status(http::StatusCode),
    #[error("fetching the client's keys (jwks_uri): {0}")]
    KeysFetch(#[source] FetchError),
    #[error("the client's keys (jwks_uri) answered {0}: only 200 is accepted, and no redirect is followed")]
    KeysStatus(http::StatusCode),
    #[error("the client's keys (jwks_uri) are not JSON")]
    KeysNotJson,
    #[error("fetching the document and the client's keys took longer than the time limit")]
    Timeout,
}

impl ClientDocuments {
    /// `enabled`: `CLIENT_ID_METADATA_DOCUMENTS=on`; `fetcher`: the outbound client, with the
    /// deployment's allowed hosts.
    pub fn new(enabled: bool, fetcher: Fetcher) -> Self {
        Self {
            enabled,
            fetcher: Arc::new(fetcher),
        }
    }

    pub fn is_on(&self) -> bool {
        self.enabled
    }

    /// The same switch, documents fetched by `fetcher` (the configuration's allowed hosts; in
    /// tests, a resolver or a time limit of their own).
    pub fn with_fetcher(&self, fetcher: Fetcher) -> Self {
        Self::new(self.enabled, fetcher)
    }

    /// Whether `client_id` names a metadata document: the documents are on, and it is a URL.
    /// Off, a URL is an unknown client like any other text that is not a UUID.
    pub fn names_document(&self, client_id: &str) -> bool {
        self.enabled && is_url_client_id(client_id)
    }

    /// The client whose `client_id` is `url`: the kept one while it is fresh, else the
    /// document fetched, checked (`allowed`: the deployment's `REGISTRATION_SCOPES`) and kept,
    /// once `limiter` counted the fetch against the request's source address.
    /// A document that cannot be fetched or does not pass is refused, even if an earlier one is
    /// still kept: the document is the registration, and it is no longer there.
    pub async fn client(
        &self,
        ctx: &Context,
        allowed: &Scopes,
        limiter: Limiter<'_>,
        url: &str,
    ) -> Result<Client, DocumentError> {
        let url = match DocumentUrl::parse(url) {
            Ok(url) => url,
            Err(why) => {
                tracing::info!(client_id = url, reason = %why, "client ID metadata document refused");
                return Err(Unusable::from(why).into());
            }
        };
        let now = ctx.clock.now();
        let documents = ctx.store.document_clients();
        let kept = documents
            .get_document_client(&url.client_id(), now)
            .await?
            .filter(|kept| kept.client.document_url.as_deref() == Some(url.as_str()));
        if let Some(kept) = kept.filter(|kept| kept.is_fresh(now)) {
            return Ok(kept.client);
        }
        // No request, no address (tests, tools): nothing to count against.
        if let Some(source) = RequestFacts::current().source_address {
            let counted = limiter
                .count(Limit::AddressDocumentFetches, &source_subject(source), now)
                .await;
            match counted {
                Ok(()) => {}
                Err(LimitError::Exceeded(exceeded)) => {
                    tracing::info!(client_id = %url, "client ID metadata document not fetched: rate limit");
                    return Err(DocumentError::Limited(exceeded));
                }
                Err(LimitError::Store(error)) => return Err(error.into()),
            }
        }
        let fetched = match tokio::time::timeout(self.fetcher.timeout(), self.fetch(&url, allowed))
            .await
            .unwrap_or(Err(Unusable::Timeout))
        {
            Ok((document, lifetime)) => {
                DocumentClient::new(&url, document, ctx.clock.now(), lifetime)
            }
            Err(why) => {
                tracing::info!(client_id = %url, reason = %why, "client ID metadata document refused");
                return Err(why.into());
            }
        };
        documents.put_document_client(&fetched).await?;
        tracing::info!(
            client_id = %url,
            fresh_for = fetched.fresh_until - fetched.fetched_at,
            "client ID metadata document fetched"
        );
        Ok(fetched.client)
    }

    /// The kept client of a document by its id, fresh or not, until it expires; `None` when the
    /// documents are off.
    pub async fn kept(&self, ctx: &Context, id: &ClientId) -> StoreResult<Option<Client>> {
        if !self.enabled {
            return Ok(None);
        }
        let now = ctx.clock.now();
        Ok(ctx
            .store
            .document_clients()
            .get_document_client(id, now)
            .await?
            .map(|kept| kept.client))
    }

    /// The document at `url`, checked, and for how long it may be kept; its keys fetched too
    /// when it names them by `jwks_uri`.
    async fn fetch(
        &self,
        url: &DocumentUrl,
        allowed: &Scopes,
    ) -> Result<(crate::domain::CheckedMetadata, i64), Unusable> {
        let response = self
            .fetcher
            .get(url.as_str(), ACCEPT)
            .await
            .map_err(Unusable::Fetch)?;
        if response.status != http::StatusCode::OK {
            return Err(Unusable::Status(response.status));
        }
        let document = MetadataDocument::parse(&response.body, url)?;
        let keys = match document.jwks_uri() {
            Some(uri) => Some(self.keys(uri).await?),
            None => None,
        };
        let checked = document.check(allowed, keys)?;
        let cache_control: Vec<&str> = response
            .headers
            .get_all(http::header::CACHE_CONTROL)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .collect();
        let cache_control = (!cache_control.is_empty()).then(|| cache_control.join(","));
        Ok((checked, cache_lifetime(cache_control.as_deref())))
    }

    /// The JWK Set at `uri`, by the same rules as the document.
    async fn keys(&self, uri: &str) -> Result<serde_json::Value, Unusable> {
        let response = self
            .fetcher
            .get(uri, ACCEPT)
            .await
            .map_err(Unusable::KeysFetch)?;
        if response.status != http::StatusCode::OK {
            return Err(Unusable::KeysStatus(response.status));
        }
        serde_json::from_slice(&response.body).map_err(|_| Unusable::KeysNotJson)
    }
}

#[cfg(test)]
#[path = "client_documents_tests.rs"]
mod tests;
