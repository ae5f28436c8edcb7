//! Applications (OAuth clients) as registered by application management; the addresses a
//! registration names are checked in `urls`.

mod metadata_document;
mod new_client;
mod registration;
mod urls;

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

use super::{ClientId, ClientSecrets, ListedSecret, Resource, Scopes, SecretCheck, OPENID};
use crate::clock::UnixTime;
use crate::jose::PublicJwkSet;
use crate::IdJagTarget;

pub use metadata_document::{
    cache_lifetime, DocumentClient, DocumentRefusal, DocumentUrl, MetadataDocument,
    DOCUMENT_MAX_AGE_SECONDS, DOCUMENT_MIN_AGE_SECONDS, DOCUMENT_STALE_SECONDS,
    MAX_DOCUMENT_URL_LEN,
};
pub use new_client::NewClient;
pub use registration::{
    CheckedMetadata, ClientMetadata, DynamicRegistration, RegisteredAuthMethod, RegistrationError,
    RegistrationErrorKind,
};
pub use urls::{
    check_backchannel_logout_uri, check_connect_url, check_post_logout_redirect_uri,
    check_redirect_uri, InvalidBackchannelLogoutUri, InvalidConnectUrl, InvalidRedirectUri,
};

/// The grants a client may be allowed to use (`tokenctl clients create --grants`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GrantType {
    ClientCredentials,
    RefreshToken,
    Password,
    AuthorizationCode,
    Otp,
    /// RFC 8628; `tokenctl` names it `device_code`, the token request by its URN.
    DeviceCode,
    /// RFC 8693; `tokenctl` names it `token_exchange`, the token request by its URN.
    TokenExchange,
    /// RFC 7523 §2.1 with an identity assertion (ID-JAG) of a company's identity provider;
    /// `tokenctl` names it `jwt_bearer`, the token request by its URN.
    JwtBearer,
}

impl GrantType {
    pub const ALL: [GrantType; 8] = [
        Self::ClientCredentials,
        Self::RefreshToken,
        Self::Password,
        Self::AuthorizationCode,
        Self::Otp,
        Self::DeviceCode,
        Self::TokenExchange,
        Self::JwtBearer,
    ];

    /// RFC 8628 §3.4's `grant_type`.
    pub const DEVICE_CODE_URN: &'static str = "urn:ietf:params:oauth:grant-type:device_code";

    /// RFC 8693 §2.1's `grant_type`.
    pub const TOKEN_EXCHANGE_URN: &'static str = "urn:ietf:params:oauth:grant-type:token-exchange";

    /// RFC 7523 §2.1's `grant_type`.
    pub const JWT_BEARER_URN: &'static str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

    /// The wire value of `grant_type`. `refresh` is accepted as an alias of `refresh_token`
    /// (docs/decisions.md, "Requests and client authentication").
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "client_credentials" => Some(Self::ClientCredentials),
            "refresh_token" | "refresh" => Some(Self::RefreshToken),
            "password" => Some(Self::Password),
            "authorization_code" => Some(Self::AuthorizationCode),
            "otp" => Some(Self::Otp),
            Self::DEVICE_CODE_URN | "device_code" => Some(Self::DeviceCode),
            Self::TOKEN_EXCHANGE_URN | "token_exchange" => Some(Self::TokenExchange),
            Self::JWT_BEARER_URN | "jwt_bearer" => Some(Self::JwtBearer),
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
            Self::DeviceCode => Self::DEVICE_CODE_URN,
            Self::TokenExchange => Self::TOKEN_EXCHANGE_URN,
            Self::JwtBearer => Self::JWT_BEARER_URN,
        }
    }

    /// The name `tokenctl` takes and prints: the wire value, but `device_code` for the grant
    /// whose wire value is a URN.
    pub fn name(self) -> &'static str {
        match self {
            Self::DeviceCode => "device_code",
            Self::TokenExchange => "token_exchange",
            Self::JwtBearer => "jwt_bearer",
            other => other.as_str(),
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
    /// Authorization requests must be pushed (RFC 9126 `require_pushed_authorization_requests`,
    /// `--require-par`): the authorize endpoint refuses one without a `request_uri` (175).
    /// Records written before the field existed read as `false`.
    #[serde(default)]
    pub require_par: bool,
    /// A security profile that tightens every rule it names (`--profile`, `clients
    /// set-profile`). Records written before the field existed read as the default profile.
    #[serde(default, skip_serializing_if = "ClientProfile::is_default")]
    pub profile: ClientProfile,
    /// The one way the client may authenticate (`tokenctl clients set-auth-method`); `None`:
    /// its secret or, with keys registered, `private_key_jwt`. Records written before the field
    /// existed read as `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_method: Option<ClientAuthMethod>,
    /// Where OpenID Connect Back-Channel Logout 1.0 POSTs a logout token when a sign-in session
    /// in which the client received tokens ends (`--backchannel-logout-uri`). Records written
    /// before the field existed read as none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backchannel_logout_uri: Option<String>,
    /// Set for a client that registered itself (RFC 7591): what it may do is narrower, and it
    /// manages its registration with the token whose digest this keeps. Records written before
    /// the field existed, and clients an administrator created, read as `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration: Option<DynamicRegistration>,
    /// The resources (RFC 8707) the client may ask tokens for (`--resource`), within the
    /// deployment's `RESOURCES`. Empty: every resource the deployment allows. Records written
    /// before the field existed read as empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<Resource>,
    /// Set for a client known by its client ID metadata document: its `client_id`, the
    /// document's URL, from which `id` is derived ([`ClientId::of_document_url`]). What leaves
    /// the service as its `client_id` ([`Client::wire_id`]). Such a client is never in the
    /// clients' records, only in the documents' cache (`DocumentClient`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document_url: Option<String>,
    /// The authorization servers the client may ask ID-JAGs for (`tokenctl clients
    /// id-jag-targets`), by issuer. Records written before the field existed read as none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub id_jag_targets: Vec<IdJagTarget>,
}

/// A client's security profile.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientProfile {
    /// The rules every client follows.
    #[default]
    Default,
    /// The FAPI 2.0 Security Profile: pushed requests only, PKCE `S256`, `private_key_jwt`
    /// only, DPoP on every token request, `response_type=code`, codes valid 60 seconds,
    /// refresh tokens kept rather than rotated.
    Fapi2,
}

impl ClientProfile {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::Fapi2 => "fapi2",
        }
    }

    pub fn is_default(&self) -> bool {
        *self == Self::Default
    }
}

/// A client authentication method a client can be pinned to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientAuthMethod {
    /// `client_secret_basic` or `client_secret_post`.
    ClientSecret,
    PrivateKeyJwt,
    /// A public client (`none`, RFC 7591 §2): it authenticates with its `client_id` alone and
    /// its secrets, if any, do not authenticate it. For devices and command-line tools that
    /// cannot keep a secret (the device grant, RFC 8628 §3.1).
    #[serde(rename = "none")]
    Public,
}

impl ClientAuthMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ClientSecret => "client_secret",
            Self::PrivateKeyJwt => "private_key_jwt",
            Self::Public => "none",
        }
    }
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
            GrantType::DeviceCode,
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

    /// Under the FAPI 2.0 Security Profile (`--profile fapi2`).
    pub fn is_fapi2(&self) -> bool {
        self.profile == ClientProfile::Fapi2
    }

    /// Its authorization requests must be pushed: `--require-par`, or the FAPI 2.0 profile.
    pub fn requires_pushed_requests(&self) -> bool {
        self.require_par || self.is_fapi2()
    }

    /// Every token request must carry a DPoP proof: `--require-dpop`, or the FAPI 2.0 profile.
    pub fn requires_dpop(&self) -> bool {
        self.require_dpop || self.is_fapi2()
    }

    /// What a refresh does to the refresh token: the FAPI 2.0 profile keeps it (sliding), as
    /// FAPI 2.0 asks of servers whose refresh tokens are sender-constrained.
    pub fn refresh_policy(&self) -> RefreshRotation {
        if self.is_fapi2() {
            RefreshRotation::Sliding
        } else {
            self.refresh_rotation
        }
    }

    /// Refreshing needs both the grant and the refresh permission.
    pub fn may_refresh(&self) -> bool {
        self.refresh_allowed && self.may_use(GrantType::RefreshToken)
    }

    /// The `client_id` tokens, introspection and pages show: the document's URL for a client
    /// known by its metadata document, otherwise the UUID.
    pub fn wire_id(&self) -> String {
        self.document_url
            .clone()
            .unwrap_or_else(|| self.id.to_string())
    }

    /// A client nobody vouched for: it registered itself (RFC 7591), or it is known by its
    /// client ID metadata document. It may use the code flow and refresh only, is never
    /// first-party, and its consent page is always shown, marked as not verified.
    pub fn is_self_registered(&self) -> bool {
        self.registration.is_some() || self.document_url.is_some()
    }

    /// A client without a secret: self-registered with `token_endpoint_auth_method=none`, or
    /// pinned to `none` by an administrator (`tokenctl clients set-auth-method ID none`). It
    /// authenticates with its `client_id` alone, and only PKCE (or, for the device grant, the
    /// device code) binds what it is issued to it.
    pub fn is_public(&self) -> bool {
        self.auth_method == Some(ClientAuthMethod::Public)
            || self
                .registration
                .as_ref()
                .is_some_and(|r| r.auth_method == RegisteredAuthMethod::None)
    }
}

#[cfg(test)]
mod tests;
