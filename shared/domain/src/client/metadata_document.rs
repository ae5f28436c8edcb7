//! Clients known by a client ID metadata document (draft-ietf-oauth-client-id-metadata-document):
//! a `client_id` that is a URL names a JSON document, served at that URL, that describes the
//! client. The rules, free of I/O: which URLs may be client ids, what a document must say, how
//! long one is kept, and the client it describes. Fetching it is `token_core`'s
//! (`client_documents`, through the outbound client).
//!
//! Such a client registered itself, in effect: nobody vouched for it, so it gets what a
//! self-registered client gets (the code flow and refresh only, PKCE `S256` when public, never
//! first-party, the consent page every time), and only the two authentication methods that need
//! no shared secret: `none` and `private_key_jwt`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    CheckedMetadata, Client, ClientAuthMethod, ClientMetadata, ClientProfile, GrantType,
    RefreshRotation, RegisteredAuthMethod,
};
use crate::clock::UnixTime;
use crate::{ClientId, ClientSecrets, Scopes};

/// The longest `client_id` URL accepted: it is in every token the client gets.
pub const MAX_DOCUMENT_URL_LEN: usize = 1024;
/// The least a fetched document is kept, whatever its `Cache-Control` says (none, `no-store`,
/// a shorter `max-age`): five minutes.
pub const DOCUMENT_MIN_AGE_SECONDS: i64 = 300;
/// The most a fetched document is kept before it is fetched again: a day.
pub const DOCUMENT_MAX_AGE_SECONDS: i64 = 86_400;
/// How long the client of a document is kept past the document's freshness, for what names it
/// by its id only: a sign-in started while the document was fresh (the pending request's
/// cookie holds the id) can still finish. Whatever names the client by its URL (an
/// authorization request, client authentication) fetches a document past its freshness again.
pub const DOCUMENT_STALE_SECONDS: i64 = 3600;

/// A `client_id` that names a metadata document: an absolute `https` URL (or `http`, which only
/// the fetcher's allowed hosts accept) with a path, no fragment, no user name or password, and
/// in the form the URL standard serializes it to (so no dot segments, default port, upper-case
/// host or stray characters): two spellings never name one document as two clients.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DocumentUrl(String);

impl DocumentUrl {
    pub fn parse(text: &str) -> Result<Self, DocumentRefusal> {
        let refuse = |why| Err(DocumentRefusal::Url(why));
        if text.len() > MAX_DOCUMENT_URL_LEN {
            return refuse("longer than 1024 characters");
        }
        let Ok(url) = url::Url::parse(text) else {
            return refuse("not an absolute URL");
        };
        if !matches!(url.scheme(), "https" | "http") || url.host_str().is_none() {
            return refuse("not an https URL with a host");
        }
        if url.fragment().is_some() {
            return refuse("it has a fragment");
        }
        if !url.username().is_empty() || url.password().is_some() {
            return refuse("it has a user name or password");
        }
        if url.path() == "/" {
            return refuse("it has no path");
        }
        if url.as_str() != text {
            return refuse("not in its normal form (dot segments, default port, case, escapes)");
        }
        Ok(Self(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The id the client has inside the service.
    pub fn client_id(&self) -> ClientId {
        ClientId::of_document_url(&self.0)
    }

    fn host(&self) -> String {
        url::Url::parse(&self.0)
            .ok()
            .and_then(|url| url.host_str().map(str::to_owned))
            .unwrap_or_default()
    }
}

impl std::fmt::Display for DocumentUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why a `client_id` URL or the document it names is refused (for the logs: the user is shown
/// one page whatever the reason).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DocumentRefusal {
    #[error("client_id URL refused: {0}")]
    Url(&'static str),
    #[error("the document is not a JSON object")]
    NotJson,
    #[error("the document's client_id is not the URL it was fetched from")]
    ClientIdMismatch,
    #[error("{0}")]
    Metadata(String),
}

/// A fetched document, parsed and checked as far as it can be before its keys are fetched: it
/// names itself, and it authenticates with `none` or with `private_key_jwt` and its keys (a
/// `jwks`, or a `jwks_uri` to fetch).
#[derive(Debug, Clone)]
pub struct MetadataDocument {
    metadata: ClientMetadata,
    auth_method: RegisteredAuthMethod,
    jwks_uri: Option<String>,
}

/// The members read besides those of [`ClientMetadata`].
#[derive(Debug, Deserialize)]
struct DocumentMembers {
    client_id: Option<Value>,
    jwks_uri: Option<Value>,
    client_secret: Option<Value>,
    client_secret_expires_at: Option<Value>,
}

impl MetadataDocument {
    /// The body at `url`, as JSON: it must carry `client_id` equal to `url`, and
    /// `token_endpoint_auth_method` `none`, or `private_key_jwt` with exactly one of `jwks` and
    /// `jwks_uri`. No secret: a document is public.
    pub fn parse(body: &[u8], url: &DocumentUrl) -> Result<Self, DocumentRefusal> {
        let value: Value = serde_json::from_slice(body).map_err(|_| DocumentRefusal::NotJson)?;
        if !value.is_object() {
            return Err(DocumentRefusal::NotJson);
        }
        let invalid = |e: serde_json::Error| DocumentRefusal::Metadata(format!("{e}"));
        let members: DocumentMembers = serde_json::from_value(value.clone()).map_err(invalid)?;
        let metadata: ClientMetadata = serde_json::from_value(value).map_err(invalid)?;
        if members.client_id.as_ref().and_then(Value::as_str) != Some(url.as_str()) {
            return Err(DocumentRefusal::ClientIdMismatch);
        }
        if members.client_secret.is_some() || members.client_secret_expires_at.is_some() {
            return Err(metadata_refusal(
                "a client ID metadata document must not carry a client secret",
            ));
        }
        let auth_method = match metadata.token_endpoint_auth_method.as_deref() {
            Some("none") => RegisteredAuthMethod::None,
            Some("private_key_jwt") => RegisteredAuthMethod::PrivateKeyJwt,
            Some(other) => {
                return Err(metadata_refusal(format!(
                    "token_endpoint_auth_method {other} is not accepted from a metadata document \
                     (none or private_key_jwt)"
                )))
            }
            None => {
                return Err(metadata_refusal(
                    "token_endpoint_auth_method is required (none or private_key_jwt)",
                ))
            }
        };
        let jwks_uri = match members.jwks_uri {
            None => None,
            Some(Value::String(uri)) => Some(uri),
            Some(_) => return Err(metadata_refusal("jwks_uri must be a string")),
        };
        match (auth_method, metadata.jwks.is_some(), jwks_uri.is_some()) {
            (RegisteredAuthMethod::PrivateKeyJwt, true, true) => {
                return Err(metadata_refusal(
                    "jwks and jwks_uri must not both be present",
                ))
            }
            (RegisteredAuthMethod::PrivateKeyJwt, false, false) => {
                return Err(metadata_refusal(
                    "private_key_jwt needs jwks or jwks_uri (the client's public keys)",
                ))
            }
            (RegisteredAuthMethod::None, _, true) | (RegisteredAuthMethod::None, true, _) => {
                return Err(metadata_refusal(
                    "jwks and jwks_uri are only accepted with private_key_jwt",
                ))
            }
            _ => {}
        }
        Ok(Self {
            metadata,
            auth_method,
            jwks_uri,
        })
    }

    /// Where the client's keys are to be fetched from, when the document names them by address.
    pub fn jwks_uri(&self) -> Option<&str> {
        self.jwks_uri.as_deref()
    }

    /// Every other member, checked by the rules of self-registration (`allowed`: the
    /// deployment's `REGISTRATION_SCOPES`); `jwks` is the JWK Set fetched from
    /// [`Self::jwks_uri`], if the document named one.
    pub fn check(
        mut self,
        allowed: &Scopes,
        jwks: Option<Value>,
    ) -> Result<CheckedMetadata, DocumentRefusal> {
        if self.jwks_uri.is_some() {
            // The document's keys come fetched, as a `jwks`: nothing is left to read at use.
            self.metadata.jwks_uri = None;
            self.metadata.jwks = Some(jwks.ok_or_else(|| {
                metadata_refusal("jwks_uri: the client's keys could not be fetched")
            })?);
        }
        let checked = self
            .metadata
            .check(allowed)
            .map_err(|e| DocumentRefusal::Metadata(e.description))?;
        debug_assert_eq!(checked.auth_method, self.auth_method);
        Ok(checked)
    }
}

fn metadata_refusal(description: impl Into<String>) -> DocumentRefusal {
    DocumentRefusal::Metadata(description.into())
}

/// The client a fetched document describes, as kept until `expires_at` (the documents' cache,
/// shared by every instance through the store).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocumentClient {
    pub client: Client,
    pub fetched_at: UnixTime,
    /// Until when the document is used as fetched ([`cache_lifetime`]); after it, whatever names
    /// the client by its URL fetches the document again.
    pub fresh_until: UnixTime,
    /// The TTL: `fresh_until` plus [`DOCUMENT_STALE_SECONDS`]; forgotten from then on.
    pub expires_at: UnixTime,
}

impl DocumentClient {
    /// The client of the document at `url`, fetched at `now` and fresh for `lifetime` seconds.
    pub fn new(url: &DocumentUrl, checked: CheckedMetadata, now: UnixTime, lifetime: i64) -> Self {
        let auth_method = match checked.auth_method {
            RegisteredAuthMethod::PrivateKeyJwt => ClientAuthMethod::PrivateKeyJwt,
            // `parse` accepts nothing else.
            _ => ClientAuthMethod::Public,
        };
        let client = Client {
            id: url.client_id(),
            name: checked.client_name.unwrap_or_else(|| url.host()),
            secrets: ClientSecrets::none(),
            allowed_scopes: checked.scope,
            refresh_allowed: checked.grant_types.contains(&GrantType::RefreshToken),
            grants: checked.grant_types,
            connect_url: None,
            enabled: true,
            created_at: now,
            first_party: false,
            redirect_uris: checked.redirect_uris,
            refresh_rotation: RefreshRotation::Rotate,
            post_logout_redirect_uris: Vec::new(),
            jwks: checked.jwks,
            require_dpop: false,
            require_par: checked.require_par,
            profile: ClientProfile::Default,
            auth_method: Some(auth_method),
            backchannel_logout_uri: None,
            registration: None,
            resources: Vec::new(),
            document_url: Some(url.as_str().to_owned()),
            id_jag_targets: Vec::new(),
        };
        let fresh_until = now + lifetime;
        Self {
            client,
            fetched_at: now,
            fresh_until,
            expires_at: fresh_until + DOCUMENT_STALE_SECONDS,
        }
    }

    pub fn is_fresh(&self, now: UnixTime) -> bool {
        self.fresh_until > now
    }

    pub fn is_live(&self, now: UnixTime) -> bool {
        self.expires_at > now
    }
}

/// How long a document answered with this `Cache-Control` is used: `s-maxage`, else `max-age`
/// (`no-store` and `no-cache` count as 0), clamped between [`DOCUMENT_MIN_AGE_SECONDS`] and
/// [`DOCUMENT_MAX_AGE_SECONDS`]; without the header, the minimum.
pub fn cache_lifetime(cache_control: Option<&str>) -> i64 {
    let mut max_age = None;
    let mut shared_max_age = None;
    let mut uncached = false;
    for directive in cache_control.unwrap_or_default().split(',') {
        let (name, value) = match directive.split_once('=') {
            Some((name, value)) => (name.trim(), Some(value.trim().trim_matches('"'))),
            None => (directive.trim(), None),
        };
        // Digits only (a delta-seconds); too many for a u64 is "for as long as you like".
        let seconds = value
            .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
            .map(|v| v.parse::<u64>().unwrap_or(u64::MAX));
        match name.to_ascii_lowercase().as_str() {
            "max-age" => max_age = max_age.or(seconds),
            "s-maxage" => shared_max_age = shared_max_age.or(seconds),
            "no-store" | "no-cache" => uncached = true,
            _ => {}
        }
    }
    let seconds = if uncached {
        0
    } else {
        shared_max_age.or(max_age).unwrap_or(0)
    };
    i64::try_from(seconds)
        .unwrap_or(i64::MAX)
        .clamp(DOCUMENT_MIN_AGE_SECONDS, DOCUMENT_MAX_AGE_SECONDS)
}

#[cfg(test)]
#[path = "metadata_document_tests.rs"]
mod tests;
