//! The keys a self-registered `private_key_jwt` client publishes at its `jwks_uri`, as this
//! instance last read them: fetched through the one outbound client under the rules for
//! client-supplied URLs, kept per `Cache-Control` (five minutes to a day, as client ID metadata
//! documents are), and read again at most once a minute when an assertion names a key they lack
//! (a rotation at the client).
//!
//! Kept in this instance's memory, as company identity providers' keys are: a cold start reads
//! them again, one fetch per client, not a store write per assertion.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::clock::UnixTime;
use crate::domain::cache_lifetime;
use crate::jose::PublicJwkSet;
use crate::outbound::{FetchError, Fetcher};

/// The least time between two reads of one client's keys for an unknown `kid`.
pub const KEYS_REFETCH_SECONDS: UnixTime = 60;

/// A client's keys as read.
#[derive(Debug, Clone)]
pub struct KeptKeys {
    pub keys: PublicJwkSet,
    keep_until: UnixTime,
    read_at: UnixTime,
}

/// Why a client's keys could not be had. The answer itself is never kept.
#[derive(Debug, thiserror::Error)]
pub enum ClientKeysError {
    #[error("the client's jwks_uri could not be reached: {0}")]
    Unreachable(#[from] FetchError),
    #[error("the client's jwks_uri answered {0}")]
    Status(http::StatusCode),
    #[error("the client's jwks_uri holds no valid JWK Set")]
    Invalid,
}

/// The key sets this instance read, by `jwks_uri`.
#[derive(Debug)]
pub struct ClientKeySets {
    fetcher: Fetcher,
    read: Mutex<HashMap<String, Arc<KeptKeys>>>,
}

impl ClientKeySets {
    pub fn new(fetcher: Fetcher) -> Self {
        Self {
            fetcher,
            read: Mutex::new(HashMap::new()),
        }
    }

    /// The keys at `jwks_uri`, read again once what was kept has aged out.
    pub async fn get(
        &self,
        jwks_uri: &str,
        now: UnixTime,
    ) -> Result<Arc<KeptKeys>, ClientKeysError> {
        if let Some(kept) = self.kept(jwks_uri).filter(|kept| kept.keep_until > now) {
            return Ok(kept);
        }
        self.read_keys(jwks_uri, now).await
    }

    /// The keys read again, unless they were read less than [`KEYS_REFETCH_SECONDS`] ago
    /// (`None`: nothing new to try), so that a stream of assertions naming an unknown `kid`
    /// costs the client one fetch a minute.
    pub async fn with_new_keys(
        &self,
        jwks_uri: &str,
        now: UnixTime,
    ) -> Result<Option<Arc<KeptKeys>>, ClientKeysError> {
        if self
            .kept(jwks_uri)
            .is_some_and(|kept| now - kept.read_at < KEYS_REFETCH_SECONDS)
        {
            return Ok(None);
        }
        self.read_keys(jwks_uri, now).await.map(Some)
    }

    /// The keys at `jwks_uri` for an assertion naming `kid`: read again (as
    /// [`Self::with_new_keys`] allows) when none of the kept keys has it.
    pub async fn for_kid(
        &self,
        jwks_uri: &str,
        kid: Option<&str>,
        now: UnixTime,
    ) -> Result<Arc<KeptKeys>, ClientKeysError> {
        let kept = self.get(jwks_uri, now).await?;
        if kid.is_none() || kept.keys.candidates(kid).next().is_some() {
            return Ok(kept);
        }
        Ok(self.with_new_keys(jwks_uri, now).await?.unwrap_or(kept))
    }

    fn kept(&self, jwks_uri: &str) -> Option<Arc<KeptKeys>> {
        let read = self
            .read
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        read.get(jwks_uri).cloned()
    }

    async fn read_keys(
        &self,
        jwks_uri: &str,
        now: UnixTime,
    ) -> Result<Arc<KeptKeys>, ClientKeysError> {
        let response = self.fetcher.get(jwks_uri, "application/json").await?;
        if response.status != http::StatusCode::OK {
            return Err(ClientKeysError::Status(response.status));
        }
        let cache_control = response
            .headers
            .get(http::header::CACHE_CONTROL)
            .and_then(|value| value.to_str().ok());
        let lifetime = cache_lifetime(cache_control);
        let value: serde_json::Value =
            serde_json::from_slice(&response.body).map_err(|_| ClientKeysError::Invalid)?;
        let keys = PublicJwkSet::parse_signing_keys(value).map_err(|_| ClientKeysError::Invalid)?;
        let kept = Arc::new(KeptKeys {
            keys,
            keep_until: now + lifetime,
            read_at: now,
        });
        let mut read = self
            .read
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        read.insert(jwks_uri.to_owned(), kept.clone());
        Ok(kept)
    }
}

#[cfg(test)]
#[path = "client_keys_tests.rs"]
mod tests;
