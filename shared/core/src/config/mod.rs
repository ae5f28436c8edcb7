//! The configuration (the README's Configuration): one typed tree, read once from the
//! environment by each binary ([`Config::from_env`]) and checked section by section before
//! anything starts. The adapters and the protocol take their section; none reads a variable.
//! docs/decisions.md, "Configuration".

mod environment;
mod limits;
mod policy;
mod sections;
mod vars;

use std::path::PathBuf;

use crate::domain::{Geolocation, InvalidGeolocation, ResourcePolicy, Scopes, SessionLimits};
use crate::outbound::{AllowedHosts, InvalidAllowedHost};
pub use crate::store::StoreKind;
use crate::store::StoreLocation;

pub use environment::Environment;
pub use limits::{Limit, LimitRow, RateLimits, LIMITS};
pub use policy::{
    check_webauthn_rp_id, Policy, RegistrationMode, RegistrationPolicy, DEFAULT_REGISTRATION_SCOPES,
};
pub use sections::{
    MailSection, QueueSection, Section, SigningKeysKind, SigningSection, StoreSection,
    TelemetrySection, DEFAULT_KEY_RING_NAME, DEFAULT_LOG_DIRECTIVES, OTLP_ENDPOINT_VARIABLE,
};
use vars::Vars;

/// Everything a binary is configured with.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where the SQLite file, the local signing key file, the demo data and the mail outbox
    /// live (`DATA_DIR`).
    pub data_dir: PathBuf,
    /// This deployment's base URL (`GEOLOCATION`; by default the local server's address).
    pub geolocation: Geolocation,
    /// The local server's port (`PORT`).
    pub port: u16,
    pub store: StoreSection,
    pub policy: Policy,
    pub signing: SigningSection,
    pub mail: MailSection,
    pub queue: QueueSection,
    /// `host:port` pairs the server may call whatever their addresses, over http too, when it
    /// fetches a client-supplied URL (`CLIENT_ID_METADATA_ALLOW_HOSTS`; development and tests):
    /// a client ID metadata document, a back-channel logout URI; see `crate::outbound`. Empty by
    /// default.
    pub outbound_allowed_hosts: AllowedHosts,
    pub telemetry: TelemetrySection,
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

impl Config {
    /// Where the store is, as the storage layer takes it.
    pub fn store_location(&self) -> StoreLocation {
        StoreLocation {
            kind: self.store.kind,
            data_dir: self.data_dir.clone(),
            table_name: self.store.table_name.clone(),
            dynamodb_endpoint: self.store.dynamodb_endpoint.clone(),
        }
    }

    /// The binaries' one read of the environment.
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::read(&Environment::of_process())
    }

    pub fn read(environment: &Environment) -> Result<Self, ConfigError> {
        Self::from_lookup(|name| environment.get(name))
    }

    /// Reads configuration through `lookup`, so tests need not touch the process environment.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let vars = Vars::new(&lookup);
        let port: u16 = vars.number("PORT", 8080)?;
        let geolocation = match vars.get("GEOLOCATION") {
            Some(url) => Geolocation::parse(&url)?,
            None => local_geolocation(port)?,
        };
        let config = Self {
            data_dir: PathBuf::from(vars.get("DATA_DIR").unwrap_or_else(|| ".data".to_owned())),
            geolocation,
            port,
            store: StoreSection::read_valid(&vars)?,
            policy: Policy::read_valid(&vars)?,
            signing: SigningSection::read_valid(&vars)?,
            mail: MailSection::read_valid(&vars)?,
            queue: QueueSection::read_valid(&vars)?,
            outbound_allowed_hosts: AllowedHosts::parse(
                &vars
                    .get("CLIENT_ID_METADATA_ALLOW_HOSTS")
                    .unwrap_or_default(),
            )?,
            telemetry: TelemetrySection::read_valid(&vars)?,
        };
        config.validate()?;
        Ok(config)
    }

    /// The configuration of a server whose listener is bound to `port`: with `PORT=0` the
    /// system chose the port (no race for a free one), and the default geolocation, when
    /// `GEOLOCATION` is unset, names it.
    pub fn listening_on(mut self, port: u16) -> Result<Self, ConfigError> {
        if self.port == 0 && self.geolocation == local_geolocation(0)? {
            self.geolocation = local_geolocation(port)?;
        }
        self.port = port;
        Ok(self)
    }

    /// What holds between sections: the passkeys' relying party is the geolocation's host or
    /// above it.
    fn validate(&self) -> Result<(), ConfigError> {
        if let Some(rp_id) = &self.policy.webauthn_rp_id {
            check_webauthn_rp_id(rp_id, &self.geolocation)?;
        }
        Ok(())
    }
}

impl Section for Policy {
    fn read(vars: &Vars) -> Result<Self, ConfigError> {
        let defaults = Policy::default();
        let ttl_days: i64 = vars.number("REFRESH_TOKEN_TTL_DAYS", 180)?;
        Ok(Policy {
            refresh_token_ttl_seconds: ttl_days.saturating_mul(86_400),
            refresh_grace_seconds: vars
                .number("REFRESH_GRACE_SECONDS", defaults.refresh_grace_seconds)?,
            lockout_threshold: vars.number("LOCKOUT_THRESHOLD", defaults.lockout_threshold)?,
            lockout_window_seconds: defaults.lockout_window_seconds,
            rate_limits: RateLimits::read(vars)?,
            dpop_nonce: vars.switch("DPOP_NONCE", false)?,
            sessions: SessionLimits {
                idle_seconds: vars
                    .number("SESSION_IDLE_SECONDS", SessionLimits::DEFAULT.idle_seconds)?,
                max_seconds: vars
                    .number("SESSION_MAX_SECONDS", SessionLimits::DEFAULT.max_seconds)?,
            },
            registration: registration_policy(vars)?,
            resources: resource_policy(vars)?,
            webauthn_rp_id: vars
                .trimmed("WEBAUTHN_RP_ID")
                .map(|id| id.to_ascii_lowercase()),
            client_id_metadata_documents: vars.switch(
                "CLIENT_ID_METADATA_DOCUMENTS",
                defaults.client_id_metadata_documents,
            )?,
        })
    }

    /// A positive lifetime; both session limits positive, and the idle timeout no longer than
    /// the absolute limit (it could never be reached).
    fn validate(&self) -> Result<(), ConfigError> {
        if self.refresh_token_ttl_seconds <= 0 {
            return Err(ConfigError::Invalid {
                name: "REFRESH_TOKEN_TTL_DAYS",
                expected: "a positive number of days",
                value: (self.refresh_token_ttl_seconds / 86_400).to_string(),
            });
        }
        let limits = self.sessions;
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
        Ok(())
    }
}

fn registration_policy(vars: &Vars) -> Result<RegistrationPolicy, ConfigError> {
    let mode = vars.choice(
        "DYNAMIC_REGISTRATION",
        "off, open or token",
        RegistrationMode::Off,
        &[
            ("off", RegistrationMode::Off),
            ("open", RegistrationMode::Open),
            ("token", RegistrationMode::Token),
        ],
    )?;
    let scopes = match vars.get("REGISTRATION_SCOPES") {
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
fn resource_policy(vars: &Vars) -> Result<ResourcePolicy, ConfigError> {
    let text = vars.get("RESOURCES").unwrap_or_default();
    ResourcePolicy::parse(&text).map_err(|_| ConfigError::Invalid {
        name: "RESOURCES",
        expected: "comma-separated absolute http(s) URIs without fragment",
        value: text.clone(),
    })
}

#[cfg(test)]
mod readme_tests;
#[cfg(test)]
mod template_tests;
#[cfg(test)]
mod tests;

/// The local server's geolocation when `GEOLOCATION` is unset: its own loopback address.
fn local_geolocation(port: u16) -> Result<Geolocation, ConfigError> {
    Ok(Geolocation::parse(&format!("http://127.0.0.1:{port}"))?)
}
