//! Applications (OAuth clients) as registered by application management.

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use url::{Host, Url};

use super::{ClientId, ClientSecrets, ListedSecret, Scopes, SecretCheck, OPENID};
use crate::clock::UnixTime;
use crate::jose::PublicJwkSet;
#[cfg(test)]
use crate::secrets::TokenHash;

/// The grants a client may be allowed to use (`tokenctl clients create --grants`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GrantType {
    ClientCredentials,
    RefreshToken,
    Password,
    AuthorizationCode,
    Otp,
}

impl GrantType {
    pub const ALL: [GrantType; 5] = [
        Self::ClientCredentials,
        Self::RefreshToken,
        Self::Password,
        Self::AuthorizationCode,
        Self::Otp,
    ];

    /// The wire value of `grant_type`. `refresh` is accepted as an alias of `refresh_token`
    /// (docs/decisions.md, "Requests and client authentication").
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "client_credentials" => Some(Self::ClientCredentials),
            "refresh_token" | "refresh" => Some(Self::RefreshToken),
            "password" => Some(Self::Password),
            "authorization_code" => Some(Self::AuthorizationCode),
            "otp" => Some(Self::Otp),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::ClientCredentials => "client_credentials",
            Self::RefreshToken => "refresh_token",
            Self::Password => "password",
            Self::AuthorizationCode => "authorization_code",
            Self::Otp => "otp",
        }
    }
}

/// What a refresh does to the refresh token (docs/decisions.md, "Refresh tokens"), chosen per
/// client.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefreshRotation {
    /// Every use returns a successor (RFC 9700 §4.14.2); retries within the grace window get
    /// the same successor.
    #[default]
    Rotate,
    /// Concur's behaviour: the token stays the same and each use renews its expiry.
    Sliding,
}

impl RefreshRotation {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "rotate" => Some(Self::Rotate),
            "sliding" => Some(Self::Sliding),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Rotate => "rotate",
            Self::Sliding => "sliding",
        }
    }
}

// Independent registration switches, each its own stored field: records written before a
// switch existed read it as off.
#[allow(clippy::struct_excessive_bools)]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Client {
    pub id: ClientId,
    pub name: String,
    /// Its secrets (UUIDs, each shown once when added), as digests: stored flattened into the
    /// record (`secrets`, `secrets_version`, or an earlier record's `secret_hash`).
    #[serde(flatten)]
    pub secrets: ClientSecrets,
    pub allowed_scopes: Scopes,
    pub grants: BTreeSet<GrantType>,
    /// Where the company auth-token flow sends the browser (spec 4.5).
    pub connect_url: Option<String>,
    /// `false` for clients created with `--no-refresh`: their refresh tokens get code 107.
    pub refresh_allowed: bool,
    pub enabled: bool,
    pub created_at: UnixTime,
    /// A first-party client (the company administration console) may call the company auth-token
    /// endpoint with its users' tokens (docs/decisions.md, "Company auth tokens"). Records written
    /// before the field existed read as `false`.
    #[serde(default)]
    pub first_party: bool,
    /// The exact `redirect_uri` values the authorization code flow accepts (docs/decisions.md,
    /// "Authorization code flow").
    #[serde(default)]
    pub redirect_uris: Vec<String>,
    #[serde(default)]
    pub refresh_rotation: RefreshRotation,
    /// Where OpenID Connect RP-initiated logout may send the browser afterwards, matched
    /// exactly. Records written before the field existed read as none.
    #[serde(default)]
    pub post_logout_redirect_uris: Vec<String>,
    /// The public keys of `private_key_jwt` client authentication (RFC 7523), when registered.
    /// Records written before the field existed read as none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks: Option<PublicJwkSet>,
    /// Every token request must carry a DPoP proof (RFC 9449; docs/decisions.md, DPoP).
    /// Records written before the field existed read as `false`.
    #[serde(default)]
    pub require_dpop: bool,
}

impl Client {
    pub fn may_use(&self, grant: GrantType) -> bool {
        self.grants.contains(&grant)
    }

    /// A client that may sign users in (the code, password and one-time-password grants) may
    /// ask for OpenID Connect's `openid` scope as well as its registered ones.
    pub fn may_sign_users_in(&self) -> bool {
        [
            GrantType::AuthorizationCode,
            GrantType::Password,
            GrantType::Otp,
        ]
        .iter()
        .any(|grant| self.may_use(*grant))
    }

    /// What a request for a user or company family may name in `scope`.
    pub fn requestable_scopes(&self) -> Scopes {
        if self.may_sign_users_in() {
            self.allowed_scopes.with(OPENID)
        } else {
            self.allowed_scopes.clone()
        }
    }

    /// Checks a presented secret against every secret of the client, in constant time.
    pub fn check_secret(&self, presented: &str, now: UnixTime) -> SecretCheck {
        self.secrets.check(presented, now, self.created_at)
    }

    pub fn list_secrets(&self) -> Vec<ListedSecret> {
        self.secrets.list(self.created_at)
    }

    /// Refreshing needs both the grant and the refresh permission.
    pub fn may_refresh(&self) -> bool {
        self.refresh_allowed && self.may_use(GrantType::RefreshToken)
    }
}

/// Why a redirect URI is refused at registration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidRedirectUri {
    #[error("redirect URI must be an absolute https URL without fragment: {0}")]
    Malformed(String),
    #[error(
        "redirect URI must use https, because the redirect to it carries the authorization code \
         (http is allowed only for loopback hosts: localhost, 127.0.0.0/8, [::1]): {0}"
    )]
    NotHttps(String),
}

/// Checks a redirect URI at registration (RFC 9700 §2.1: exact match, https or loopback).
pub fn check_redirect_uri(uri: &str) -> Result<(), InvalidRedirectUri> {
    check_connect_url(uri).map_err(|e| match e {
        InvalidConnectUrl::Malformed(u) => InvalidRedirectUri::Malformed(u),
        InvalidConnectUrl::NotHttps(u) => InvalidRedirectUri::NotHttps(u),
    })
}

/// Checks a post-logout redirect URI at registration, by the redirect URIs' rules: the browser
/// is sent there with the relying party's `state`.
pub fn check_post_logout_redirect_uri(uri: &str) -> Result<(), InvalidRedirectUri> {
    check_redirect_uri(uri)
}

/// Why a Connect URL is refused. The URL is echoed: it is configuration, not a credential.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidConnectUrl {
    #[error("connect URL must be an absolute https URL without fragment: {0}")]
    Malformed(String),
    #[error(
        "connect URL must use https, because the redirect to it carries the company auth token \
         (http is allowed only for loopback hosts: localhost, 127.0.0.0/8, [::1]): {0}"
    )]
    NotHttps(String),
}

/// Checks a Connect URL (spec 4.5): the company auth-token endpoint answers 301 to it with the
/// auth token in its query, so anything but https would send that token in clear. Plain http is
/// allowed only for loopback hosts, where the request never leaves the machine (local
/// development).
pub fn check_connect_url(url: &str) -> Result<(), InvalidConnectUrl> {
    let parsed = match Url::parse(url) {
        Ok(parsed) if parsed.fragment().is_none() && parsed.has_host() => parsed,
        _ => return Err(InvalidConnectUrl::Malformed(url.to_owned())),
    };
    match parsed.scheme() {
        "https" => Ok(()),
        "http" if is_loopback(parsed.host()) => Ok(()),
        "http" => Err(InvalidConnectUrl::NotHttps(url.to_owned())),
        _ => Err(InvalidConnectUrl::Malformed(url.to_owned())),
    }
}

fn is_loopback(host: Option<Host<&str>>) -> bool {
    match host {
        // The URL parser has lower-cased the name already.
        Some(Host::Domain(name)) => name == "localhost",
        Some(Host::Ipv4(address)) => address.is_loopback(),
        Some(Host::Ipv6(address)) => address.is_loopback(),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_is_accepted_anywhere() {
        for url in [
            "https://crm.example.com/connect?tenant=1",
            "https://203.0.113.7:8443/c",
            "HTTPS://CRM.EXAMPLE.COM/",
        ] {
            assert_eq!(check_connect_url(url), Ok(()), "{url}");
        }
    }

    #[test]
    fn http_is_accepted_only_for_loopback_hosts() {
        for url in [
            "http://localhost:3000/connect",
            "http://LOCALHOST/",
            "http://127.0.0.1:8080/c",
            "http://127.8.9.10/c",
            "http://[::1]:8080/c",
        ] {
            assert_eq!(check_connect_url(url), Ok(()), "{url}");
        }
        for url in [
            "http://crm.example.com/connect",
            "http://10.0.0.1/c",
            "http://128.0.0.1/c",
            "http://[::ffff:127.0.0.1]/c",
            "http://localhost.example.com/c",
            "http://0.0.0.0/c",
        ] {
            assert_eq!(
                check_connect_url(url),
                Err(InvalidConnectUrl::NotHttps(url.to_owned())),
                "{url}"
            );
        }
    }

    #[test]
    fn other_schemes_relative_urls_and_fragments_are_malformed() {
        for url in [
            "ftp://x",
            "/connect",
            "https://crm.example.com/c#frag",
            "mailto:a@b.example",
            "javascript:alert(1)",
        ] {
            assert_eq!(
                check_connect_url(url),
                Err(InvalidConnectUrl::Malformed(url.to_owned())),
                "{url}"
            );
        }
    }

    #[test]
    fn clients_stored_before_logout_addresses_read_none() {
        let client = Client {
            id: ClientId::new(uuid::Uuid::nil()),
            name: "old".into(),
            secrets: ClientSecrets::from_single_hash(TokenHash::of("s")),
            allowed_scopes: Scopes::parse("read").unwrap(),
            grants: [GrantType::Password].into_iter().collect(),
            connect_url: None,
            refresh_allowed: true,
            enabled: true,
            created_at: 0,
            first_party: false,
            redirect_uris: Vec::new(),
            refresh_rotation: RefreshRotation::Rotate,
            post_logout_redirect_uris: vec!["https://app.example/out".into()],
            jwks: None,
            require_dpop: true,
        };
        let mut stored = serde_json::to_value(&client).unwrap();
        stored
            .as_object_mut()
            .unwrap()
            .remove("post_logout_redirect_uris");
        stored.as_object_mut().unwrap().remove("require_dpop");
        let read: Client = serde_json::from_value(stored).unwrap();
        assert!(read.post_logout_redirect_uris.is_empty());
        assert!(!read.require_dpop, "old clients need no DPoP proof");
    }

    /// A record written before `jwks` existed reads as a client without keys; one with keys
    /// keeps them (the stores keep the serde form: SQLite's JSON body, DynamoDB's attributes).
    #[test]
    fn clients_stored_before_jwks_read_none_and_keys_round_trip() {
        let mut client = Client {
            id: ClientId::new(uuid::Uuid::nil()),
            name: "old".into(),
            secrets: ClientSecrets::from_single_hash(TokenHash::of("s")),
            allowed_scopes: Scopes::parse("read").unwrap(),
            grants: [GrantType::ClientCredentials].into_iter().collect(),
            connect_url: None,
            refresh_allowed: true,
            enabled: true,
            created_at: 0,
            first_party: false,
            redirect_uris: Vec::new(),
            refresh_rotation: RefreshRotation::Rotate,
            post_logout_redirect_uris: Vec::new(),
            jwks: None,
            require_dpop: false,
        };
        let stored = serde_json::to_value(&client).unwrap();
        assert!(stored.get("jwks").is_none(), "nothing written without keys");
        let read: Client = serde_json::from_value(stored).unwrap();
        assert_eq!(read.jwks, None);

        let set = serde_json::json!({"keys": [{
            "kty": "OKP", "crv": "Ed25519", "kid": "k",
            "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo",
        }]});
        client.jwks = Some(PublicJwkSet::parse(set.clone()).unwrap());
        let stored = serde_json::to_value(&client).unwrap();
        assert_eq!(stored["jwks"], set);
        assert_eq!(serde_json::from_value::<Client>(stored).unwrap(), client);
    }

    #[test]
    fn openid_is_requestable_by_clients_that_sign_users_in() {
        let mut client = Client {
            id: ClientId::new(uuid::Uuid::nil()),
            name: "app".into(),
            secrets: ClientSecrets::from_single_hash(TokenHash::of("s")),
            allowed_scopes: Scopes::parse("read").unwrap(),
            grants: [GrantType::ClientCredentials].into_iter().collect(),
            connect_url: None,
            refresh_allowed: true,
            enabled: true,
            created_at: 0,
            first_party: false,
            redirect_uris: Vec::new(),
            refresh_rotation: RefreshRotation::Rotate,
            post_logout_redirect_uris: Vec::new(),
            jwks: None,
            require_dpop: false,
        };
        assert_eq!(client.requestable_scopes().to_string(), "read");
        for grant in [
            GrantType::AuthorizationCode,
            GrantType::Password,
            GrantType::Otp,
        ] {
            client.grants = [grant].into_iter().collect();
            assert_eq!(
                client.requestable_scopes().to_string(),
                "openid read",
                "{grant:?}"
            );
        }
    }

    #[test]
    fn the_refusal_says_why() {
        let message = check_connect_url("http://crm.example.com/c")
            .unwrap_err()
            .to_string();
        assert!(message.contains("must use https"), "{message}");
        assert!(message.contains("auth token"), "{message}");
        assert!(message.contains("loopback"), "{message}");
    }
}
