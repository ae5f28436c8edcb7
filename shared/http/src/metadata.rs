//! Discovery: RFC 8414 authorization server metadata, served also as OpenID Connect discovery, and
//! the JWK Set at its OAuth 2.0 path (docs/decisions.md, "Revocation, introspection and
//! connections").

use std::sync::Arc;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use http::{header, HeaderValue};
use serde::Serialize;
use utoipa::ToSchema;

use crate::domain::{GrantType, ID_JAG_GRANT_PROFILE, ID_JAG_TOKEN_TYPE};
use crate::jose::Algorithm;
use crate::requests::ACCESS_TOKEN_TYPE;
use crate::services::Services;

/// The paths this deployment serves, relative to its geolocation. The routers and the metadata
/// both use these, so the metadata cannot advertise a path that is not routed.
pub mod paths {
    pub const TOKEN: &str = "/oauth2/v0/token";
    pub const AUTHORIZE: &str = "/oauth2/v0/authorize";
    pub const OTP: &str = "/oauth2/v0/otp";
    pub const DEVICE_AUTHORIZATION: &str = "/oauth2/v0/device_authorization";
    /// Pushed authorization requests (RFC 9126).
    pub const PAR: &str = "/oauth2/v0/par";
    /// The device grant's verification page.
    pub const DEVICE: &str = "/oauth2/v0/device";
    pub const REVOKE: &str = "/oauth2/v0/revoke";
    pub const INTROSPECT: &str = "/oauth2/v0/introspect";
    pub const JWKS: &str = "/oauth2/v0/jwks";
    pub const USERINFO: &str = "/oauth2/v0/userinfo";
    pub const LOGOUT: &str = "/oauth2/v0/logout";
    pub const REGISTER: &str = "/oauth2/v0/register";
    pub const CONNECTIONS: &str = "/app-mgmt/v0/connections";
    pub const OAUTH_METADATA: &str = "/.well-known/oauth-authorization-server";
    pub const OPENID_CONFIGURATION: &str = "/.well-known/openid-configuration";
    pub const OPENAPI: &str = "/openapi.json";
}

/// Client authentication at the token, revocation and introspection endpoints.
const CLIENT_AUTH_METHODS: [&str; 3] = [
    "client_secret_basic",
    "client_secret_post",
    "private_key_jwt",
];

/// The claims of ID tokens (OpenID Connect Core §2) and of the userinfo endpoint.
const CLAIMS: [&str; 18] = [
    "iss",
    "sub",
    "aud",
    "exp",
    "iat",
    "nbf",
    "auth_time",
    "amr",
    "idp",
    "sid",
    "nonce",
    "at_hash",
    "principal_type",
    "preferred_username",
    "name",
    "company_id",
    "email",
    "email_verified",
];

/// RFC 8414 §2 (and the OpenID Connect Discovery fields a relying party needs).
// The registry's fields: each boolean is a name the specifications chose.
#[allow(clippy::struct_excessive_bools)]
#[derive(Debug, Serialize, ToSchema)]
pub struct AuthorizationServerMetadata {
    /// This deployment's geolocation: the `iss` of every token it signs.
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub revocation_endpoint: String,
    pub introspection_endpoint: String,
    pub jwks_uri: String,
    /// OpenID Connect Core §5.3.
    pub userinfo_endpoint: String,
    /// OpenID Connect RP-Initiated Logout 1.0.
    pub end_session_endpoint: String,
    /// Where one-time passwords are requested (docs/decisions.md, "One-time passwords"); not an RFC
    /// 8414 field.
    pub otp_endpoint: String,
    /// RFC 8628 §4.
    pub device_authorization_endpoint: String,
    /// RFC 9126 §5.
    pub pushed_authorization_request_endpoint: String,
    /// RFC 9126 §5: `false`; clients registered with `--require-par` must push all the same.
    pub require_pushed_authorization_requests: bool,
    pub grant_types_supported: Vec<&'static str>,
    pub response_types_supported: Vec<&'static str>,
    pub code_challenge_methods_supported: Vec<&'static str>,
    pub token_endpoint_auth_methods_supported: Vec<&'static str>,
    pub revocation_endpoint_auth_methods_supported: Vec<&'static str>,
    pub introspection_endpoint_auth_methods_supported: Vec<&'static str>,
    /// What `private_key_jwt` assertions may be signed with (RFC 8414 §2), at each endpoint.
    pub token_endpoint_auth_signing_alg_values_supported: Vec<&'static str>,
    pub revocation_endpoint_auth_signing_alg_values_supported: Vec<&'static str>,
    pub introspection_endpoint_auth_signing_alg_values_supported: Vec<&'static str>,
    pub id_token_signing_alg_values_supported: Vec<&'static str>,
    pub subject_types_supported: Vec<&'static str>,
    /// The scopes the server itself interprets (`openid` any client that signs users in may
    /// ask; `profile`, `email` and `offline_access` when registered for it) and, while clients
    /// may register themselves, every scope of `REGISTRATION_SCOPES`: what an arriving client
    /// (an MCP agent reads this list to choose its request) may really ask. Other applications'
    /// own scopes are per client and not listed.
    pub scopes_supported: Vec<String>,
    /// What ID tokens and the userinfo endpoint may say.
    pub claims_supported: Vec<&'static str>,
    pub prompt_values_supported: Vec<&'static str>,
    /// RFC 9207: every authorization response carries `iss`.
    pub authorization_response_iss_parameter_supported: bool,
    /// Request objects (RFC 9101) signed with a key of the client's JWK Set.
    pub request_parameter_supported: bool,
    /// RFC 9101 §10.1: ES256, PS256, EdDSA, as for `private_key_jwt`; never `none`.
    pub request_object_signing_alg_values_supported: Vec<&'static str>,
    /// Only the PAR endpoint's `request_uri`s are accepted; no other address is fetched.
    pub request_uri_parameter_supported: bool,
    /// RFC 9449 §5.1: the algorithms DPoP proofs may be signed with.
    pub dpop_signing_alg_values_supported: Vec<&'static str>,
    /// OpenID Connect Back-Channel Logout 1.0 §2.1: clients registered with a
    /// `backchannel_logout_uri` are sent a logout token when a session they took part in ends.
    pub backchannel_logout_supported: bool,
    /// Logout tokens always carry `sid`, as ID tokens issued in a session do.
    pub backchannel_logout_session_supported: bool,
    /// draft-ietf-oauth-client-id-metadata-document: `true` when `CLIENT_ID_METADATA_DOCUMENTS`
    /// is `on`, so that a `client_id` may be the https URL of the client's metadata document.
    pub client_id_metadata_document_supported: bool,
    /// draft-ietf-oauth-identity-assertion-authz-grant: identity assertions (ID-JAG) of a
    /// company IdP added with `--id-jag` are redeemed with the jwt-bearer grant.
    pub authorization_grant_profiles_supported: Vec<&'static str>,
    /// draft-ietf-oauth-identity-chaining §6: what a token exchange may ask for
    /// (`requested_token_type`), an identity assertion for another authorization server among
    /// them.
    pub identity_chaining_requested_token_types_supported: Vec<&'static str>,
    /// RFC 7591: only when `DYNAMIC_REGISTRATION` is `open` or `token`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registration_endpoint: Option<String>,
}

impl AuthorizationServerMetadata {
    pub fn new(services: &Services) -> Self {
        let base = services.geolocation().as_str();
        let at = |path: &str| format!("{base}{path}");
        let registration_on =
            services.policy.registration.mode != token_core::config::RegistrationMode::Off;
        // Public clients (pinned to `none` by an administrator, or self-registered) authenticate
        // with their client_id alone.
        let mut token_auth_methods = CLIENT_AUTH_METHODS.to_vec();
        token_auth_methods.push("none");
        Self {
            issuer: base.to_owned(),
            authorization_endpoint: at(paths::AUTHORIZE),
            token_endpoint: at(paths::TOKEN),
            revocation_endpoint: at(paths::REVOKE),
            introspection_endpoint: at(paths::INTROSPECT),
            jwks_uri: at(paths::JWKS),
            userinfo_endpoint: at(paths::USERINFO),
            end_session_endpoint: at(paths::LOGOUT),
            otp_endpoint: at(paths::OTP),
            device_authorization_endpoint: at(paths::DEVICE_AUTHORIZATION),
            pushed_authorization_request_endpoint: at(paths::PAR),
            require_pushed_authorization_requests: false,
            grant_types_supported: GrantType::ALL.iter().map(|g| g.as_str()).collect(),
            authorization_grant_profiles_supported: vec![ID_JAG_GRANT_PROFILE],
            identity_chaining_requested_token_types_supported: vec![
                ACCESS_TOKEN_TYPE,
                ID_JAG_TOKEN_TYPE,
            ],
            response_types_supported: vec!["code"],
            code_challenge_methods_supported: vec!["S256"],
            token_endpoint_auth_methods_supported: token_auth_methods,
            revocation_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS.to_vec(),
            introspection_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS.to_vec(),
            token_endpoint_auth_signing_alg_values_supported: Algorithm::names(),
            revocation_endpoint_auth_signing_alg_values_supported: Algorithm::names(),
            introspection_endpoint_auth_signing_alg_values_supported: Algorithm::names(),
            id_token_signing_alg_values_supported: vec!["ES256"],
            subject_types_supported: vec!["public"],
            scopes_supported: scopes_supported(services, registration_on),
            claims_supported: CLAIMS.to_vec(),
            prompt_values_supported: vec!["none", "login", "consent"],
            authorization_response_iss_parameter_supported: true,
            request_parameter_supported: true,
            request_object_signing_alg_values_supported: Algorithm::names(),
            request_uri_parameter_supported: false,
            dpop_signing_alg_values_supported: crate::jose::Algorithm::names(),
            backchannel_logout_supported: true,
            backchannel_logout_session_supported: true,
            client_id_metadata_document_supported: services.client_documents.is_on(),
            registration_endpoint: registration_on.then(|| at(paths::REGISTER)),
        }
    }
}

fn scopes_supported(services: &Services, registration_on: bool) -> Vec<String> {
    let mut scopes: Vec<String> = ["openid", "profile", "email", "offline_access"]
        .map(str::to_owned)
        .to_vec();
    if registration_on {
        for scope in services.policy.registration.scopes.iter() {
            if !scopes.iter().any(|listed| listed == scope) {
                scopes.push(scope.to_owned());
            }
        }
    }
    scopes
}

/// Metadata changes only with a deployment; caching it briefly is safe.
fn cacheable(mut response: Response) -> Response {
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=300"),
    );
    response
}

/// RFC 8414 authorization server metadata.
#[utoipa::path(
    get,
    path = "/.well-known/oauth-authorization-server",
    tag = "discovery",
    responses((status = 200, body = AuthorizationServerMetadata)),
)]
pub async fn oauth_metadata(State(services): State<Arc<Services>>) -> Response {
    cacheable(Json(AuthorizationServerMetadata::new(&services)).into_response())
}

/// The same document, at the OpenID Connect discovery path.
#[utoipa::path(
    get,
    path = "/.well-known/openid-configuration",
    tag = "discovery",
    responses((status = 200, body = AuthorizationServerMetadata)),
)]
pub async fn openid_configuration(State(services): State<Arc<Services>>) -> Response {
    oauth_metadata(State(services)).await
}

#[cfg(test)]
mod tests {
    use super::paths;
    use crate::auth::client_assertion::AUDIENCE_PATHS;

    /// An assertion's `aud` may name any endpoint that authenticates clients: the grants keep
    /// that list without importing `http`, so it is checked against the routes' paths here.
    #[test]
    fn assertion_audiences_are_the_client_authenticating_routes() {
        assert_eq!(
            AUDIENCE_PATHS,
            [
                paths::TOKEN,
                "/v0/token",
                paths::REVOKE,
                paths::INTROSPECT,
                paths::OTP,
                paths::DEVICE_AUTHORIZATION,
                paths::PAR,
            ]
        );
    }
}
