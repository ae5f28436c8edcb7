//! The SMTP mailer of a Lambda function whose `SMTP_URL` is a Secrets Manager secret
//! (`SMTP_URL_SECRET_ARN`): the secret is read at the first mail, not at init
//! (docs/decisions.md, "Lazy start-up"). A failed read fails that mail (503) and is tried again
//! at the next one; a read URL is kept for the process's life, as at start-up before.

use std::sync::Arc;

use async_trait::async_trait;
use futures::future::BoxFuture;
use lettre::message::Mailbox;
use tokio::sync::OnceCell;

use super::config::MailConfigError;
use token_core::mail::{FactorNotice, MailError, Mailer, OtpMail};

use super::{SmtpMailer, SmtpUrl};

/// Reads the SMTP URL (the secret's string).
pub type UrlSource =
    Arc<dyn Fn() -> BoxFuture<'static, Result<String, MailConfigError>> + Send + Sync>;

pub struct LazySmtpMailer {
    url: UrlSource,
    from: Mailbox,
    mailer: OnceCell<SmtpMailer>,
}

impl std::fmt::Debug for LazySmtpMailer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazySmtpMailer")
            .field("from", &self.from)
            .field("connected", &self.mailer.initialized())
            .finish_non_exhaustive()
    }
}

impl LazySmtpMailer {
    pub fn new(url: UrlSource, from: Mailbox) -> Self {
        Self {
            url,
            from,
            mailer: OnceCell::new(),
        }
    }

    /// The mailer of the secret named `arn`.
    pub fn of_secret(arn: String, from: Mailbox) -> Self {
        let url: UrlSource = Arc::new(move || {
            let arn = arn.clone();
            Box::pin(async move { super::config::fetch_secret_string(&arn).await })
        });
        Self::new(url, from)
    }

    async fn mailer(&self) -> Result<&SmtpMailer, MailError> {
        self.mailer
            .get_or_try_init(|| async {
                let url = (self.url)()
                    .await
                    .map_err(|error| MailError::Config(error.to_string()))?;
                let url =
                    SmtpUrl::parse(&url).map_err(|error| MailError::Config(error.to_string()))?;
                SmtpMailer::new(&url, self.from.clone())
            })
            .await
    }
}

#[async_trait]
impl Mailer for LazySmtpMailer {
    async fn send(&self, message: &OtpMail) -> Result<(), MailError> {
        self.mailer().await?.send(message).await
    }

    async fn send_notice(&self, notice: &FactorNotice) -> Result<(), MailError> {
        self.mailer().await?.send_notice(notice).await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    use super::*;

    #[tokio::test]
    async fn the_url_is_read_at_the_first_mail_and_a_failed_read_is_tried_again() {
        let reads = Arc::new(AtomicUsize::new(0));
        let down = Arc::new(AtomicBool::new(true));
        let (counted, failing) = (reads.clone(), down.clone());
        let url: UrlSource = Arc::new(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            let down = failing.load(Ordering::SeqCst);
            Box::pin(async move {
                if down {
                    Err(MailConfigError::Secret(
                        "Secrets Manager did not answer".into(),
                    ))
                } else {
                    Ok("smtp://127.0.0.1:9".to_owned())
                }
            })
        });
        let mailer = LazySmtpMailer::new(url, "no-reply@example.com".parse().unwrap());
        assert_eq!(reads.load(Ordering::SeqCst), 0, "nothing read when built");

        let error = mailer.mailer().await.unwrap_err();
        assert!(matches!(error, MailError::Config(_)), "{error:?}");
        assert!(mailer.mailer().await.is_err());
        assert_eq!(reads.load(Ordering::SeqCst), 2, "a failure is not kept");

        down.store(false, Ordering::SeqCst);
        mailer.mailer().await.unwrap();
        mailer.mailer().await.unwrap();
        assert_eq!(reads.load(Ordering::SeqCst), 3, "a URL read is kept");
    }
}
