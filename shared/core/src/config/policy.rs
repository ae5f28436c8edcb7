//! The protocol's policy (lifetimes, lockout, limits, sessions, registration, resources,
//! passkeys), as the flows and grants take it from `Services::policy`.

use crate::domain::{Geolocation, ResourcePolicy, Scopes, SessionLimits};

use super::{ConfigError, RateLimits};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    pub refresh_token_ttl_seconds: i64,
    /// A rotated refresh token presented again less than this many seconds after its rotation,
    /// while its successor is unused, is a retry and gets the same successor (docs/decisions.md,
    /// "Refresh tokens"); later, it is reuse. 0: never a retry.
    pub refresh_grace_seconds: i64,
    /// Failed passwords within `lockout_window_seconds` that lock an account (code 14).
    pub lockout_threshold: u32,
    pub lockout_window_seconds: i64,
    pub rate_limits: RateLimits,
    /// `DPOP_NONCE=on`: DPoP proofs must carry a server nonce (RFC 9449 §8).
    pub dpop_nonce: bool,
    /// `SESSION_IDLE_SECONDS` and `SESSION_MAX_SECONDS`: how long a sign-in session lasts.
    pub sessions: SessionLimits,
    /// Whether and how clients may register themselves (RFC 7591).
    pub registration: RegistrationPolicy,
    /// `RESOURCES`: the resources (RFC 8707) tokens may be asked for; empty, any `https` URI
    /// and `http` on loopback.
    pub resources: ResourcePolicy,
    /// `WEBAUTHN_RP_ID`: the passkeys' relying party id; `None` (unset or empty), the
    /// geolocation's host.
    pub webauthn_rp_id: Option<String>,
    /// `CLIENT_ID_METADATA_DOCUMENTS=on`: a `client_id` that is a URL names the client's metadata
    /// document, fetched from it (`crate::client_documents`). Off by default: every such
    /// `client_id` is an unknown client, and the server fetches nothing.
    pub client_id_metadata_documents: bool,
}

/// `DYNAMIC_REGISTRATION`: who may register a client over HTTP.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RegistrationMode {
    /// No registration endpoint (404) and none advertised: the default, since an open endpoint
    /// lets anyone create clients that show up on the consent page.
    #[default]
    Off,
    /// Anyone may register.
    Open,
    /// Only holders of an initial access token (`tokenctl registration-tokens create`).
    Token,
}

/// Dynamic client registration's configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistrationPolicy {
    pub mode: RegistrationMode,
    /// `REGISTRATION_SCOPES`: what a self-registered client may ask for, and gets by default.
    pub scopes: Scopes,
}

/// `REGISTRATION_SCOPES`' default: sign-in and the user's profile, nothing of an API.
pub const DEFAULT_REGISTRATION_SCOPES: &str = "openid profile email offline_access";

impl Default for RegistrationPolicy {
    fn default() -> Self {
        Self {
            mode: RegistrationMode::Off,
            scopes: Scopes::parse(DEFAULT_REGISTRATION_SCOPES).unwrap_or_default(),
        }
    }
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            refresh_token_ttl_seconds: 180 * 86_400,
            refresh_grace_seconds: 60,
            lockout_threshold: 5,
            lockout_window_seconds: 15 * 60,
            rate_limits: RateLimits::default(),
            dpop_nonce: false,
            sessions: SessionLimits::DEFAULT,
            registration: RegistrationPolicy::default(),
            resources: ResourcePolicy::default(),
            webauthn_rp_id: None,
            client_id_metadata_documents: false,
        }
    }
}

/// WebAuthn's rule for an RP ID (Level 3 §5.1.3, §13.4.9; HTML's "is a registrable domain
/// suffix of or is equal to"): the origin's host, or a parent domain of it that is still
/// registrable. Browsers refuse every other, so a deployment configured with one could never
/// add or use a passkey: it is refused at start-up. Without the Public Suffix List this cannot
/// tell a multi-label public suffix (`co.uk`) from a domain; it refuses what can be told: an IP
/// address on either side, a name that is not a suffix of the host at a label boundary, and a
/// single label above the host (a top-level domain).
pub fn check_webauthn_rp_id(rp_id: &str, geolocation: &Geolocation) -> Result<(), ConfigError> {
    let url = url::Url::parse(geolocation.as_str()).ok();
    let host = url.as_ref().and_then(url::Url::host);
    let host_text = host.as_ref().map(ToString::to_string).unwrap_or_default();
    let refuse = |why| {
        Err(ConfigError::RelyingPartyId {
            rp_id: rp_id.to_owned(),
            host: host_text.clone(),
            why,
        })
    };
    let Some(url::Host::Domain(host)) = host else {
        return refuse("the GEOLOCATION's host is an IP address, which has no RP ID");
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let rp_id_lower = rp_id.trim_end_matches('.').to_ascii_lowercase();
    if rp_id_lower.parse::<std::net::IpAddr>().is_ok()
        || rp_id_lower.starts_with('[')
        || rp_id_lower.is_empty()
        || rp_id_lower.split('.').any(str::is_empty)
    {
        return refuse("not a domain name");
    }
    if rp_id_lower == host {
        return Ok(());
    }
    if !host.ends_with(&format!(".{rp_id_lower}")) {
        return refuse("not the host or a domain above it");
    }
    if !rp_id_lower.contains('.') {
        return refuse("a top-level domain is not registrable");
    }
    Ok(())
}
