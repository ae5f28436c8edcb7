//! Configuration from the environment (the README's Configuration), shared by every binary.

use std::path::PathBuf;

use crate::domain::{Geolocation, InvalidGeolocation, ResourcePolicy, Scopes, SessionLimits};
use crate::outbound::{AllowedHosts, InvalidAllowedHost};
use crate::store::cached::MAX_TTL_SECONDS;
pub use crate::store::StoreKind;
use crate::store::StoreLocation;

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

/// The abuse limits (requests per fixed window); 0 turns a limit off. See `crate::limits`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimits {
    /// `RATE_LIMIT_CLIENT_PER_MINUTE`: token requests per authenticated client.
    pub client_per_minute: u32,
    /// `RATE_LIMIT_ADDRESS_PER_MINUTE`: password grants and sign-in posts per source address.
    pub address_per_minute: u32,
    /// `RATE_LIMIT_OTP_CLIENT_PER_HOUR`: one-time-password requests per client.
    pub otp_client_per_hour: u32,
    /// `RATE_LIMIT_OTP_FAILURES_PER_HOUR`: wrong one-time passwords of one client per address,
    /// whichever of its passwords they were meant for; then that client is blocked from the
    /// address for a day.
    pub otp_failures_per_hour: u32,
    /// `RATE_LIMIT_REGISTRATIONS_PER_HOUR`: dynamic client registrations per source address.
    pub registrations_per_hour: u32,
    /// `RATE_LIMIT_DOCUMENT_FETCHES_PER_HOUR`: client ID metadata documents fetched (not found
    /// kept and fresh) for requests from one source address.
    pub document_fetches_per_hour: u32,
}

impl Default for RateLimits {
    fn default() -> Self {
        Self {
            client_per_minute: 6000,
            address_per_minute: 60,
            otp_client_per_hour: 1000,
            otp_failures_per_hour: 10,
            registrations_per_hour: 20,
            document_fetches_per_hour: 60,
        }
    }
}

impl RateLimits {
    /// Every limit off (tests that are not about limits, benchmarks).
    pub const OFF: Self = Self {
        client_per_minute: 0,
        address_per_minute: 0,
        otp_client_per_hour: 0,
        otp_failures_per_hour: 0,
        registrations_per_hour: 0,
        document_fetches_per_hour: 0,
    };
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

#[derive(Debug, Clone)]
pub struct Config {
    pub store: StoreKind,
    pub data_dir: PathBuf,
    pub table_name: String,
    pub dynamodb_endpoint: Option<String>,
    pub geolocation: Geolocation,
    pub port: u16,
    pub policy: Policy,
    /// Secrets Manager secret holding the signing key ring (cloud); unset: the local key file
    /// under `data_dir`.
    pub signing_keys_secret_arn: Option<String>,
    /// How long each instance serves clients, companies, their enablements and users by id from
    /// its own memory (`READ_CACHE_SECONDS`, at most 5; 0 = off): the delay after which a
    /// disabled client or company stops working everywhere. See `store::cached`.
    pub read_cache_seconds: u64,
    /// Whether requests are counted and timed (`METRICS`, `on` by default). `off` installs no
    /// exporter: no `/metrics` route's content, no embedded-metric lines; for measuring what the
    /// metrics cost (`infra/bench.sh`), or a deployment that does not want them.
    pub metrics: bool,
    /// `host:port` pairs the server may call whatever their addresses, over http too, when it
    /// fetches a client-supplied URL (`CLIENT_ID_METADATA_ALLOW_HOSTS`; development and tests):
    /// a client ID metadata document, a back-channel logout URI; see `crate::outbound`. Empty by
    /// default.
    pub outbound_allowed_hosts: AllowedHosts,
    /// The SQS queue back-channel logout deliveries are handed to (`LOGOUT_QUEUE_URL`, set by
    /// the template for the token function); unset: a background task of this process delivers.
    pub logout_queue_url: Option<String>,
    /// A local SQS endpoint (`SQS_ENDPOINT`: an emulator, in tests); unset: AWS.
    pub sqs_endpoint: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{name} must be {expected}, got {value:?}")]
    Invalid {
        name: &'static str,
        expected: &'static str,
        value: String,
    },
    #[error("GEOLOCATION: {0}")]
    Geolocation(#[from] InvalidGeolocation),
    #[error("CLIENT_ID_METADATA_ALLOW_HOSTS: {0}")]
    AllowedHost(#[from] InvalidAllowedHost),
    #[error(
        "WEBAUTHN_RP_ID {rp_id:?} must be the GEOLOCATION's host {host:?} or a registrable parent \
         domain of it (WebAuthn's RP ID rule): {why}"
    )]
    RelyingPartyId {
        rp_id: String,
        host: String,
        why: &'static str,
    },
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

impl Config {
    /// Where the store is, as the storage layer takes it.
    pub fn store_location(&self) -> StoreLocation {
        StoreLocation {
            kind: self.store,
            data_dir: self.data_dir.clone(),
            table_name: self.table_name.clone(),
            dynamodb_endpoint: self.dynamodb_endpoint.clone(),
        }
    }

    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads configuration through `lookup`, so tests need not touch the process environment.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let get = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());

        let store = match get("STORE").as_deref().map(str::trim) {
            None | Some("sqlite") => StoreKind::Sqlite,
            Some("dynamodb") => StoreKind::DynamoDb,
            Some(other) => {
                return Err(ConfigError::Invalid {
                    name: "STORE",
                    expected: "sqlite or dynamodb",
                    value: other.to_owned(),
                })
            }
        };
        let port: u16 = parse_number(&get, "PORT", 8080)?;
        let geolocation = match get("GEOLOCATION") {
            Some(url) => Geolocation::parse(&url)?,
            None => Geolocation::parse(&format!("http://127.0.0.1:{port}"))?,
        };
        let defaults = Policy::default();
        let ttl_days: i64 = parse_number(&get, "REFRESH_TOKEN_TTL_DAYS", 180)?;
        if ttl_days <= 0 {
            return Err(ConfigError::Invalid {
                name: "REFRESH_TOKEN_TTL_DAYS",
                expected: "a positive number of days",
                value: ttl_days.to_string(),
            });
        }
        let dpop_nonce = parse_switch(&get, "DPOP_NONCE", false)?;
        let policy = Policy {
            refresh_token_ttl_seconds: ttl_days * 86_400,
            refresh_grace_seconds: parse_number(
                &get,
                "REFRESH_GRACE_SECONDS",
                defaults.refresh_grace_seconds,
            )?,
            lockout_threshold: parse_number(&get, "LOCKOUT_THRESHOLD", defaults.lockout_threshold)?,
            lockout_window_seconds: defaults.lockout_window_seconds,
            rate_limits: RateLimits {
                client_per_minute: parse_number(
                    &get,
                    "RATE_LIMIT_CLIENT_PER_MINUTE",
                    defaults.rate_limits.client_per_minute,
                )?,
                address_per_minute: parse_number(
                    &get,
                    "RATE_LIMIT_ADDRESS_PER_MINUTE",
                    defaults.rate_limits.address_per_minute,
                )?,
                otp_client_per_hour: parse_number(
                    &get,
                    "RATE_LIMIT_OTP_CLIENT_PER_HOUR",
                    defaults.rate_limits.otp_client_per_hour,
                )?,
                otp_failures_per_hour: parse_number(
                    &get,
                    "RATE_LIMIT_OTP_FAILURES_PER_HOUR",
                    defaults.rate_limits.otp_failures_per_hour,
                )?,
                registrations_per_hour: parse_number(
                    &get,
                    "RATE_LIMIT_REGISTRATIONS_PER_HOUR",
                    defaults.rate_limits.registrations_per_hour,
                )?,
                document_fetches_per_hour: parse_number(
                    &get,
                    "RATE_LIMIT_DOCUMENT_FETCHES_PER_HOUR",
                    defaults.rate_limits.document_fetches_per_hour,
                )?,
            },
            dpop_nonce,
            sessions: session_limits(&get)?,
            registration: registration_policy(&get)?,
            resources: resource_policy(&get)?,
            webauthn_rp_id: get("WEBAUTHN_RP_ID")
                .map(|id| id.trim().to_ascii_lowercase())
                .filter(|id| !id.is_empty()),
            client_id_metadata_documents: parse_switch(
                &get,
                "CLIENT_ID_METADATA_DOCUMENTS",
                defaults.client_id_metadata_documents,
            )?,
        };
        if let Some(rp_id) = &policy.webauthn_rp_id {
            check_webauthn_rp_id(rp_id, &geolocation)?;
        }
        let read_cache_seconds = parse_number(&get, "READ_CACHE_SECONDS", MAX_TTL_SECONDS)?;
        if read_cache_seconds > MAX_TTL_SECONDS {
            return Err(ConfigError::Invalid {
                name: "READ_CACHE_SECONDS",
                expected: "0 to 5 seconds",
                value: read_cache_seconds.to_string(),
            });
        }
        Ok(Self {
            store,
            data_dir: PathBuf::from(get("DATA_DIR").unwrap_or_else(|| ".data".to_owned())),
            table_name: get("TABLE_NAME").unwrap_or_else(|| "tokens".to_owned()),
            dynamodb_endpoint: get("DYNAMODB_ENDPOINT"),
            geolocation,
            port,
            policy,
            signing_keys_secret_arn: get("SIGNING_KEYS_SECRET_ARN"),
            read_cache_seconds,
            metrics: parse_switch(&get, "METRICS", true)?,
            outbound_allowed_hosts: AllowedHosts::parse(
                &get("CLIENT_ID_METADATA_ALLOW_HOSTS").unwrap_or_default(),
            )?,
            logout_queue_url: get("LOGOUT_QUEUE_URL"),
            sqs_endpoint: get("SQS_ENDPOINT"),
        })
    }
}

fn registration_policy(
    get: &impl Fn(&str) -> Option<String>,
) -> Result<RegistrationPolicy, ConfigError> {
    let mode = match get("DYNAMIC_REGISTRATION").as_deref().map(str::trim) {
        None | Some("off") => RegistrationMode::Off,
        Some("open") => RegistrationMode::Open,
        Some("token") => RegistrationMode::Token,
        Some(other) => {
            return Err(ConfigError::Invalid {
                name: "DYNAMIC_REGISTRATION",
                expected: "off, open or token",
                value: other.to_owned(),
            })
        }
    };
    let scopes = match get("REGISTRATION_SCOPES") {
        None => RegistrationPolicy::default().scopes,
        Some(text) => Scopes::parse(&text).map_err(|_| ConfigError::Invalid {
            name: "REGISTRATION_SCOPES",
            expected: "space-separated scopes",
            value: text.clone(),
        })?,
    };
    Ok(RegistrationPolicy { mode, scopes })
}

/// `RESOURCES`: comma-separated absolute `http(s)` URIs without fragment.
fn resource_policy(get: &impl Fn(&str) -> Option<String>) -> Result<ResourcePolicy, ConfigError> {
    let text = get("RESOURCES").unwrap_or_default();
    ResourcePolicy::parse(&text).map_err(|_| ConfigError::Invalid {
        name: "RESOURCES",
        expected: "comma-separated absolute http(s) URIs without fragment",
        value: text.clone(),
    })
}

/// Both limits positive, and the idle timeout no longer than the absolute limit (it could never
/// be reached).
fn session_limits(get: &impl Fn(&str) -> Option<String>) -> Result<SessionLimits, ConfigError> {
    let defaults = SessionLimits::DEFAULT;
    let limits = SessionLimits {
        idle_seconds: parse_number(get, "SESSION_IDLE_SECONDS", defaults.idle_seconds)?,
        max_seconds: parse_number(get, "SESSION_MAX_SECONDS", defaults.max_seconds)?,
    };
    if limits.max_seconds <= 0 {
        return Err(ConfigError::Invalid {
            name: "SESSION_MAX_SECONDS",
            expected: "a positive number of seconds",
            value: limits.max_seconds.to_string(),
        });
    }
    if limits.idle_seconds <= 0 || limits.idle_seconds > limits.max_seconds {
        return Err(ConfigError::Invalid {
            name: "SESSION_IDLE_SECONDS",
            expected: "a positive number of seconds, at most SESSION_MAX_SECONDS",
            value: limits.idle_seconds.to_string(),
        });
    }
    Ok(limits)
}

/// `on` or `off` (surrounding blanks ignored); unset: `default`.
fn parse_switch(
    get: &impl Fn(&str) -> Option<String>,
    name: &'static str,
    default: bool,
) -> Result<bool, ConfigError> {
    match get(name).as_deref().map(str::trim) {
        None => Ok(default),
        Some("on") => Ok(true),
        Some("off") => Ok(false),
        Some(other) => Err(ConfigError::Invalid {
            name,
            expected: "on or off",
            value: other.to_owned(),
        }),
    }
}

fn parse_number<T: std::str::FromStr>(
    get: &impl Fn(&str) -> Option<String>,
    name: &'static str,
    default: T,
) -> Result<T, ConfigError> {
    match get(name) {
        None => Ok(default),
        Some(value) => value.trim().parse().map_err(|_| ConfigError::Invalid {
            name,
            expected: "a non-negative whole number",
            value,
        }),
    }
}

#[cfg(test)]
#[path = "config_template_tests.rs"]
mod template_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(pairs: &[(&str, &str)]) -> Result<Config, ConfigError> {
        let env: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_lookup(|k| env.get(k).cloned())
    }

    #[test]
    fn defaults_match_the_contract() {
        let c = config(&[]).unwrap();
        assert_eq!(c.store, StoreKind::Sqlite);
        assert_eq!(c.data_dir, PathBuf::from(".data"));
        assert_eq!(c.table_name, "tokens");
        assert_eq!(c.dynamodb_endpoint, None);
        assert_eq!(c.geolocation.as_str(), "http://127.0.0.1:8080");
        assert_eq!(c.policy, Policy::default());
        assert_eq!(c.policy.refresh_token_ttl_seconds, 15_552_000);
        assert_eq!(c.read_cache_seconds, 5);
        assert_eq!(
            c.policy.rate_limits,
            RateLimits {
                client_per_minute: 6000,
                address_per_minute: 60,
                otp_client_per_hour: 1000,
                otp_failures_per_hour: 10,
                registrations_per_hour: 20,
                document_fetches_per_hour: 60,
            }
        );
        assert_eq!(c.policy.registration.mode, RegistrationMode::Off);
        assert_eq!(
            c.policy.registration.scopes.to_string(),
            "email offline_access openid profile"
        );
    }

    #[test]
    fn the_webauthn_rp_id_is_the_geolocations_host_or_a_registrable_parent() {
        let at = |geolocation: &str, rp_id: &str| {
            config(&[("GEOLOCATION", geolocation), ("WEBAUTHN_RP_ID", rp_id)])
                .map(|c| c.policy.webauthn_rp_id.unwrap())
        };
        let host = "https://us.api.example.com";
        for good in [
            "us.api.example.com",
            "api.example.com",
            "example.com",
            "US.API.Example.COM",
        ] {
            assert!(at(host, good).is_ok(), "{good}");
        }
        assert_eq!(at(host, " Example.COM ").unwrap(), "example.com");
        assert!(at("http://localhost:8080", "localhost").is_ok());
        for bad in [
            "com",
            "other.example.com",
            "xample.com",
            "eu.api.example.com",
            "api.example.com.evil.org",
            "evil.org",
            "127.0.0.1",
            "[::1]",
            "example..com",
            "www.us.api.example.com",
        ] {
            let error = at(host, bad).expect_err(bad);
            assert!(
                matches!(error, ConfigError::RelyingPartyId { .. }),
                "{bad}: {error}"
            );
            let message = error.to_string();
            assert!(message.contains("WEBAUTHN_RP_ID"), "{message}");
            assert!(message.contains("us.api.example.com"), "{message}");
        }
        let ip = at("http://127.0.0.1:8080", "127.0.0.1").unwrap_err();
        assert!(ip.to_string().contains("IP address"), "{ip}");
        assert!(at("http://127.0.0.1:8080", "localhost").is_err());
        // Unset or empty: the geolocation's host, whatever it is (passkeys off on an IP).
        assert_eq!(
            config(&[
                ("GEOLOCATION", "http://127.0.0.1:8080"),
                ("WEBAUTHN_RP_ID", " ")
            ])
            .unwrap()
            .policy
            .webauthn_rp_id,
            None
        );
    }

    #[test]
    fn dynamic_registration_is_off_open_or_token() {
        for (text, mode) in [
            ("off", RegistrationMode::Off),
            ("open", RegistrationMode::Open),
            ("token", RegistrationMode::Token),
        ] {
            let c = config(&[("DYNAMIC_REGISTRATION", text)]).unwrap();
            assert_eq!(c.policy.registration.mode, mode);
        }
        let err = config(&[("DYNAMIC_REGISTRATION", "on")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("DYNAMIC_REGISTRATION"), "{err}");
        let c = config(&[("REGISTRATION_SCOPES", "openid mcp:tools")]).unwrap();
        assert_eq!(c.policy.registration.scopes.to_string(), "mcp:tools openid");
        let c = config(&[("RATE_LIMIT_REGISTRATIONS_PER_HOUR", "0")]).unwrap();
        assert_eq!(c.policy.rate_limits.registrations_per_hour, 0);
        let c = config(&[("RATE_LIMIT_DOCUMENT_FETCHES_PER_HOUR", "0")]).unwrap();
        assert_eq!(c.policy.rate_limits.document_fetches_per_hour, 0);
    }

    #[test]
    fn resources_are_a_comma_separated_list_of_uris() {
        assert!(config(&[]).unwrap().policy.resources.deployment.is_empty());
        let c = config(&[(
            "RESOURCES",
            "https://a.example.com, https://b.example.com/mcp",
        )])
        .unwrap();
        assert_eq!(c.policy.resources.deployment.len(), 2);
        let err = config(&[("RESOURCES", "https://a.example.com#x")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("RESOURCES"), "{err}");
    }

    #[test]
    fn client_id_metadata_documents_are_off_unless_on() {
        assert!(!config(&[]).unwrap().policy.client_id_metadata_documents);
        let on = config(&[("CLIENT_ID_METADATA_DOCUMENTS", "on")]).unwrap();
        assert!(on.policy.client_id_metadata_documents);
        let off = config(&[("CLIENT_ID_METADATA_DOCUMENTS", "off")]).unwrap();
        assert!(!off.policy.client_id_metadata_documents);
        let err = config(&[("CLIENT_ID_METADATA_DOCUMENTS", "true")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("CLIENT_ID_METADATA_DOCUMENTS"), "{err}");
    }

    #[test]
    fn allowed_outbound_hosts_are_host_port_pairs() {
        assert!(config(&[]).unwrap().outbound_allowed_hosts.is_empty());
        let c = config(&[(
            "CLIENT_ID_METADATA_ALLOW_HOSTS",
            "127.0.0.1:9000, localhost:3000",
        )])
        .unwrap();
        assert!(c.outbound_allowed_hosts.allows("127.0.0.1", 9000));
        assert!(c.outbound_allowed_hosts.allows("localhost", 3000));
        let err = config(&[("CLIENT_ID_METADATA_ALLOW_HOSTS", "localhost")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("CLIENT_ID_METADATA_ALLOW_HOSTS"), "{err}");
    }

    #[test]
    fn zero_turns_a_rate_limit_off() {
        let c = config(&[
            ("RATE_LIMIT_CLIENT_PER_MINUTE", "0"),
            ("RATE_LIMIT_OTP_FAILURES_PER_HOUR", "3"),
        ])
        .unwrap();
        assert_eq!(c.policy.rate_limits.client_per_minute, 0);
        assert_eq!(c.policy.rate_limits.otp_failures_per_hour, 3);
        let err = config(&[("RATE_LIMIT_ADDRESS_PER_MINUTE", "-1")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("RATE_LIMIT_ADDRESS_PER_MINUTE"), "{err}");
    }

    #[test]
    fn the_read_cache_is_at_most_five_seconds() {
        assert_eq!(
            config(&[("READ_CACHE_SECONDS", "0")])
                .unwrap()
                .read_cache_seconds,
            0
        );
        let err = config(&[("READ_CACHE_SECONDS", "6")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("READ_CACHE_SECONDS"), "{err}");
    }

    #[test]
    fn dpop_nonces_are_off_unless_on() {
        assert!(!config(&[]).unwrap().policy.dpop_nonce);
        assert!(!config(&[("DPOP_NONCE", "off")]).unwrap().policy.dpop_nonce);
        assert!(config(&[("DPOP_NONCE", "on")]).unwrap().policy.dpop_nonce);
        let err = config(&[("DPOP_NONCE", "yes")]).unwrap_err().to_string();
        assert!(err.contains("DPOP_NONCE"), "{err}");
    }

    #[test]
    fn metrics_are_on_unless_off() {
        assert!(config(&[]).unwrap().metrics);
        assert!(config(&[("METRICS", " on ")]).unwrap().metrics);
        assert!(!config(&[("METRICS", "off")]).unwrap().metrics);
        let err = config(&[("METRICS", "0")]).unwrap_err().to_string();
        assert!(err.contains("METRICS"), "{err}");
    }

    #[test]
    fn geolocation_defaults_to_the_port() {
        assert_eq!(
            config(&[("PORT", "9999")]).unwrap().geolocation.as_str(),
            "http://127.0.0.1:9999"
        );
    }

    #[test]
    fn rejects_bad_values_by_name() {
        let err = config(&[("STORE", "postgres")]).unwrap_err().to_string();
        assert!(err.contains("STORE"), "{err}");
        let err = config(&[("LOCKOUT_THRESHOLD", "many")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("LOCKOUT_THRESHOLD"), "{err}");
        assert!(config(&[("REFRESH_TOKEN_TTL_DAYS", "0")]).is_err());
        assert!(config(&[("GEOLOCATION", "not a url")]).is_err());
    }
}
