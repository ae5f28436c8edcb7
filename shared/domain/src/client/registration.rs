//! Clients that register themselves (RFC 7591) and manage their registration (RFC 7592): the
//! metadata they send, the checks it passes, and what is kept of the registration on the client.
//!
//! A self-registered client has no administrator who vouched for it, so what it may be is
//! narrower than what `tokenctl` allows: the code flow and refresh only, never first-party, and
//! addresses checked by the same rules as an administrator's (https, or http on loopback).

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

use super::GrantType;
use crate::jose::PublicJwkSet;
use crate::secrets::TokenHash;
use crate::Scopes;

/// How a self-registered client authenticates at the token endpoint (RFC 7591 §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RegisteredAuthMethod {
    /// A public client: it has no secret and sends only `client_id`; PKCE protects its codes.
    None,
    ClientSecretBasic,
    ClientSecretPost,
    PrivateKeyJwt,
}

impl RegisteredAuthMethod {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "none" => Some(Self::None),
            "client_secret_basic" => Some(Self::ClientSecretBasic),
            "client_secret_post" => Some(Self::ClientSecretPost),
            "private_key_jwt" => Some(Self::PrivateKeyJwt),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::ClientSecretBasic => "client_secret_basic",
            Self::ClientSecretPost => "client_secret_post",
            Self::PrivateKeyJwt => "private_key_jwt",
        }
    }

    /// Whether the client gets a secret at registration.
    pub fn uses_secret(self) -> bool {
        matches!(self, Self::ClientSecretBasic | Self::ClientSecretPost)
    }
}

/// What is kept of a self-registration on its client. Records of clients an administrator
/// created have none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DynamicRegistration {
    /// The registration access token (RFC 7592) as a digest: it is a bearer credential.
    pub access_token_hash: TokenHash,
    pub auth_method: RegisteredAuthMethod,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_uri: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logo_uri: Option<String>,
    /// The client's privacy policy and terms of service (RFC 7591 §2), linked from the consent
    /// page. Records written before the fields existed read as none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_uri: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tos_uri: Option<String>,
    /// OpenID Connect Back-Channel Logout 1.0 §2.2, echoed as registered: every logout token
    /// carries `sid` anyway. Records written before the field existed read as `false`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub backchannel_logout_session_required: bool,
    /// Where a `private_key_jwt` client publishes its keys instead of registering a `jwks`:
    /// read at use, kept per `Cache-Control`. Records written before the field existed read as
    /// none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks_uri: Option<String>,
}

/// The metadata of a registration request or a management `PUT`, as sent. Members this server
/// does not know are ignored (RFC 7591 §2); the ones it knows are checked by [`Self::check`].
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ClientMetadata {
    pub redirect_uris: Option<Vec<String>>,
    pub client_name: Option<String>,
    pub client_uri: Option<String>,
    pub logo_uri: Option<String>,
    pub policy_uri: Option<String>,
    pub tos_uri: Option<String>,
    pub grant_types: Option<Vec<String>>,
    pub response_types: Option<Vec<String>>,
    pub token_endpoint_auth_method: Option<String>,
    pub scope: Option<String>,
    pub jwks: Option<serde_json::Value>,
    pub jwks_uri: Option<String>,
    /// RFC 9126 §6: the client's authorization requests must be pushed.
    pub require_pushed_authorization_requests: Option<bool>,
    /// OpenID Connect RP-Initiated Logout 1.0 §3.1: where logout may send the browser back.
    pub post_logout_redirect_uris: Option<Vec<String>>,
    /// OpenID Connect Back-Channel Logout 1.0 §2.2: where logout tokens are POSTed.
    pub backchannel_logout_uri: Option<String>,
    pub backchannel_logout_session_required: Option<bool>,
}

/// Checked metadata: every member has its value or its default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedMetadata {
    pub redirect_uris: Vec<String>,
    pub client_name: Option<String>,
    pub client_uri: Option<String>,
    pub logo_uri: Option<String>,
    pub policy_uri: Option<String>,
    pub tos_uri: Option<String>,
    pub grant_types: BTreeSet<GrantType>,
    pub auth_method: RegisteredAuthMethod,
    pub scope: Scopes,
    pub jwks: Option<PublicJwkSet>,
    pub jwks_uri: Option<String>,
    pub require_par: bool,
    pub post_logout_redirect_uris: Vec<String>,
    pub backchannel_logout_uri: Option<String>,
    pub backchannel_logout_session_required: bool,
}

/// The two refusals of RFC 7591 §3.2.2 this server answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegistrationErrorKind {
    InvalidRedirectUri,
    InvalidClientMetadata,
}

impl RegistrationErrorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidRedirectUri => "invalid_redirect_uri",
            Self::InvalidClientMetadata => "invalid_client_metadata",
        }
    }
}

/// Why registration metadata is refused; the description names the member.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{description}")]
pub struct RegistrationError {
    pub kind: RegistrationErrorKind,
    pub description: String,
}

impl RegistrationError {
    fn redirect(description: impl Into<String>) -> Self {
        Self {
            kind: RegistrationErrorKind::InvalidRedirectUri,
            description: description.into(),
        }
    }

    fn metadata(description: impl Into<String>) -> Self {
        Self {
            kind: RegistrationErrorKind::InvalidClientMetadata,
            description: description.into(),
        }
    }
}

/// The longest `client_name` kept: it is shown on the consent page.
pub const MAX_CLIENT_NAME_CHARS: usize = 100;
/// At most this many redirect URIs per registration: each is matched on every authorization.
pub const MAX_REDIRECT_URIS: usize = 10;

/// Why a client's name cannot be shown to users.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NameProblem {
    #[error("must have 1 to {MAX_CLIENT_NAME_CHARS} characters")]
    Length,
    #[error("must not contain control characters")]
    Control,
    /// Bidirectional overrides (U+202E), zero-width joiners and the other format characters
    /// (Unicode category Cf) make a name read as another on the consent page.
    #[error("must not contain format characters (such as bidirectional controls)")]
    Format,
}

/// A name users are shown (consent, device approval, the account page), in NFC so that one
/// name has one stored spelling.
pub fn display_name(name: &str) -> Result<String, NameProblem> {
    use unicode_normalization::UnicodeNormalization;
    use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

    if name.chars().any(char::is_control) {
        return Err(NameProblem::Control);
    }
    if name
        .chars()
        .any(|c| c.general_category() == GeneralCategory::Format)
    {
        return Err(NameProblem::Format);
    }
    let normalized: String = name.nfc().collect();
    if normalized.trim().is_empty() || normalized.chars().count() > MAX_CLIENT_NAME_CHARS {
        return Err(NameProblem::Length);
    }
    Ok(normalized)
}

impl ClientMetadata {
    /// Checks the metadata against the rules for self-registered clients; `allowed` is the
    /// deployment's `REGISTRATION_SCOPES`, also the default `scope`.
    pub fn check(self, allowed: &Scopes) -> Result<CheckedMetadata, RegistrationError> {
        let redirect_uris = check_redirect_uris(self.redirect_uris)?;
        let grant_types = check_grant_types(self.grant_types)?;
        check_response_types(self.response_types)?;
        let auth_method = match self.token_endpoint_auth_method.as_deref() {
            None => RegisteredAuthMethod::ClientSecretBasic,
            Some(text) => RegisteredAuthMethod::parse(text).ok_or_else(|| {
                RegistrationError::metadata(format!(
                    "token_endpoint_auth_method {text} is not supported (none, \
                     client_secret_basic, client_secret_post, private_key_jwt)"
                ))
            })?,
        };
        let jwks_uri = check_jwks_uri(auth_method, self.jwks.is_some(), self.jwks_uri)?;
        let jwks = match (auth_method, self.jwks) {
            (RegisteredAuthMethod::PrivateKeyJwt, None) if jwks_uri.is_some() => None,
            (RegisteredAuthMethod::PrivateKeyJwt, Some(value)) => Some(
                PublicJwkSet::parse_signing_keys(value)
                    .map_err(|e| RegistrationError::metadata(format!("jwks: {e}")))?,
            ),
            (RegisteredAuthMethod::PrivateKeyJwt, None) => {
                return Err(RegistrationError::metadata(
                    "private_key_jwt needs jwks (a JWK Set of public keys) or jwks_uri",
                ))
            }
            (_, Some(_)) => {
                return Err(RegistrationError::metadata(
                    "jwks is only accepted with token_endpoint_auth_method private_key_jwt",
                ))
            }
            (_, None) => None,
        };
        let scope = match self.scope.as_deref() {
            None => allowed.clone(),
            Some(text) => {
                let scope = Scopes::parse(text)
                    .map_err(|e| RegistrationError::metadata(format!("scope: {e}")))?;
                if !scope.is_subset_of(allowed) {
                    return Err(RegistrationError::metadata(format!(
                        "scope may only name {allowed}"
                    )));
                }
                scope
            }
        };
        let client_name = self
            .client_name
            .map(|name| display_name(&name))
            .transpose()
            .map_err(|problem| RegistrationError::metadata(format!("client_name {problem}")))?;
        Ok(CheckedMetadata {
            redirect_uris,
            client_name,
            client_uri: check_web_uri("client_uri", self.client_uri)?,
            logo_uri: check_web_uri("logo_uri", self.logo_uri)?,
            policy_uri: check_https_uri("policy_uri", self.policy_uri)?,
            tos_uri: check_https_uri("tos_uri", self.tos_uri)?,
            grant_types,
            auth_method,
            scope,
            jwks,
            jwks_uri,
            require_par: self.require_pushed_authorization_requests == Some(true),
            post_logout_redirect_uris: check_post_logout_redirect_uris(
                self.post_logout_redirect_uris,
            )?,
            backchannel_logout_uri: check_backchannel_logout(self.backchannel_logout_uri)?,
            backchannel_logout_session_required: self.backchannel_logout_session_required
                == Some(true),
        })
    }
}

#[path = "registration_checks.rs"]
mod checks;

use checks::*;

#[cfg(test)]
#[path = "registration_tests.rs"]
mod tests;
