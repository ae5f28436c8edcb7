//! The mailers against the world: `SmtpMailer` delivering to a real SMTP server on loopback,
//! refused and unreachable servers failing fast, and the outbox under `DATA_DIR/outbox/`.

use std::collections::HashMap;
use std::net::TcpListener;
use std::time::{Duration, Instant};

use crate::support::ports::RefusingPort;
use crate::support::smtp_server::{start_refusing_smtp_server, start_smtp_server};
use token_adapters::mail::{
    mailer_from_config, MailConfig, Mailbox, OutboxMailer, SmtpMailer, SmtpUrl,
};
use token_core::config::Config;
use token_core::mail::{MailError, Mailer, OtpMail};
use token_domain::random::OsRandom;
use token_domain::{ChannelHandle, OneTimePassword};

const LINK: &str = "https://app.example.com/continue?step=2&who=\"ann\"";

fn otp_mail(link: Option<&str>) -> OtpMail {
    OtpMail {
        to: ChannelHandle::parse("Ann.Lee@Example.com").unwrap(),
        app_name: "Expense Reports".to_owned(),
        link: link.map(str::to_owned),
        password: OneTimePassword::generate(&OsRandom),
    }
}

fn sender() -> Mailbox {
    "Token Service <no-reply@example.com>".parse().unwrap()
}

/// Every send in these tests must end within this bound, success or failure.
async fn bounded<T>(send: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(20), send)
        .await
        .expect("the send finished in time")
}

#[tokio::test]
async fn smtp_delivers_a_text_and_an_html_part() {
    let server = start_smtp_server();
    let url = SmtpUrl::parse(&server.url()).unwrap();
    let mailer = SmtpMailer::new(&url, sender()).unwrap();
    let mail = otp_mail(Some(LINK));
    let password = mail.password.expose().to_owned();

    bounded(mailer.send(&mail)).await.unwrap();

    let received = server.wait_for(1).await;
    assert_eq!(received.len(), 1);
    let message = &received[0];
    assert_eq!(message.envelope_from, "no-reply@example.com");
    assert_eq!(message.envelope_to, ["Ann.Lee@Example.com"]);
    assert_eq!(message.header("To").as_deref(), Some("Ann.Lee@Example.com"));
    let subject = message.header("Subject").unwrap();
    assert!(subject.contains("Expense Reports"), "{subject}");
    assert!(
        !subject.contains(&password),
        "the password is not in a header"
    );
    assert!(message
        .header("Content-Type")
        .unwrap()
        .starts_with("multipart/alternative"));

    let text = message.part("text/plain").expect("a text part");
    assert!(text.contains(&password), "{text}");
    assert!(text.contains("Expense Reports") && text.contains("10 minutes"));
    assert!(text.contains(LINK), "{text}");

    let html = message.part("text/html").expect("an HTML part");
    assert!(html.contains(&password), "{html}");
    assert!(html.contains("Expense Reports") && html.contains("10 minutes"));
    let escaped = "https://app.example.com/continue?step=2&#38;who=&#34;ann&#34;";
    assert!(html.contains(&format!("<a href=\"{escaped}\">")), "{html}");
    assert!(!html.contains(LINK), "the raw link is escaped in HTML");
}

#[tokio::test]
async fn smtp_mail_without_a_link_has_no_link_line() {
    let server = start_smtp_server();
    let mailer = SmtpMailer::new(&SmtpUrl::parse(&server.url()).unwrap(), sender()).unwrap();
    bounded(mailer.send(&otp_mail(None))).await.unwrap();
    let received = server.wait_for(1).await;
    assert!(!received[0]
        .part("text/plain")
        .unwrap()
        .contains("Continue at"));
    assert!(!received[0]
        .part("text/html")
        .unwrap()
        .contains("Continue at"));
}

#[tokio::test]
async fn a_refusing_server_is_a_mail_error() {
    let server = start_refusing_smtp_server();
    let mailer = SmtpMailer::new(&SmtpUrl::parse(&server.url()).unwrap(), sender()).unwrap();
    let error = bounded(mailer.send(&otp_mail(None))).await.unwrap_err();
    match &error {
        MailError::Smtp(summary) => assert!(summary.starts_with("permanent rejection"), "{error}"),
        other => panic!("expected an SMTP error, got {other:?}"),
    }
    // What is logged is the reply code, never the reply's text (which may quote an address).
    let shown = error.to_string();
    assert!(shown.contains("550"), "{shown}");
    assert!(!shown.to_lowercase().contains("mailbox"), "{shown}");
    assert!(
        std::error::Error::source(&error).is_none(),
        "no source error, whose text a chain-printing log would show"
    );
    assert!(server.received().is_empty());
}

#[tokio::test]
async fn a_server_that_is_down_fails_fast() {
    // A held port where nothing listens: connections are refused.
    let refusing = RefusingPort::bind();
    let url = SmtpUrl::parse(&refusing.url("smtp")).unwrap();
    let mailer = SmtpMailer::new(&url, sender()).unwrap();
    let started = Instant::now();
    let error = bounded(mailer.send(&otp_mail(None))).await.unwrap_err();
    assert!(matches!(error, MailError::Smtp(_)), "{error:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn a_silent_server_times_out_within_the_bound() {
    // Accepts connections (the backlog does) but never greets.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = SmtpUrl::parse(&format!("smtp://{}", silent.local_addr().unwrap())).unwrap();
    let mailer = SmtpMailer::with_timeout(&url, sender(), Duration::from_secs(1)).unwrap();
    let started = Instant::now();
    let error = bounded(mailer.send(&otp_mail(None))).await.unwrap_err();
    assert!(matches!(error, MailError::TimedOut(_)), "{error:?}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn without_smtp_url_mail_goes_to_the_outbox_under_data_dir() {
    let data_dir = tempfile::tempdir().unwrap();
    let env = HashMap::from([("DATA_DIR".to_owned(), data_dir.path().display().to_string())]);
    let config = Config::from_lookup(|name| env.get(name).cloned()).unwrap();
    let mail_config = MailConfig::from_config(&config).unwrap();
    let outbox = data_dir.path().join("outbox");
    assert_eq!(mail_config.outbox_dir, outbox);

    let mailer = mailer_from_config(&mail_config).unwrap();
    let first = otp_mail(Some(LINK));
    bounded(mailer.send(&first)).await.unwrap();
    let second = OutboxMailer::new(&outbox, mail_config.from.clone());
    let path = bounded(second.write(&otp_mail(None))).await.unwrap();
    assert_eq!(path.parent(), Some(outbox.as_path()));
    assert_eq!(path.extension().and_then(|e| e.to_str()), Some("eml"));

    let mut files: Vec<_> = std::fs::read_dir(&outbox)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 2, "one file per mail, never overwritten");
    assert!(files.contains(&path));
    let written: Vec<String> = files
        .iter()
        .map(|file| std::fs::read_to_string(file).unwrap())
        .collect();
    assert!(written
        .iter()
        .any(|raw| raw.contains("multipart/alternative")
            && raw.contains("From: no-reply@127.0.0.1")
            && raw.contains("To: Ann.Lee@Example.com")));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "only the owner reads a live password");
    }
}
