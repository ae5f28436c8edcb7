//! One-time passwords end to end (docs/decisions.md, One-time passwords), on both stores, with a
//! real SMTP server on loopback: the password is read out of the mail the server received. The
//! helpers here request and redeem; `mailing` covers the request and its mail, `redeem` the grant.

mod mailing;
mod redeem;

use std::sync::Arc;

use crate::support::app::{json_of, AppOptions, TestApp, TestClient};
use crate::support::assertions::Answer;
use crate::support::smtp_server::{start_smtp_server, SmtpServer};
use token_adapters::mail::{Mailbox, SmtpMailer, SmtpUrl};
use token_core::admin::NewClient;
use token_core::mail::Mailer;
use token_domain::{Scopes, User, UserStatus};

pub const ADDRESS: &str = "Ann.Lee@Example.com";

/// The app of `base` (its store and policy) again, now mailing through `mailer`.
pub async fn with_mailer(base: &TestApp, mailer: Arc<dyn Mailer>) -> TestApp {
    let options = AppOptions {
        mailer: Some(mailer),
        policy: base.services.policy.clone(),
        ..AppOptions::default()
    };
    let mut app = TestApp::with_store(base.store.clone(), base.backend, options).await;
    app.data = base.data.clone();
    app
}

pub fn sender() -> Mailbox {
    "Token Service <no-reply@example.com>".parse().unwrap()
}

pub fn smtp_mailer(server: &SmtpServer) -> Arc<dyn Mailer> {
    let url = SmtpUrl::parse(&server.url()).unwrap();
    Arc::new(SmtpMailer::new(&url, sender()).unwrap())
}

/// The app over an accepting SMTP server.
pub async fn smtp_app(base: TestApp) -> (TestApp, SmtpServer) {
    let server = start_smtp_server();
    let app = with_mailer(&base, smtp_mailer(&server)).await;
    (app, server)
}

/// The six digits of a mail's text part.
pub fn password_in(text: &str) -> String {
    text.split(|c: char| !c.is_ascii_digit())
        .find(|run| run.len() == 6)
        .unwrap_or_else(|| panic!("no six-digit password in {text:?}"))
        .to_owned()
}

pub async fn user_with_email(app: &TestApp, login: &str, status: UserStatus) -> User {
    app.create_user_with(login, "a password", |new| {
        new.email = Some(ADDRESS.to_owned());
        new.status = status;
    })
    .await
}

pub fn with_client<'a>(
    client: &'a TestClient,
    form: &[(&'a str, &'a str)],
) -> Vec<(&'a str, &'a str)> {
    let mut all = vec![
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
    ];
    all.extend_from_slice(form);
    all
}

pub async fn request_otp(app: &TestApp, client: &TestClient, form: &[(&str, &str)]) -> Answer {
    json_of(
        app.post_form("/oauth2/v0/otp", &with_client(client, form))
            .await,
    )
    .await
}

pub async fn otp_grant(app: &TestApp, client: &TestClient, form: &[(&str, &str)]) -> Answer {
    let mut all = vec![("grant_type", "otp")];
    all.extend_from_slice(form);
    app.token(&with_client(client, &all)).await
}

pub const CHANNEL: [(&str, &str); 2] = [("channel_type", "email"), ("channel_handle", ADDRESS)];

/// Requests a password for [`ADDRESS`] with `facts` and returns it, read from the mail.
pub async fn mailed_password(
    app: &TestApp,
    server: &SmtpServer,
    client: &TestClient,
    facts: &[(&str, &str)],
) -> String {
    let before = server.received().len();
    let mut form = CHANNEL.to_vec();
    form.extend_from_slice(facts);
    let (status, body) = request_otp(app, client, &form).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body, serde_json::json!({"message": "otp sent"}));
    let received = server.wait_for(before + 1).await;
    let mail = received.last().expect("a mail arrived");
    assert_eq!(mail.envelope_to, [ADDRESS]);
    password_in(&mail.part("text/plain").expect("a text part"))
}

/// A client whose registered redirect URI is on `https://app.example.com`, the origin the mails'
/// `link`s may point to.
pub async fn client_with_links(app: &TestApp, scopes: &str) -> TestClient {
    let mut new = NewClient::named("Expenses", Scopes::parse(scopes).unwrap());
    new.redirect_uris = vec!["https://app.example.com/callback".to_owned()];
    app.create_client_with(new).await
}
