//! The mailers of `token_core::mail::Mailer`: [`SmtpMailer`] (`SMTP_URL`, with lettre),
//! [`LazySmtpMailer`] (its URL a Secrets Manager secret read at the first mail) and
//! [`OutboxMailer`] (`.eml` files under `DATA_DIR/outbox/`, the local default), built from the
//! configuration's mail section ([`MailConfig`]).
//!
//! Nothing here logs a password or SMTP credentials: [`SmtpUrl`] redacts them in `Debug`, and
//! errors carry only the server's reply kind or the I/O failure.

mod config;
mod lazy;
mod outbox;
mod smtp;

use lettre::message::{header::ContentType, MultiPart, SinglePart};
use lettre::Message;
use token_core::mail::{Composed, MailError};

pub use config::{mailer_from_config, MailConfig, MailConfigError, StartMail};
pub use lazy::LazySmtpMailer;
/// The sender type of `MAIL_FROM`.
pub use lettre::message::Mailbox;
pub use outbox::OutboxMailer;
pub use smtp::{InvalidSmtpUrl, SmtpMailer, SmtpUrl, TlsMode};

/// The RFC 5322 message from `from`; lettre encodes headers, so no caller value can inject
/// one.
pub fn to_message(mail: &dyn Composed, from: &Mailbox) -> Result<Message, MailError> {
    let to: Mailbox = mail
        .to()
        .as_str()
        .parse()
        .map_err(|e: lettre::address::AddressError| MailError::Message(e.to_string()))?;
    Message::builder()
        .from(from.clone())
        .to(to)
        .subject(mail.subject())
        .multipart(
            MultiPart::alternative()
                .singlepart(
                    SinglePart::builder()
                        .header(ContentType::TEXT_PLAIN)
                        .body(mail.text_body()),
                )
                .singlepart(
                    SinglePart::builder()
                        .header(ContentType::TEXT_HTML)
                        .body(mail.html_body()),
                ),
        )
        .map_err(|e| MailError::Message(e.to_string()))
}

/// An SMTP failure as the port's error: its kind and reply code only.
pub fn smtp_error(error: lettre::transport::smtp::Error) -> MailError {
    MailError::Smtp(smtp_summary(&error))
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

#[cfg(test)]
mod tests {
    use super::*;
    use token_core::mail::{FactorChange, FactorNotice};
    use token_domain::ChannelHandle;

    /// Any message the port carries becomes one multipart/alternative mail to its address (the
    /// one-time-password mail's own parts are `token_core::mail`'s tests).
    #[test]
    fn a_message_is_multipart_alternative_to_its_address() {
        let notice = FactorNotice {
            to: ChannelHandle::parse("ann@example.com").unwrap(),
            change: FactorChange::AuthenticatorAppAdded,
            at: 1_700_000_000,
        };
        let from: Mailbox = "no-reply@example.com".parse().unwrap();
        let raw = String::from_utf8(to_message(&notice, &from).unwrap().formatted()).unwrap();
        assert!(raw.contains("multipart/alternative"));
        assert!(raw.contains("text/plain") && raw.contains("text/html"));
        assert!(raw.contains("To: ann@example.com"));
        assert!(raw.contains("Subject: A sign-in method was added to your account"));
    }
}
