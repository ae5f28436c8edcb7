//! The authorize request (docs/decisions.md, "Authorization code flow") parsed and checked in the
//! contract's order.
//!
//! Two phases, because the redirect target must be trusted before anything is sent to it:
//! 1. [`AuthorizeParams::client_id`] and then [`AuthorizeParams::validate`] up to the
//!    `redirect_uri` match: failures are [`AuthorizeRejection::Page`] (an HTML page, 400, never a
//!    redirect to an unchecked address);
//! 2. everything after: failures are [`AuthorizeRejection::Redirect`] to the registered URI.

use serde::{Deserialize, Serialize};

use super::redirect::ErrorRedirect;
use crate::domain::pkce::{is_well_formed_challenge, S256};
use crate::domain::{Client, ClientId, GrantType, Resource, Scopes, OPENID};
use crate::errors::ErrorCode;

/// The query (GET) or form (POST) parameters of `/oauth2/v0/authorize`, as sent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct AuthorizeParams {
    pub client_id: Option<String>,
    pub redirect_uri: Option<String>,
    pub response_type: Option<String>,
    pub scope: Option<String>,
    pub state: Option<String>,
    pub nonce: Option<String>,
    pub prompt: Option<String>,
    pub display: Option<String>,
    pub code_challenge: Option<String>,
    pub code_challenge_method: Option<String>,
    /// OpenID Connect Core §3.1.2.1: seconds since the last sign-in the client accepts; an
    /// older sign-in session signs in again. The ID token's `auth_time` says when.
    pub max_age: Option<String>,
    /// Pre-fills the sign-in form's login.
    pub login_hint: Option<String>,
    /// A company identity provider's id: the sign-in goes straight there.
    pub idp_hint: Option<String>,
    /// An ID token this service issued to the client, naming the user it expects.
    pub id_token_hint: Option<String>,
    /// Request objects (OpenID Connect Core §6) are not supported: refused, never ignored.
    pub request: Option<String>,
    pub request_uri: Option<String>,
    /// RFC 9449 §10: the thumbprint of the client's DPoP key, binding the code to it.
    pub dpop_jkt: Option<String>,
    /// `resource` (RFC 8707), which may repeat: read by the HTTP layer from the raw query or
    /// form, since a field here holds one value.
    #[serde(skip)]
    pub resources: Vec<String>,
}

/// What the authorize checks need to know about the registered client. Built by the caller from
/// the stored client, so this module stays free of the store.
#[derive(Debug, Clone, Copy)]
pub struct RegisteredClient<'a> {
    pub id: ClientId,
    pub enabled: bool,
    pub allowed_scopes: &'a Scopes,
    /// Registered with `tokenctl clients create --redirect-uri`; matched exactly.
    pub redirect_uris: &'a [String],
    /// The client's grants include `authorization_code`.
    pub may_use_authorization_code: bool,
    /// A public client (no secret): nothing but PKCE binds its code to it, so every request
    /// must carry an S256 challenge (RFC 9700 §2.1.1).
    pub requires_pkce: bool,
}

/// Problems found before the client and its `redirect_uri` are known to match: shown as an
/// HTML page with status 400, never redirected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum UntrustedRedirect {
    #[error("The request names no application (client_id is missing).")]
    ClientIdMissing,
    #[error("The application that sent you here is not known.")]
    UnknownClient,
    /// A `client_id` URL whose metadata document could not be fetched or does not pass.
    #[error("The application that sent you here could not be identified: its description (client ID metadata document) could not be fetched or is not valid. Please contact the application's developers.")]
    ClientDocumentUnusable,
    #[error("The request does not say where to return (redirect_uri is missing).")]
    RedirectUriMissing,
    #[error("The address to return to is not registered for this application.")]
    RedirectUriNotRegistered,
    /// RFC 9126: a `request_uri` that is unknown, used, expired or another client's.
    #[error("This sign-in request has expired or was already used. Please go back to the application and start again.")]
    RequestUriInvalid,
    /// The client must push its requests (`--require-par`), and this one was not pushed.
    #[error("This application must send its sign-in requests another way (error 175: authorization requests must be pushed). Please contact the application's developers.")]
    PushedRequestRequired,
    /// RFC 9101: a `request` object that does not verify, before any address was trusted.
    #[error("The application's request could not be verified (error 177: the request object is invalid). Please go back to the application and start again.")]
    RequestObjectInvalid,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthorizeRejection {
    /// Render `http::pages::render_error` with status 400.
    Page(UntrustedRedirect),
    /// Answer `302` with `Location: redirect.location()`.
    Redirect(ErrorRedirect),
}

/// The `prompt` values of OpenID Connect Core §3.1.2.1 that the contract accepts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prompt {
    pub login: bool,
    pub consent: bool,
    /// No page may be shown: a live sign-in session and a remembered consent answer with a
    /// code, anything else with `login_required` or `consent_required`.
    pub none: bool,
}

/// A request that passed every check: what the pending request and the code are built from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValidatedAuthorization {
    pub client_id: ClientId,
    pub redirect_uri: String,
    pub scopes: Scopes,
    pub state: Option<String>,
    pub nonce: Option<String>,
    pub prompt: Prompt,
    /// RFC 7636 S256 challenge, when sent.
    pub code_challenge: Option<String>,
    /// `max_age` as sent: the ID token then always carries `auth_time`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_age: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub login_hint: Option<String>,
    /// RFC 9449 §10: the code is redeemed only with a DPoP proof by this key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_jkt: Option<String>,
    /// The resources (RFC 8707) the code will grant, set by [`super::resources`] once allowed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<Resource>,
}

impl<'a> RegisteredClient<'a> {
    pub fn of(client: &'a Client) -> Self {
        Self {
            id: client.id,
            enabled: client.enabled,
            allowed_scopes: &client.allowed_scopes,
            redirect_uris: &client.redirect_uris,
            may_use_authorization_code: client.may_use(GrantType::AuthorizationCode),
            // Public clients (nothing else binds their codes) and the FAPI 2.0 profile.
            requires_pkce: client.is_public() || client.is_fapi2(),
        }
    }
}

#[cfg(test)]
impl ValidatedAuthorization {
    /// A request for a random client to `https://app.example/cb` with `scopes`, nothing else
    /// asked: what the tests of the code, the cookie and the CSRF token adjust.
    pub(crate) fn for_tests(scopes: &str) -> Self {
        use crate::random::{OsRandom, RandomExt};
        Self {
            client_id: ClientId::new(OsRandom.uuid()),
            redirect_uri: "https://app.example/cb".into(),
            scopes: if scopes.is_empty() {
                Scopes::empty()
            } else {
                Scopes::parse(scopes).unwrap()
            },
            state: None,
            nonce: None,
            prompt: Prompt::default(),
            code_challenge: None,
            max_age: None,
            login_hint: None,
            dpop_jkt: None,
            resources: Vec::new(),
        }
    }
}

/// The scope that only `prompt=consent` may ask for (OpenID Connect Core §11).
pub const OFFLINE_ACCESS: &str = "offline_access";

impl AuthorizeParams {
    /// The parameters of a pushed request or a request object, by name (docs/decisions.md,
    /// "Pushed authorization requests and request objects").
    pub fn from_parameters(
        parameters: &std::collections::BTreeMap<String, String>,
    ) -> Result<Self, serde_json::Error> {
        let mut params: Self = serde_json::to_value(parameters).and_then(serde_json::from_value)?;
        // `resource` may repeat: kept as one value of space-separated URIs (a URI holds none).
        params.resources = parameters
            .get(crate::requests::RESOURCE)
            .map(|resources| {
                resources
                    .split(' ')
                    .filter(|r| !r.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        Ok(params)
    }

    /// The first check: which client? The caller then looks it up; an unknown one is
    /// `UntrustedRedirect::UnknownClient`.
    pub fn client_id(&self) -> Result<ClientId, AuthorizeRejection> {
        ClientId::parse(self.client_id_text()?)
            .map_err(|_| AuthorizeRejection::Page(UntrustedRedirect::UnknownClient))
    }

    /// `client_id` as sent: a UUID, or (client ID metadata documents) a URL.
    pub fn client_id_text(&self) -> Result<&str, AuthorizeRejection> {
        non_empty(&self.client_id)
            .ok_or(AuthorizeRejection::Page(UntrustedRedirect::ClientIdMissing))
    }

    /// Every remaining check, in the contract's order, against the client `client_id()` named.
    pub fn validate(
        &self,
        client: &RegisteredClient<'_>,
    ) -> Result<ValidatedAuthorization, AuthorizeRejection> {
        let page = AuthorizeRejection::Page;
        let redirect_uri =
            non_empty(&self.redirect_uri).ok_or(page(UntrustedRedirect::RedirectUriMissing))?;
        if !client.redirect_uris.iter().any(|r| r == redirect_uri) {
            return Err(page(UntrustedRedirect::RedirectUriNotRegistered));
        }
        // From here on the address is the client's own: errors go back to it.
        let openid_refusal = |error, description| {
            AuthorizeRejection::Redirect(ErrorRedirect::openid(
                redirect_uri,
                self.state.as_deref(),
                error,
                description,
            ))
        };
        // A request object may carry any of the parameters checked below: refused first.
        if non_empty(&self.request).is_some() {
            return Err(openid_refusal(
                "request_not_supported",
                "request objects are not supported",
            ));
        }
        if non_empty(&self.request_uri).is_some() {
            return Err(openid_refusal(
                "request_uri_not_supported",
                "request objects are not supported",
            ));
        }
        let fail = |code: ErrorCode| {
            AuthorizeRejection::Redirect(ErrorRedirect::from_code(
                redirect_uri,
                self.state.as_deref(),
                code,
            ))
        };
        if !client.enabled {
            return Err(fail(ErrorCode::ClientDisabled));
        }
        let fail_as = |code: ErrorCode, error: &'static str| {
            AuthorizeRejection::Redirect(
                ErrorRedirect::from_code(redirect_uri, self.state.as_deref(), code)
                    .with_error(error),
            )
        };
        if !client.may_use_authorization_code {
            return Err(fail_as(ErrorCode::UnsupportedGrant, "unauthorized_client"));
        }
        self.check_response_type().map_err(|code| match code {
            ErrorCode::UnsupportedGrant if non_empty(&self.response_type).is_none() => {
                fail_as(code, "invalid_request")
            }
            ErrorCode::UnsupportedGrant => fail_as(code, "unsupported_response_type"),
            other => fail(other),
        })?;
        if let Some(display) = non_empty(&self.display) {
            if !matches!(display, "page" | "popup" | "touch" | "wap") {
                return Err(fail(ErrorCode::DisplayInvalid));
            }
        }
        let prompt = parse_prompt(non_empty(&self.prompt)).map_err(fail)?;
        let scopes =
            requested_scopes(non_empty(&self.scope), client.allowed_scopes).map_err(fail)?;
        if scopes.contains(OFFLINE_ACCESS) && !prompt.consent {
            return Err(fail(ErrorCode::PromptConsentRequiredForOffline));
        }
        let code_challenge = self
            .check_pkce()
            .map_err(|code| fail_as(code, "invalid_request"))?;
        if client.requires_pkce && code_challenge.is_none() {
            return Err(fail_as(ErrorCode::UnsupportedGrant, "invalid_request"));
        }
        let max_age = match non_empty(&self.max_age) {
            None => None,
            Some(text) => Some(text.parse::<u64>().map_err(|_| {
                openid_refusal("invalid_request", "max_age must be a number of seconds")
            })?),
        };
        let dpop_jkt = match non_empty(&self.dpop_jkt) {
            None => None,
            Some(jkt) if crate::auth::dpop::is_well_formed_thumbprint(jkt) => Some(jkt.to_owned()),
            Some(_) => {
                return Err(openid_refusal(
                    "invalid_request",
                    "dpop_jkt must be a base64url SHA-256 JWK thumbprint",
                ))
            }
        };
        Ok(ValidatedAuthorization {
            client_id: client.id,
            redirect_uri: redirect_uri.to_owned(),
            scopes,
            state: self.state.clone(),
            nonce: non_empty(&self.nonce).map(str::to_owned),
            prompt,
            code_challenge,
            max_age,
            login_hint: non_empty(&self.login_hint).map(str::to_owned),
            dpop_jkt,
            resources: Vec::new(),
        })
    }

    /// `code`, optionally with `id_token` (the ID token then comes from the token endpoint).
    /// `id_token` needs a `nonce` (117), checked first so the specific code wins.
    fn check_response_type(&self) -> Result<(), ErrorCode> {
        let values: Vec<&str> = non_empty(&self.response_type)
            .map(|t| t.split(' ').filter(|v| !v.is_empty()).collect())
            .unwrap_or_default();
        if values.contains(&"id_token") && non_empty(&self.nonce).is_none() {
            return Err(ErrorCode::NonceMandatory);
        }
        let only_known = values.iter().all(|v| matches!(*v, "code" | "id_token"));
        if !values.contains(&"code") || !only_known {
            return Err(ErrorCode::UnsupportedGrant);
        }
        Ok(())
    }

    /// PKCE is optional for these confidential clients, but only S256: `plain` (also the
    /// RFC 7636 default when the method is absent) is refused with 60.
    fn check_pkce(&self) -> Result<Option<String>, ErrorCode> {
        let challenge = non_empty(&self.code_challenge);
        let method = non_empty(&self.code_challenge_method);
        match (challenge, method) {
            (None, None) => Ok(None),
            (Some(challenge), Some(S256)) if is_well_formed_challenge(challenge) => {
                Ok(Some(challenge.to_owned()))
            }
            _ => Err(ErrorCode::UnsupportedGrant),
        }
    }
}

fn non_empty(value: &Option<String>) -> Option<&str> {
    value.as_deref().filter(|v| !v.is_empty())
}

/// Space-separated; `none` may not be combined with another value (OpenID Connect Core).
fn parse_prompt(text: Option<&str>) -> Result<Prompt, ErrorCode> {
    let mut prompt = Prompt::default();
    let Some(text) = text else {
        return Ok(prompt);
    };
    for value in text.split(' ').filter(|v| !v.is_empty()) {
        match value {
            "login" => prompt.login = true,
            "consent" => prompt.consent = true,
            "none" => prompt.none = true,
            _ => return Err(ErrorCode::PromptInvalid),
        }
    }
    if prompt.none && (prompt.login || prompt.consent) {
        return Err(ErrorCode::PromptInvalid);
    }
    Ok(prompt)
}

/// Absent means everything the client may have, as at the token endpoint. `openid` needs no
/// registration: every client of this flow signs users in.
fn requested_scopes(text: Option<&str>, allowed: &Scopes) -> Result<Scopes, ErrorCode> {
    let Some(text) = text else {
        return Ok(allowed.clone());
    };
    match Scopes::parse(text) {
        Ok(requested) if requested.is_subset_of(&allowed.with(OPENID)) => Ok(requested),
        _ => Err(ErrorCode::ScopeExceedsGrant),
    }
}
