//! Mail for one-time passwords (docs/decisions.md, "One-time passwords") and the notices of a
//! changed sign-in factor: the [`Mailer`] port and the messages. Its implementations are adapters (`token_adapters::mail`: SMTP for `SMTP_URL`, and
//! `.eml` files under `DATA_DIR/outbox/`, the local default): the one-time-password flow
//! ([`crate::auth::otp`]) calls [`Mailer`]; this module depends on the domain's values only.
//!
//! Nothing here logs a password: [`OtpMail`] redacts it in `Debug`, and errors carry only the
//! server's reply kind or the I/O failure.

mod message;
mod notice;

use std::path::PathBuf;

use async_trait::async_trait;

pub use message::OtpMail;
pub use notice::{FactorChange, FactorNotice};

#[async_trait]
pub trait Mailer: Send + Sync + std::fmt::Debug {
    /// Delivers the message, or fails; a failure means the caller answers 503.
    async fn send(&self, message: &OtpMail) -> Result<(), MailError>;

    /// Tells a user that a sign-in factor of theirs was added or removed. A mailer that cannot
    /// (the test doubles of other flows) says so; the change it reports stands either way.
    async fn send_notice(&self, notice: &FactorNotice) -> Result<(), MailError> {
        let _ = notice;
        Err(MailError::NotConfigured)
    }
}

/// A mail's parts, whatever it says: what the adapters turn into a message.
pub trait Composed: Sync {
    fn to(&self) -> &crate::domain::ChannelHandle;
    fn subject(&self) -> String;
    fn text_body(&self) -> String;
    fn html_body(&self) -> String;
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
    /// only, and no source error, since a logger that prints an error's
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
