//! Delivery over SMTP with lettre (tokio, rustls with the webpki roots: no OpenSSL).
//!
//! `SMTP_URL` forms:
//! - `smtp://host[:port]`: STARTTLS is required, so one-time passwords (and credentials) never
//!   cross the network in the clear, even if an on-path attacker strips the server's STARTTLS
//!   offer. Only a relay on a loopback address (`localhost`, `127.0.0.0/8`, `::1`) may answer
//!   in plain text: then nothing leaves the machine. Port 587 by default. Amazon SES's SMTP
//!   interface: `smtp://USER:PASS@email-smtp.us-east-1.amazonaws.com:587`.
//! - `?tls=required` is accepted (and redundant) for URLs written when STARTTLS was optional.
//! - `smtps://user:pass@host[:port]`: TLS from the first byte (implicit TLS), port 465 by default.
//!
//! User and password are percent-decoded (SES SMTP passwords contain `/` and `+`).

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use lettre::message::Mailbox;
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};

use token_core::mail::{Composed, FactorNotice, MailError, Mailer, OtpMail};

use super::{smtp_error, to_message};

/// How long one whole send (connect, TLS, every command) may take before it fails and the
/// request answers 503, rather than holding the request until the function's own timeout.
pub const DEFAULT_SMTP_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsMode {
    /// STARTTLS if offered, else plain: loopback relays only.
    Opportunistic,
    /// STARTTLS or fail.
    StartTls,
    /// TLS from the start (`smtps://`).
    Implicit,
}

/// A parsed `SMTP_URL`. `Debug` never shows the credentials.
#[derive(Clone, PartialEq, Eq)]
pub struct SmtpUrl {
    pub host: String,
    pub port: u16,
    pub tls: TlsMode,
    credentials: Option<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("SMTP_URL must be smtp://[user:pass@]host[:port][?tls=required] or smtps://user:pass@host[:port]: {0}")]
pub struct InvalidSmtpUrl(&'static str);

impl SmtpUrl {
    pub fn parse(text: &str) -> Result<Self, InvalidSmtpUrl> {
        let url = url::Url::parse(text.trim()).map_err(|_| InvalidSmtpUrl("not a URL"))?;
        let host = url
            .host_str()
            .filter(|host| !host.is_empty())
            .ok_or(InvalidSmtpUrl("no host"))?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let credentials = match (url.username(), url.password()) {
            ("", None) => None,
            (user, Some(password)) => Some((decode(user)?, decode(password)?)),
            (_, None) => return Err(InvalidSmtpUrl("a user without a password")),
        };
        let tls_required = match url.query_pairs().find(|(key, _)| key == "tls") {
            None => false,
            Some((_, value)) if value == "required" => true,
            Some(_) => return Err(InvalidSmtpUrl("tls may only be `required`")),
        };
        let (tls, default_port) = match url.scheme() {
            "smtp" if tls_required || !is_loopback(&host) => (TlsMode::StartTls, 587),
            "smtp" => (TlsMode::Opportunistic, 587),
            "smtps" => (TlsMode::Implicit, 465),
            _ => return Err(InvalidSmtpUrl("the scheme must be smtp or smtps")),
        };
        Ok(Self {
            host,
            port: url.port().unwrap_or(default_port),
            tls,
            credentials,
        })
    }

    pub fn has_credentials(&self) -> bool {
        self.credentials.is_some()
    }
}

/// A host whose traffic never leaves the machine.
fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn decode(text: &str) -> Result<String, InvalidSmtpUrl> {
    percent_decode(text).ok_or(InvalidSmtpUrl(
        "credentials are not valid percent-encoded UTF-8",
    ))
}

/// `%XX` sequences to bytes, then UTF-8. `url` leaves user and password percent-encoded.
fn percent_decode(text: &str) -> Option<String> {
    let mut bytes = Vec::with_capacity(text.len());
    let mut rest = text.as_bytes();
    while let Some((&first, tail)) = rest.split_first() {
        if first == b'%' {
            let hex = tail.get(..2)?;
            bytes.push(u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?);
            rest = &tail[2..];
        } else {
            bytes.push(first);
            rest = tail;
        }
    }
    String::from_utf8(bytes).ok()
}

impl fmt::Debug for SmtpUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SmtpUrl")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("tls", &self.tls)
            .field(
                "credentials",
                &self.credentials.as_ref().map(|_| "[redacted]"),
            )
            .finish()
    }
}

/// Sends each mail on a new connection: no pool, because a Lambda may be frozen for minutes
/// between requests and a pooled connection would be dead on thaw.
#[derive(Clone)]
pub struct SmtpMailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    server: String,
    timeout: Duration,
}

impl SmtpMailer {
    pub fn new(url: &SmtpUrl, from: Mailbox) -> Result<Self, MailError> {
        Self::with_timeout(url, from, DEFAULT_SMTP_TIMEOUT)
    }

    pub fn with_timeout(
        url: &SmtpUrl,
        from: Mailbox,
        timeout: Duration,
    ) -> Result<Self, MailError> {
        let tls_parameters = || TlsParameters::new(url.host.clone()).map_err(smtp_error);
        let tls = match url.tls {
            TlsMode::Opportunistic => Tls::Opportunistic(tls_parameters()?),
            TlsMode::StartTls => Tls::Required(tls_parameters()?),
            TlsMode::Implicit => Tls::Wrapper(tls_parameters()?),
        };
        let mut builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&url.host)
            .port(url.port)
            .tls(tls)
            .timeout(Some(timeout));
        if let Some((user, password)) = &url.credentials {
            builder = builder.credentials(Credentials::new(user.clone(), password.clone()));
        }
        Ok(Self {
            transport: builder.build(),
            from,
            server: format!("{}:{}", url.host, url.port),
            timeout,
        })
    }
}

impl fmt::Debug for SmtpMailer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SmtpMailer")
            .field("server", &self.server)
            .field("from", &self.from.email.to_string())
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl Mailer for SmtpMailer {
    async fn send(&self, message: &OtpMail) -> Result<(), MailError> {
        self.deliver(message).await?;
        tracing::info!(server = %self.server, "one-time password mail sent");
        Ok(())
    }

    async fn send_notice(&self, notice: &FactorNotice) -> Result<(), MailError> {
        self.deliver(notice).await?;
        tracing::info!(server = %self.server, "sign-in factor notice sent");
        Ok(())
    }
}

impl SmtpMailer {
    async fn deliver(&self, message: &dyn Composed) -> Result<(), MailError> {
        let email = to_message(message, &self.from)?;
        // lettre's own timeout bounds only the TCP connect; a server that accepts and then
        // stalls must fail within the bound all the same.
        tokio::time::timeout(self.timeout, self.transport.send(email))
            .await
            .map_err(|_| MailError::TimedOut(self.timeout))?
            .map_err(smtp_error)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_smtp_is_for_loopback_relays_only() {
        let url = SmtpUrl::parse("smtp://127.0.0.1:2525").unwrap();
        assert_eq!((url.host.as_str(), url.port), ("127.0.0.1", 2525));
        assert_eq!(url.tls, TlsMode::Opportunistic);
        assert!(!url.has_credentials());
        for loopback in ["smtp://localhost", "smtp://[::1]:25", "smtp://127.0.0.2"] {
            assert_eq!(
                SmtpUrl::parse(loopback).unwrap().tls,
                TlsMode::Opportunistic
            );
        }
        let relay = SmtpUrl::parse("smtp://relay").unwrap();
        assert_eq!(relay.port, 587);
        assert_eq!(
            relay.tls,
            TlsMode::StartTls,
            "a relay elsewhere must not be reached in the clear"
        );
        assert_eq!(
            SmtpUrl::parse("smtp://10.0.0.5:25").unwrap().tls,
            TlsMode::StartTls
        );
    }

    #[test]
    fn credentials_are_percent_decoded_and_require_tls() {
        let url = SmtpUrl::parse(
            "smtp://AKIAEXAMPLE:BAbc%2Fdef%2Bghi%3D@email-smtp.us-east-1.amazonaws.com:587",
        )
        .unwrap();
        assert_eq!(url.tls, TlsMode::StartTls);
        assert_eq!(
            url.credentials,
            Some(("AKIAEXAMPLE".to_owned(), "BAbc/def+ghi=".to_owned()))
        );
        let debug = format!("{url:?}");
        assert!(debug.contains("[redacted]"), "{debug}");
        assert!(
            !debug.contains("AKIAEXAMPLE") && !debug.contains("BAbc"),
            "{debug}"
        );

        let implicit = SmtpUrl::parse("smtps://user:p%40ss@mail.example.com").unwrap();
        assert_eq!((implicit.tls, implicit.port), (TlsMode::Implicit, 465));
        assert_eq!(implicit.credentials.unwrap().1, "p@ss");
        assert_eq!(
            SmtpUrl::parse("smtp://relay:25?tls=required").unwrap().tls,
            TlsMode::StartTls
        );
    }

    #[test]
    fn rejects_other_forms() {
        for bad in [
            "http://relay",
            "smtp://",
            "not a url",
            "smtp://user@relay",
            "smtp://relay?tls=none",
            "smtp://u:%ZZ@relay",
        ] {
            assert!(SmtpUrl::parse(bad).is_err(), "{bad}");
        }
    }

    /// A server that refuses the recipient with a reply quoting the address, as Postfix does.
    fn refusing_server() -> u16 {
        use std::io::{BufRead, BufReader, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut writer = stream.try_clone().unwrap();
            let mut reader = BufReader::new(stream);
            writer.write_all(b"220 test ESMTP\r\n").unwrap();
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                let reply: &[u8] = match line.get(..4).map(str::to_ascii_uppercase).as_deref() {
                    Some("EHLO") => b"250 test\r\n",
                    Some("RCPT") => {
                        b"550 5.1.1 <victim@example.com>: Recipient address rejected\r\n"
                    }
                    Some("QUIT") => b"221 bye\r\n",
                    _ => b"250 ok\r\n",
                };
                if writer.write_all(reply).is_err() {
                    break;
                }
                line.clear();
            }
        });
        port
    }

    #[tokio::test]
    async fn a_refusal_says_its_kind_and_code_and_nothing_of_the_recipient() {
        let url = SmtpUrl::parse(&format!("smtp://127.0.0.1:{}", refusing_server())).unwrap();
        let mailer = SmtpMailer::new(&url, "no-reply@example.com".parse().unwrap()).unwrap();
        let mail = OtpMail {
            to: token_domain::ChannelHandle::parse("victim@example.com").unwrap(),
            app_name: "App".to_owned(),
            link: None,
            password: token_domain::OneTimePassword::generate(&token_domain::random::OsRandom),
        };
        let error = mailer.send(&mail).await.unwrap_err();
        // Everything a logger could print: the error and its whole source chain.
        let mut printed = format!("{error} {error:?}");
        let mut source = std::error::Error::source(&error);
        while let Some(inner) = source {
            printed.push_str(&format!(" {inner} {inner:?}"));
            source = inner.source();
        }
        assert!(
            printed.contains("permanent rejection, reply code 550"),
            "{printed}"
        );
        assert!(!printed.contains("victim"), "{printed}");
    }

    #[test]
    fn mailer_debug_names_the_server_only() {
        let url = SmtpUrl::parse("smtps://user:secret@mail.example.com").unwrap();
        let mailer = SmtpMailer::new(&url, "no-reply@example.com".parse().unwrap()).unwrap();
        let debug = format!("{mailer:?}");
        assert!(debug.contains("mail.example.com:465"), "{debug}");
        assert!(!debug.contains("secret"), "{debug}");
    }
}
