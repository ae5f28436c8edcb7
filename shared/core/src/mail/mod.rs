//! Mail for one-time passwords (docs/decisions.md, "One-time passwords"): the [`Mailer`] trait, the
//! message, and its two implementations: [`SmtpMailer`] (`SMTP_URL`) and [`OutboxMailer`] (`.eml`
//! files under `DATA_DIR/outbox/`, the local default).
//!
//! An adapter, like a store backend: the one-time-password flow ([`crate::auth::otp`]) calls
//! [`Mailer`]; this module depends on the domain's values only, never on the flow.
//!
//! Nothing here logs a password or SMTP credentials: [`OtpMail`] and [`SmtpUrl`] redact them in
//! `Debug`, and errors carry only the server's reply or the I/O failure.

mod config;
mod lazy;
mod message;
mod outbox;
mod smtp;

use std::path::PathBuf;

use async_trait::async_trait;

pub use config::{mailer_from_config, MailConfig, MailConfigError, StartMail};
pub use lazy::LazySmtpMailer;
/// The sender type of `MAIL_FROM`, re-exported so callers need not depend on lettre.
pub use lettre::message::Mailbox;
pub use message::OtpMail;
pub use outbox::OutboxMailer;
pub use smtp::{InvalidSmtpUrl, SmtpMailer, SmtpUrl, TlsMode};

#[async_trait]
pub trait Mailer: Send + Sync + std::fmt::Debug {
    /// Delivers the message, or fails; a failure means the caller answers 503.
    async fn send(&self, message: &OtpMail) -> Result<(), MailError>;
}

/// The mailer of a process that was given none (tests of other endpoints, tools): every send
/// fails, so a one-time-password request answers 503 rather than pretending to have mailed.
#[derive(Debug, Default)]
pub struct NoMailer;

#[async_trait]
impl Mailer for NoMailer {
    async fn send(&self, _: &OtpMail) -> Result<(), MailError> {
        Err(MailError::NotConfigured)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum MailError {
    #[error("no mailer is configured")]
    NotConfigured,
    /// The SMTP URL could not be read (its secret) or is not valid.
    #[error("mail configuration: {0}")]
    Config(String),
    /// The message could not be built (an address the mailer cannot encode).
    #[error("could not build the mail: {0}")]
    Message(String),
    /// Refused by the server, unreachable, timed out, or TLS failed: its kind and reply code
    /// only ([`smtp_summary`]), and no source error, since a logger that prints an error's
    /// chain would print the server's reply, which may quote the recipient's address.
    #[error("mail server: {0}")]
    Smtp(String),
    #[error("mail server did not finish within {0:?}")]
    TimedOut(std::time::Duration),
    #[error("could not write {path}: {source}")]
    Outbox {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl From<lettre::transport::smtp::Error> for MailError {
    fn from(error: lettre::transport::smtp::Error) -> Self {
        Self::Smtp(smtp_summary(&error))
    }
}

/// What an SMTP failure may say in a log: its kind and the server's reply code, never the
/// reply's text.
fn smtp_summary(error: &lettre::transport::smtp::Error) -> String {
    let kind = if error.is_permanent() {
        "permanent rejection"
    } else if error.is_transient() {
        "transient rejection"
    } else if error.is_timeout() {
        "timed out"
    } else if error.is_tls() {
        "TLS failed"
    } else if error.is_client() {
        "client error"
    } else {
        "connection failed"
    };
    match error.status() {
        Some(code) => format!("{kind}, reply code {code}"),
        None => kind.to_owned(),
    }
}
