//! The mail section of the [`Config`] (`SMTP_URL`, `SMTP_URL_SECRET_ARN`, `MAIL_FROM`) made into
//! a mailer.

use std::path::PathBuf;
use std::sync::Arc;

use lettre::message::Mailbox;

use token_core::config::Config;
use token_core::mail::{MailError, Mailer};
use token_domain::Geolocation;

use super::{InvalidSmtpUrl, OutboxMailer, SmtpMailer, SmtpUrl};

#[derive(Debug, Clone)]
pub struct MailConfig {
    /// Unset: mails go to `outbox_dir`.
    pub smtp_url: Option<SmtpUrl>,
    pub from: Mailbox,
    /// `DATA_DIR/outbox`.
    pub outbox_dir: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum MailConfigError {
    #[error(transparent)]
    SmtpUrl(#[from] InvalidSmtpUrl),
    #[error("MAIL_FROM must be an e-mail address (optionally `Name <address>`), got {0:?}")]
    MailFrom(String),
    #[error("MAIL_FROM is unset and the geolocation's host {0:?} makes no sender address")]
    NoDefaultSender(String),
    #[error("cannot read the SMTP_URL secret: {0}")]
    Secret(String),
}

/// The secret's string. Errors carry the SDK's context, never the secret.
pub(super) async fn fetch_secret_string(arn: &str) -> Result<String, MailConfigError> {
    crate::secrets::secret_string(arn)
        .await
        .map(|url| url.trim().to_owned())
        .map_err(MailConfigError::Secret)
}

impl MailConfig {
    /// The configuration's mail section, checked: the URL parsed, the sender parsed or made
    /// from the geolocation's host; the outbox under `DATA_DIR`.
    pub fn from_config(config: &Config) -> Result<Self, MailConfigError> {
        Self::with_url(config, config.mail.smtp_url.as_deref())
    }

    /// As [`MailConfig::from_config`], but when `SMTP_URL` is unset and `SMTP_URL_SECRET_ARN`
    /// names a Secrets Manager secret (the deployed token function), the URL is that secret's
    /// string, fetched once at start-up: its credentials never sit in the environment.
    pub async fn load(config: &Config) -> Result<Self, MailConfigError> {
        match (&config.mail.smtp_url, &config.mail.smtp_url_secret_arn) {
            (None, Some(arn)) => Self::with_url(config, Some(&fetch_secret_string(arn).await?)),
            _ => Self::from_config(config),
        }
    }

    /// As [`MailConfig::load`] for a Lambda function's init: with `SMTP_URL_SECRET_ARN` (and
    /// no `SMTP_URL`) the secret is not read now but by the mailer at its first mail
    /// ([`super::LazySmtpMailer`]); everything else is read and checked as `load` does.
    pub fn load_lazily(config: &Config) -> Result<StartMail, MailConfigError> {
        let mail = Self::from_config(config)?;
        Ok(match (&mail.smtp_url, &config.mail.smtp_url_secret_arn) {
            (None, Some(arn)) => StartMail::SecretUrl {
                arn: arn.clone(),
                from: mail.from,
            },
            _ => StartMail::Read(mail),
        })
    }

    fn with_url(config: &Config, smtp_url: Option<&str>) -> Result<Self, MailConfigError> {
        let smtp_url = smtp_url.map(SmtpUrl::parse).transpose()?;
        let from = match &config.mail.from {
            Some(from) => from
                .trim()
                .parse()
                .map_err(|_| MailConfigError::MailFrom(from.clone()))?,
            None => default_sender(&config.geolocation)?,
        };
        Ok(Self {
            smtp_url,
            from,
            outbox_dir: config.data_dir.join("outbox"),
        })
    }
}

/// What a Lambda function's init knows of its mail ([`MailConfig::load_lazily`]).
#[derive(Debug)]
pub enum StartMail {
    /// Everything read.
    Read(MailConfig),
    /// The SMTP URL is the secret `arn`, read at the first mail.
    SecretUrl { arn: String, from: Mailbox },
}

impl StartMail {
    pub fn mailer(self) -> Result<Arc<dyn Mailer>, MailError> {
        match self {
            Self::Read(config) => mailer_from_config(&config),
            Self::SecretUrl { arn, from } => {
                Ok(Arc::new(super::LazySmtpMailer::of_secret(arn, from)))
            }
        }
    }
}

/// `no-reply@` the geolocation's host. An IPv4 host stays bare (`no-reply@127.0.0.1`, the local
/// default): lettre re-parses the `From` header to build the envelope and knows no bracketed
/// domain literals. An IPv6 host makes no address: `MAIL_FROM` must then be set.
fn default_sender(geolocation: &Geolocation) -> Result<Mailbox, MailConfigError> {
    let host = url::Url::parse(geolocation.as_str())
        .ok()
        .and_then(|url| url.host_str().map(str::to_owned))
        .unwrap_or_default();
    format!("no-reply@{host}")
        .parse()
        .map_err(|_| MailConfigError::NoDefaultSender(host))
}

/// SMTP when `SMTP_URL` is set, else the outbox.
pub fn mailer_from_config(config: &MailConfig) -> Result<Arc<dyn Mailer>, MailError> {
    Ok(match &config.smtp_url {
        Some(url) => Arc::new(SmtpMailer::new(url, config.from.clone())?),
        None => Arc::new(OutboxMailer::new(&config.outbox_dir, config.from.clone())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn mail_config(pairs: &[(&str, &str)]) -> Result<MailConfig, MailConfigError> {
        let env: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let config = Config::from_lookup(|k| env.get(k).cloned()).unwrap();
        MailConfig::from_config(&config)
    }

    #[test]
    fn defaults_to_the_outbox_and_the_geolocation_host() {
        let config = mail_config(&[("DATA_DIR", "/tmp/data")]).unwrap();
        assert!(config.smtp_url.is_none());
        assert_eq!(config.outbox_dir, PathBuf::from("/tmp/data/outbox"));
        assert_eq!(config.from.email.to_string(), "no-reply@127.0.0.1");

        let config = mail_config(&[("GEOLOCATION", "https://us.api.example.com")]).unwrap();
        assert_eq!(config.from.email.to_string(), "no-reply@us.api.example.com");
        assert!(mail_config(&[("GEOLOCATION", "http://[::1]:8080")]).is_err());
    }

    #[test]
    fn reads_smtp_url_and_mail_from() {
        let config = mail_config(&[
            ("SMTP_URL", "smtp://u:p@relay.example.com"),
            ("MAIL_FROM", "Example <otp@example.com>"),
        ])
        .unwrap();
        assert_eq!(config.smtp_url.unwrap().host, "relay.example.com");
        assert_eq!(config.from.email.to_string(), "otp@example.com");
        assert!(mail_config(&[("SMTP_URL", "http://x")]).is_err());
        assert!(mail_config(&[("MAIL_FROM", "nobody")]).is_err());
    }
}
