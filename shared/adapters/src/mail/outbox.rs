//! The local default when `SMTP_URL` is unset: each mail becomes an `.eml` file under
//! `DATA_DIR/outbox/`, which any mail client opens. The path is logged (never the password), so
//! the local server shows where the mail went.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use lettre::message::Mailbox;
use uuid::Uuid;

use token_core::mail::{Composed, FactorNotice, MailError, Mailer, OtpMail};

use super::to_message;

#[derive(Debug, Clone)]
pub struct OutboxMailer {
    dir: PathBuf,
    from: Mailbox,
}

impl OutboxMailer {
    pub fn new(dir: impl Into<PathBuf>, from: Mailbox) -> Self {
        Self {
            dir: dir.into(),
            from,
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes the mail and returns its path. Names start with the time, so a directory listing
    /// is in sending order, and end with a random UUID, so concurrent writers never collide
    /// (the file is created exclusively all the same).
    pub async fn write(&self, message: &dyn Composed) -> Result<PathBuf, MailError> {
        let raw = to_message(message, &self.from)?.formatted();
        let millis = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or_default();
        let path = self.dir.join(format!("{millis}-{}.eml", Uuid::new_v4()));
        let dir = self.dir.clone();
        let target = path.clone();
        tokio::task::spawn_blocking(move || write_new_file(&dir, &target, &raw))
            .await
            .map_err(|join| std::io::Error::other(join.to_string()))
            .and_then(|written| written)
            .map_err(|source| MailError::Outbox {
                path: path.clone(),
                source,
            })?;
        Ok(path)
    }
}

/// The file holds a live password: readable by its owner only.
fn write_new_file(dir: &Path, path: &Path, contents: &[u8]) -> std::io::Result<()> {
    fs::create_dir_all(dir)?;
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(contents)?;
    file.sync_all()
}

#[async_trait]
impl Mailer for OutboxMailer {
    async fn send(&self, message: &OtpMail) -> Result<(), MailError> {
        let path = self.write(message).await?;
        tracing::info!(path = %path.display(), "one-time password mail written to the outbox");
        Ok(())
    }

    async fn send_notice(&self, notice: &FactorNotice) -> Result<(), MailError> {
        let path = self.write(notice).await?;
        tracing::info!(path = %path.display(), "sign-in factor notice written to the outbox");
        Ok(())
    }
}
