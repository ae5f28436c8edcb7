//! What registration and its management answer: a client's registered metadata (RFC 7591
//! §3.2.1), read back from the client and its registration.

use serde::Serialize;

use crate::clock::UnixTime;
use crate::domain::{Client, ClientId};

/// A client's registration as RFC 7591 §3.2.1 answers it; the credentials only when issued.
#[derive(Debug, Clone, Serialize)]
pub struct RegistrationResponse {
    pub client_id: String,
    pub client_id_issued_at: UnixTime,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret_expires_at: Option<UnixTime>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registration_access_token: Option<String>,
    pub registration_client_uri: String,
    pub redirect_uris: Vec<String>,
    pub client_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_uri: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logo_uri: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy_uri: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tos_uri: Option<String>,
    pub grant_types: Vec<&'static str>,
    pub response_types: Vec<&'static str>,
    pub token_endpoint_auth_method: &'static str,
    pub scope: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jwks: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jwks_uri: Option<String>,
    pub require_pushed_authorization_requests: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub post_logout_redirect_uris: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backchannel_logout_uri: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backchannel_logout_session_required: Option<bool>,
}

/// The path of a client's management endpoint, below the deployment's base URL.
pub fn registration_client_path(id: &ClientId) -> String {
    format!("/oauth2/v0/register/{id}")
}

impl RegistrationResponse {
    /// The metadata of a self-registered `client`; `base` is the deployment's base URL.
    pub fn of(client: &Client, base: &str) -> Option<Self> {
        let registration = client.registration.as_ref()?;
        Some(Self {
            client_id: client.id.to_string(),
            client_id_issued_at: client.created_at,
            client_secret: None,
            client_secret_expires_at: None,
            registration_access_token: None,
            registration_client_uri: format!(
                "{}{}",
                base.trim_end_matches('/'),
                registration_client_path(&client.id)
            ),
            redirect_uris: client.redirect_uris.clone(),
            client_name: client.name.clone(),
            client_uri: registration.client_uri.clone(),
            logo_uri: registration.logo_uri.clone(),
            policy_uri: registration.policy_uri.clone(),
            tos_uri: registration.tos_uri.clone(),
            grant_types: client.grants.iter().map(|g| g.as_str()).collect(),
            response_types: vec!["code"],
            token_endpoint_auth_method: registration.auth_method.as_str(),
            scope: client.allowed_scopes.to_string(),
            jwks: client
                .jwks
                .as_ref()
                .and_then(|jwks| serde_json::to_value(jwks).ok()),
            jwks_uri: registration.jwks_uri.clone(),
            require_pushed_authorization_requests: client.require_par,
            post_logout_redirect_uris: client.post_logout_redirect_uris.clone(),
            backchannel_logout_uri: client.backchannel_logout_uri.clone(),
            backchannel_logout_session_required: client
                .backchannel_logout_uri
                .as_ref()
                .map(|_| registration.backchannel_logout_session_required),
        })
    }
}
