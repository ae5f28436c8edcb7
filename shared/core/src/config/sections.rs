//! The sections of [`super::Config`] that configure an adapter: the store, the signing keys,
//! mail, the logout queue, telemetry. Each reads its own variables and checks them
//! ([`Section`]); the adapters take the section and read nothing themselves.

use crate::store::cached::MAX_TTL_SECONDS;
use crate::store::StoreKind;

use super::vars::Vars;
use super::ConfigError;

/// A part of the configuration: read from the variables, then checked on its own.
pub trait Section: Sized {
    fn read(vars: &Vars) -> Result<Self, ConfigError>;

    /// What the section's values must satisfy together.
    fn validate(&self) -> Result<(), ConfigError> {
        Ok(())
    }

    fn read_valid(vars: &Vars) -> Result<Self, ConfigError> {
        let section = Self::read(vars)?;
        section.validate()?;
        Ok(section)
    }
}

/// `STORE`, `TABLE_NAME`, `DYNAMODB_ENDPOINT`, `READ_CACHE_SECONDS` (the SQLite file's
/// directory is the configuration's `data_dir`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreSection {
    pub kind: StoreKind,
    pub table_name: String,
    /// DynamoDB Local's address; unset: AWS.
    pub dynamodb_endpoint: Option<String>,
    /// How long each instance serves clients, companies, their enablements and users by id from
    /// its own memory (at most 5; 0 = off): the delay after which a disabled client or company
    /// stops working everywhere. See `store::cached`.
    pub read_cache_seconds: u64,
}

impl Section for StoreSection {
    fn read(vars: &Vars) -> Result<Self, ConfigError> {
        Ok(Self {
            kind: vars.choice(
                "STORE",
                "sqlite or dynamodb",
                StoreKind::Sqlite,
                &[
                    ("sqlite", StoreKind::Sqlite),
                    ("dynamodb", StoreKind::DynamoDb),
                ],
            )?,
            table_name: vars
                .get("TABLE_NAME")
                .unwrap_or_else(|| "tokens".to_owned()),
            dynamodb_endpoint: vars.get("DYNAMODB_ENDPOINT"),
            read_cache_seconds: vars.number("READ_CACHE_SECONDS", MAX_TTL_SECONDS)?,
        })
    }

    fn validate(&self) -> Result<(), ConfigError> {
        if self.read_cache_seconds > MAX_TTL_SECONDS {
            return Err(ConfigError::Invalid {
                name: "READ_CACHE_SECONDS",
                expected: "0 to 5 seconds",
                value: self.read_cache_seconds.to_string(),
            });
        }
        Ok(())
    }
}

/// Where the private signing keys live (`SIGNING_KEYS`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SigningKeysKind {
    /// Sealed in the store's key ring with the server secret.
    #[default]
    Local,
    /// AWS KMS keys, one `kms:Sign` per token.
    Kms,
}

/// `SIGNING_KEYS`, `KMS_ENDPOINT`, `SIGNING_KEY_RING_NAME`, `SIGNING_KEYS_SECRET_ARN`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SigningSection {
    pub keys: SigningKeysKind,
    /// A KMS other than AWS's (a local emulator, for tests and development).
    pub kms_endpoint: Option<String>,
    /// The name that tags a ring's KMS keys (the deployment's stack name in AWS).
    pub key_ring_name: String,
    /// The Secrets Manager secret holding the server secret (cloud); unset: the local key file
    /// under `DATA_DIR`.
    pub secret_arn: Option<String>,
}

/// `SIGNING_KEY_RING_NAME`'s default.
pub const DEFAULT_KEY_RING_NAME: &str = "token-service";

impl Section for SigningSection {
    fn read(vars: &Vars) -> Result<Self, ConfigError> {
        Ok(Self {
            keys: vars.choice(
                "SIGNING_KEYS",
                "`local` or `kms`",
                SigningKeysKind::Local,
                &[
                    ("local", SigningKeysKind::Local),
                    ("kms", SigningKeysKind::Kms),
                ],
            )?,
            kms_endpoint: vars.trimmed("KMS_ENDPOINT"),
            key_ring_name: vars
                .trimmed("SIGNING_KEY_RING_NAME")
                .unwrap_or_else(|| DEFAULT_KEY_RING_NAME.to_owned()),
            secret_arn: vars.get("SIGNING_KEYS_SECRET_ARN"),
        })
    }
}

/// `SMTP_URL`, `SMTP_URL_SECRET_ARN`, `MAIL_FROM`, as written: the mail adapter parses the
/// sender (`Name <address>`) with the library that writes the mail, at start-up.
#[derive(Clone, PartialEq, Eq)]
pub struct MailSection {
    /// Unset: mails go to `DATA_DIR/outbox/`, unless the secret names one.
    pub smtp_url: Option<String>,
    /// Read when `SMTP_URL` is unset: the Secrets Manager secret whose string is the URL.
    pub smtp_url_secret_arn: Option<String>,
    /// Unset: `no-reply@` the geolocation's host.
    pub from: Option<String>,
}

/// The URL may carry a password.
impl std::fmt::Debug for MailSection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MailSection")
            .field("smtp_url", &self.smtp_url.as_ref().map(|_| "<set>"))
            .field("smtp_url_secret_arn", &self.smtp_url_secret_arn)
            .field("from", &self.from)
            .finish()
    }
}

impl Section for MailSection {
    fn read(vars: &Vars) -> Result<Self, ConfigError> {
        Ok(Self {
            smtp_url: vars.get("SMTP_URL"),
            smtp_url_secret_arn: vars.get("SMTP_URL_SECRET_ARN"),
            from: vars.get("MAIL_FROM"),
        })
    }
}

/// `LOGOUT_QUEUE_URL`, `SQS_ENDPOINT`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueueSection {
    /// The SQS queue back-channel logout deliveries are handed to (set by the template for the
    /// token function); unset: a background task of this process delivers.
    pub logout_queue_url: Option<String>,
    /// A local SQS endpoint (an emulator, in tests); unset: AWS.
    pub sqs_endpoint: Option<String>,
}

impl Section for QueueSection {
    fn read(vars: &Vars) -> Result<Self, ConfigError> {
        Ok(Self {
            logout_queue_url: vars.get("LOGOUT_QUEUE_URL"),
            sqs_endpoint: vars.get("SQS_ENDPOINT"),
        })
    }
}

/// `METRICS`, `RUST_LOG`, `OTEL_EXPORTER_OTLP_ENDPOINT`, and Lambda's
/// `AWS_LAMBDA_FUNCTION_NAME` (the functions log JSON, and name their metrics and traces
/// after it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TelemetrySection {
    /// Whether requests are counted and timed (`on` by default). `off` installs no exporter: no
    /// `/metrics` content, no embedded-metric lines; for measuring what the metrics cost
    /// (`infra/bench.sh`), or a deployment that does not want them.
    pub metrics: bool,
    /// The log filter as written; unset or blank: the binary's default.
    pub log_directives: Option<String>,
    /// The OpenTelemetry collector's base URL; unset: no traces.
    pub otlp_endpoint: Option<String>,
    /// Set by Lambda in a function's environment; unset: not in Lambda.
    pub lambda_function: Option<String>,
}

/// The log filter when `RUST_LOG` is unset, empty or invalid (the local server's console has its
/// own).
pub const DEFAULT_LOG_DIRECTIVES: &str = "info";

/// The OTLP exporter's standard variable: the collector's base URL, to which `/v1/traces` is
/// appended.
pub const OTLP_ENDPOINT_VARIABLE: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";

impl Default for TelemetrySection {
    fn default() -> Self {
        Self {
            metrics: true,
            log_directives: None,
            otlp_endpoint: None,
            lambda_function: None,
        }
    }
}

impl Section for TelemetrySection {
    fn read(vars: &Vars) -> Result<Self, ConfigError> {
        Ok(Self {
            metrics: vars.switch("METRICS", true)?,
            log_directives: vars.trimmed("RUST_LOG"),
            otlp_endpoint: vars.trimmed(OTLP_ENDPOINT_VARIABLE),
            lambda_function: vars.get("AWS_LAMBDA_FUNCTION_NAME"),
        })
    }
}
