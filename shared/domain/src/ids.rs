//! Identifier newtypes. Each is parsed once at the edge (`parse`) and is valid from then on.

use serde::{Deserialize, Serialize};
use std::fmt;
use uuid::Uuid;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} must be a UUID")]
pub struct InvalidId {
    pub what: &'static str,
}

macro_rules! uuid_id {
    ($(#[$doc:meta])* $name:ident, $what:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(Uuid);

        impl $name {
            pub fn new(id: Uuid) -> Self {
                Self(id)
            }

            /// Accepts any RFC 4122 spelling; the canonical form (lower-case, hyphenated) is
            /// what is stored and shown.
            pub fn parse(text: &str) -> Result<Self, InvalidId> {
                Uuid::parse_str(text.trim())
                    .map(Self)
                    .map_err(|_| InvalidId { what: $what })
            }

            pub fn as_uuid(&self) -> &Uuid {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.hyphenated().fmt(f)
            }
        }

        impl std::str::FromStr for $name {
            type Err = InvalidId;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::parse(s)
            }
        }
    };
}

uuid_id!(
    /// An application registered by application management (`client_id`).
    ClientId,
    "client_id"
);
/// The name space of the ids of clients known by a URL (RFC 9562 Appendix A's URL name space):
/// anyone can derive a document client's id from its URL (`uuid -v5 ns:URL <url>`).
const DOCUMENT_NAMESPACE: Uuid = Uuid::NAMESPACE_URL;

impl ClientId {
    /// The id of the client whose `client_id` is the URL `url` (a client ID metadata document's,
    /// draft-ietf-oauth-client-id-metadata-document): the name-based UUID (version 5) of the URL
    /// exactly as sent. The URL is what leaves the service wherever `client_id` is shown; this id
    /// is what the store and the audit trail key the client by (docs/decisions.md, "Client ID
    /// metadata documents").
    pub fn of_document_url(url: &str) -> Self {
        use sha1::{Digest, Sha1};
        let mut hash = Sha1::new();
        hash.update(DOCUMENT_NAMESPACE.as_bytes());
        hash.update(url.as_bytes());
        let digest = hash.finalize();
        let mut bytes = [0u8; 16];
        bytes.copy_from_slice(&digest[..16]);
        Self(uuid::Builder::from_sha1_bytes(bytes).into_uuid())
    }

    /// A `client_id` as tokens and requests carry it (a token's `client_id`, an ID token's
    /// `aud`, a logout request's `client_id`): a UUID, or a client ID metadata document's URL,
    /// which names the client [`Self::of_document_url`] derives from it. Whether such a client
    /// exists is the store's to say.
    pub fn from_wire(text: &str) -> Result<Self, InvalidId> {
        if is_url_client_id(text) {
            Ok(Self::of_document_url(text))
        } else {
            Self::parse(text)
        }
    }
}

/// Whether a `client_id` is a URL (`https://…`, or `http://…` for development) rather than a
/// UUID: then it names a client ID metadata document.
pub fn is_url_client_id(text: &str) -> bool {
    let scheme = text.split_once("://").map(|(scheme, _)| scheme);
    scheme.is_some_and(|scheme| {
        scheme.eq_ignore_ascii_case("https") || scheme.eq_ignore_ascii_case("http")
    })
}

uuid_id!(
    /// A user or a company.
    PrincipalId,
    "principal id"
);
uuid_id!(
    /// One token family: everything descending from one grant.
    FamilyId,
    "family id"
);
uuid_id!(
    /// The `jti` of an access token.
    TokenId,
    "token id"
);
uuid_id!(
    /// One of a company's identity providers (`idp_id`).
    IdpId,
    "idp id"
);
uuid_id!(
    /// One of a client's secrets (`secret_id`), which names it for listing and revocation.
    SecretId,
    "secret_id"
);

/// The consumer key of an application of the deprecated framework (`{OLDConsumerKey}`).
/// Free-form in the old system, so only emptiness and length are checked.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ConsumerKey(String);

impl ConsumerKey {
    pub const MAX_LEN: usize = 256;

    pub fn parse(text: &str) -> Result<Self, InvalidConsumerKey> {
        let text = text.trim();
        if text.is_empty() || text.len() > Self::MAX_LEN || text.chars().any(char::is_control) {
            return Err(InvalidConsumerKey);
        }
        Ok(Self(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ConsumerKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("consumer key must be 1 to 256 printable characters")]
pub struct InvalidConsumerKey;

/// A user's login name. Compared case-insensitively, so it is stored folded to lower case.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Login(String);

impl Login {
    pub const MAX_LEN: usize = 256;

    pub fn parse(text: &str) -> Result<Self, InvalidLogin> {
        let text = text.trim();
        if text.is_empty() || text.len() > Self::MAX_LEN || text.chars().any(char::is_control) {
            return Err(InvalidLogin);
        }
        Ok(Self(text.to_lowercase()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Login {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("login must be 1 to 256 printable characters")]
pub struct InvalidLogin;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_ids_are_canonicalised() {
        let id = ClientId::parse("0E8F3C4A-1B2C-4D5E-8F90-A1B2C3D4E5F6").unwrap();
        assert_eq!(id.to_string(), "0e8f3c4a-1b2c-4d5e-8f90-a1b2c3d4e5f6");
        assert_eq!(
            ClientId::parse("not-a-uuid"),
            Err(InvalidId { what: "client_id" })
        );
    }

    #[test]
    fn a_url_client_id_is_its_name_based_uuid() {
        let url = "https://app.example.com/oauth/client.json";
        let id = ClientId::of_document_url(url);
        // What Python's uuid.uuid5(uuid.NAMESPACE_URL, url) answers.
        assert_eq!(id.to_string(), "6c00f172-40a0-5d89-82c6-a0f93a86c688");
        assert_eq!(id.as_uuid().get_version_num(), 5);
        assert_eq!(ClientId::from_wire(url), Ok(id));
        assert_ne!(ClientId::of_document_url(&format!("{url}?v=2")), id);
        let uuid = "0e8f3c4a-1b2c-4d5e-8f90-a1b2c3d4e5f6";
        assert_eq!(ClientId::from_wire(uuid), ClientId::parse(uuid));
        assert!(ClientId::from_wire("not-a-uuid").is_err());
        assert!(is_url_client_id("HTTPS://x.example/c"));
        assert!(is_url_client_id("http://127.0.0.1:8080/c"));
        assert!(!is_url_client_id("urn:x:y"));
        assert!(!is_url_client_id(uuid));
    }

    #[test]
    fn logins_fold_case_and_reject_blank() {
        assert_eq!(
            Login::parse(" Alice@Example.COM ").unwrap().as_str(),
            "alice@example.com"
        );
        assert!(Login::parse("  ").is_err());
        assert!(Login::parse("a\nb").is_err());
    }

    #[test]
    fn consumer_keys_reject_empty_and_oversized() {
        assert!(ConsumerKey::parse("").is_err());
        assert!(ConsumerKey::parse(&"k".repeat(257)).is_err());
        assert_eq!(
            ConsumerKey::parse("qyprd-OLD").unwrap().as_str(),
            "qyprd-OLD"
        );
    }
}
