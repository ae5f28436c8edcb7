//! What an OpenID Provider publishes, as this instance last read it: its metadata
//! (`{issuer}/.well-known/openid-configuration`) and its keys (`jwks_uri`), fetched through the
//! one outbound client under the rules for client-supplied URLs, kept per `Cache-Control` as
//! client ID metadata documents are (five minutes to a day), and the keys read again at most
//! once a minute when an ID token names a key they lack (a rotation at the IdP).
//!
//! Kept in this instance's memory: a cold start reads them again, which costs two fetches per
//! IdP, not a store write per sign-in.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use openidconnect::core::CoreJsonWebKeySet;
use openidconnect::{
    EmptyAdditionalProviderMetadata, LogoutProviderMetadata, ProviderMetadataWithLogout,
};

use crate::clock::UnixTime;
use crate::domain::cache_lifetime;
use crate::outbound::{FetchError, Fetcher};

/// The least time between two reads of one IdP's keys for an unknown `kid`.
pub const KEYS_REFETCH_SECONDS: UnixTime = 60;

/// An IdP's metadata and keys as read.
#[derive(Debug, Clone)]
pub struct Provider {
    pub metadata: ProviderMetadataWithLogout,
    pub keys: CoreJsonWebKeySet,
    keep_until: UnixTime,
    keys_read_at: UnixTime,
}

impl Provider {
    /// Where RP-initiated logout sends the browser, when the IdP has one.
    pub fn end_session_endpoint(&self) -> Option<&str> {
        let logout: &LogoutProviderMetadata<EmptyAdditionalProviderMetadata> =
            self.metadata.additional_metadata();
        logout.end_session_endpoint.as_ref().map(|url| url.as_str())
    }
}

/// Why an IdP's documents could not be had. The upstream answer itself is never kept.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    #[error("the identity provider could not be reached: {0}")]
    Unreachable(#[from] FetchError),
    #[error("the identity provider answered {0}")]
    Status(http::StatusCode),
    #[error("the identity provider's {0} is not valid")]
    Invalid(&'static str),
    #[error("the identity provider's metadata names another issuer")]
    OtherIssuer,
}

/// The providers this instance read, by issuer.
#[derive(Debug)]
pub struct Providers {
    fetcher: Arc<Fetcher>,
    read: Mutex<HashMap<String, Arc<Provider>>>,
}

impl Providers {
    pub fn new(fetcher: Fetcher) -> Self {
        Self {
            fetcher: Arc::new(fetcher),
            read: Mutex::new(HashMap::new()),
        }
    }

    pub fn fetcher(&self) -> &Fetcher {
        &self.fetcher
    }

    /// The provider of `issuer`, read again once what was kept has aged out.
    pub async fn get(&self, issuer: &str, now: UnixTime) -> Result<Arc<Provider>, ProviderError> {
        if let Some(kept) = self.kept(issuer).filter(|kept| kept.keep_until > now) {
            return Ok(kept);
        }
        let (metadata, metadata_lifetime) = self.read_metadata(issuer).await?;
        let jwks_uri = metadata.jwks_uri().url().to_string();
        let (keys, keys_lifetime) = self.read_keys(&jwks_uri).await?;
        let provider = Arc::new(Provider {
            metadata,
            keys,
            keep_until: now + metadata_lifetime.min(keys_lifetime),
            keys_read_at: now,
        });
        self.keep(issuer, provider.clone());
        Ok(provider)
    }

    /// The provider with its keys read again, unless they were read less than
    /// [`KEYS_REFETCH_SECONDS`] ago (`None`: nothing new to try).
    pub async fn with_new_keys(
        &self,
        issuer: &str,
        now: UnixTime,
    ) -> Result<Option<Arc<Provider>>, ProviderError> {
        let Some(kept) = self.kept(issuer) else {
            return self.get(issuer, now).await.map(Some);
        };
        if now - kept.keys_read_at < KEYS_REFETCH_SECONDS {
            return Ok(None);
        }
        let jwks_uri = kept.metadata.jwks_uri().url().to_string();
        let (keys, _) = self.read_keys(&jwks_uri).await?;
        let provider = Arc::new(Provider {
            keys,
            keys_read_at: now,
            ..(*kept).clone()
        });
        self.keep(issuer, provider.clone());
        Ok(Some(provider))
    }

    fn kept(&self, issuer: &str) -> Option<Arc<Provider>> {
        let read = self
            .read
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        read.get(issuer).cloned()
    }

    fn keep(&self, issuer: &str, provider: Arc<Provider>) {
        let mut read = self
            .read
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        read.insert(issuer.to_owned(), provider);
    }

    async fn read_metadata(
        &self,
        issuer: &str,
    ) -> Result<(ProviderMetadataWithLogout, UnixTime), ProviderError> {
        let url = format!(
            "{}/.well-known/openid-configuration",
            issuer.trim_end_matches('/')
        );
        let (body, lifetime) = self.read_json(&url).await?;
        let metadata: ProviderMetadataWithLogout =
            serde_json::from_slice(&body).map_err(|_| ProviderError::Invalid("metadata"))?;
        // OpenID Connect Discovery 1.0 §4.3: the issuer in the document is the one asked for.
        if metadata.issuer().as_str() != issuer {
            return Err(ProviderError::OtherIssuer);
        }
        Ok((metadata, lifetime))
    }

    async fn read_keys(
        &self,
        jwks_uri: &str,
    ) -> Result<(CoreJsonWebKeySet, UnixTime), ProviderError> {
        let (body, lifetime) = self.read_json(jwks_uri).await?;
        let keys: CoreJsonWebKeySet =
            serde_json::from_slice(&body).map_err(|_| ProviderError::Invalid("key set"))?;
        Ok((keys, lifetime))
    }

    async fn read_json(&self, url: &str) -> Result<(Vec<u8>, UnixTime), ProviderError> {
        let response = self.fetcher.get(url, "application/json").await?;
        if response.status != http::StatusCode::OK {
            return Err(ProviderError::Status(response.status));
        }
        let cache_control = response
            .headers
            .get(http::header::CACHE_CONTROL)
            .and_then(|value| value.to_str().ok());
        Ok((response.body, cache_lifetime(cache_control)))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::outbound::{AllowedHosts, Exchange, Outgoing, Response, Target};

    const ISSUER: &str = "http://127.0.0.1:9";

    /// An IdP that answers its metadata and an empty key set, counting the key-set reads.
    #[derive(Debug, Default)]
    struct CountingIdp {
        key_reads: AtomicUsize,
    }

    #[async_trait::async_trait]
    impl Exchange for CountingIdp {
        async fn send(&self, target: &Target, _: Outgoing) -> Result<Response, FetchError> {
            let body = if target.path_and_query == "/jwks" {
                self.key_reads.fetch_add(1, Ordering::SeqCst);
                serde_json::json!({ "keys": [] })
            } else {
                serde_json::json!({
                    "issuer": ISSUER,
                    "authorization_endpoint": format!("{ISSUER}/auth"),
                    "token_endpoint": format!("{ISSUER}/token"),
                    "jwks_uri": format!("{ISSUER}/jwks"),
                    "response_types_supported": ["code"],
                    "subject_types_supported": ["public"],
                    "id_token_signing_alg_values_supported": ["RS256"],
                })
            };
            Ok(Response {
                status: http::StatusCode::OK,
                headers: http::HeaderMap::new(),
                body: body.to_string().into_bytes(),
            })
        }
    }

    #[tokio::test]
    async fn an_unknown_key_reads_the_key_set_again_at_most_once_a_minute() {
        let idp = Arc::new(CountingIdp::default());
        let allowed = AllowedHosts::parse("127.0.0.1:9").unwrap();
        let providers = Providers::new(Fetcher::new(allowed, idp.clone()));
        let now = 1_800_000_000;
        let provider = providers.get(ISSUER, now).await.unwrap();
        assert_eq!(provider.metadata.issuer().as_str(), ISSUER);
        assert_eq!(idp.key_reads.load(Ordering::SeqCst), 1);
        // Kept: a second sign-in reads nothing.
        providers.get(ISSUER, now + 10).await.unwrap();
        assert_eq!(idp.key_reads.load(Ordering::SeqCst), 1);
        // An unknown `kid` within the minute: nothing new to try.
        let again = providers.with_new_keys(ISSUER, now + KEYS_REFETCH_SECONDS - 1);
        assert!(again.await.unwrap().is_none());
        assert_eq!(idp.key_reads.load(Ordering::SeqCst), 1);
        // After it: the key set is read again, and the next read waits another minute.
        let later = now + KEYS_REFETCH_SECONDS;
        assert!(providers
            .with_new_keys(ISSUER, later)
            .await
            .unwrap()
            .is_some());
        assert_eq!(idp.key_reads.load(Ordering::SeqCst), 2);
        let soon = providers.with_new_keys(ISSUER, later + 1).await.unwrap();
        assert!(soon.is_none());
    }

    #[tokio::test]
    async fn metadata_naming_another_issuer_is_refused() {
        let allowed = AllowedHosts::parse("127.0.0.1:9").unwrap();
        let providers = Providers::new(Fetcher::new(allowed, Arc::new(CountingIdp::default())));
        let other = "http://127.0.0.1:9/tenant";
        let refused = providers.get(other, 0).await;
        assert!(
            matches!(refused, Err(ProviderError::OtherIssuer)),
            "{refused:?}"
        );
    }
}
