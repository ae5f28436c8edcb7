//! Requesting a password: what is refused before anything is mailed, the open-request limit, a
//! mail server that refuses or is gone, and the outbox used when there is no SMTP server.

use std::sync::Arc;

use crate::support::app::{json_of, TestApp, TestClient};
use crate::support::assertions::assert_token_error;
use crate::support::ports::RefusingPort;
use crate::support::smtp_server::start_refusing_smtp_server;
use token_adapters::mail::{OutboxMailer, SmtpMailer, SmtpUrl};
use token_core::admin::NewClient;
use token_core::mail::Mailer;
use token_domain::{GrantType, Scopes, UserStatus};

use super::*;

crate::on_both_stores!(
    request_refusals_57_58_80_81_and_client_60_to_63,
    five_open_requests_then_82,
    a_refusing_or_dead_mail_server_is_503_and_leaves_nothing,
    without_smtp_the_mail_is_an_eml_file_in_the_outbox,
);

async fn request_refusals_57_58_80_81_and_client_60_to_63(base: TestApp) {
    let (app, server) = smtp_app(base).await;
    let client = app.create_client("read").await;
    let refusals: [(&[(&str, &str)], u64); 4] = [
        (&[("channel_handle", ADDRESS)], 57),
        (&[("channel_type", "email")], 58),
        (&[("channel_type", "sms"), ("channel_handle", ADDRESS)], 80),
        (
            &[
                ("channel_type", "email"),
                ("channel_handle", "not an address"),
            ],
            81,
        ),
    ];
    for (form, code) in refusals {
        let answer = request_otp(&app, &client, form).await;
        assert_token_error(&answer, 400, "invalid_request", code);
    }
    let mut no_otp = NewClient::named("no otp", Scopes::parse("read").unwrap());
    no_otp.grants = [GrantType::Password].into_iter().collect();
    let no_otp = app.create_client_with(no_otp).await;
    let answer = request_otp(&app, &no_otp, &CHANNEL).await;
    assert_token_error(&answer, 400, "invalid_grant", 60);

    let unknown = TestClient {
        id: uuid::Uuid::new_v4().to_string(),
        secret: client.secret.clone(),
    };
    let answer = request_otp(&app, &unknown, &CHANNEL).await;
    assert_token_error(&answer, 401, "invalid_client", 61);
    let answer = json_of(app.post_form("/oauth2/v0/otp", &CHANNEL).await).await;
    assert_token_error(&answer, 400, "invalid_request", 62);
    let mut id_only = vec![("client_id", client.id.as_str())];
    id_only.extend_from_slice(&CHANNEL);
    let answer = json_of(app.post_form("/oauth2/v0/otp", &id_only).await).await;
    assert_token_error(&answer, 400, "invalid_request", 63);
    assert!(server.received().is_empty(), "no refusal mails anything");

    let answer = otp_grant(&app, &no_otp, &[("otp", "123456")]).await;
    assert_token_error(&answer, 400, "invalid_grant", 60);
}

async fn five_open_requests_then_82(base: TestApp) {
    let (app, server) = smtp_app(base).await;
    let client = app.create_client("read").await;
    for _ in 0..5 {
        mailed_password(&app, &server, &client, &[]).await;
    }
    let answer = request_otp(&app, &client, &CHANNEL).await;
    assert_token_error(&answer, 400, "invalid_request", 82);
    assert_eq!(
        server.received().len(),
        5,
        "nothing mailed for the refused request"
    );
    app.clock.advance(15 * 60 + 1);
    mailed_password(&app, &server, &client, &[]).await;
}

async fn a_refusing_or_dead_mail_server_is_503_and_leaves_nothing(base: TestApp) {
    let client = base.create_client("read").await;
    let refusing = start_refusing_smtp_server();
    let dead_port = RefusingPort::bind();
    let dead = SmtpUrl::parse(&dead_port.url("smtp")).unwrap();
    let mailers: [Arc<dyn Mailer>; 2] = [
        smtp_mailer(&refusing),
        Arc::new(SmtpMailer::new(&dead, sender()).unwrap()),
    ];
    for mailer in mailers {
        let app = with_mailer(&base, mailer).await;
        let response = app
            .post_form("/oauth2/v0/otp", &with_client(&client, &CHANNEL))
            .await;
        assert_eq!(response.status(), 503);
        let answer = otp_grant(&app, &client, &[("otp", "123456"), CHANNEL[0], CHANNEL[1]]).await;
        assert_token_error(&answer, 400, "invalid_request", 83);
    }
}

async fn without_smtp_the_mail_is_an_eml_file_in_the_outbox(base: TestApp) {
    let data_dir = tempfile::tempdir().unwrap();
    let outbox = data_dir.path().join("outbox");
    let app = with_mailer(&base, Arc::new(OutboxMailer::new(&outbox, sender()))).await;
    let client = app.create_client("read").await;
    let user = user_with_email(&app, "ann", UserStatus::Active).await;
    let (status, _) = request_otp(&app, &client, &CHANNEL).await;
    assert_eq!(status, 200);
    let files: Vec<_> = std::fs::read_dir(&outbox)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].extension().and_then(|e| e.to_str()), Some("eml"));
    let raw = std::fs::read_to_string(&files[0]).unwrap();
    let mail = crate::support::smtp_server::ReceivedMail {
        envelope_from: String::new(),
        envelope_to: vec![],
        raw: raw.replace("\r\n", "\n").replace('\n', "\r\n"),
    };
    let password = password_in(&mail.part("text/plain").expect("a text part"));
    let (status, body) =
        otp_grant(&app, &client, &[("otp", &password), CHANNEL[0], CHANNEL[1]]).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["id"], user.id.to_string());
}
