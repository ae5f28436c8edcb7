//! One-time passwords end to end (docs/decisions.md, One-time passwords), on both stores, with a
//! real SMTP server on loopback: the password is read out of the mail the server received.

use std::sync::Arc;

use integration_tests::app::{json_of, AppOptions, TestApp, TestClient};
use integration_tests::assertions::{assert_token_error, Answer};
use integration_tests::on_both_stores;
use integration_tests::ports::RefusingPort;
use integration_tests::smtp_server::{start_refusing_smtp_server, start_smtp_server, SmtpServer};
use token_service::admin::NewClient;
use token_service::domain::{Geolocation, GrantType, Scopes, User, UserStatus};
use token_service::mail::{Mailbox, Mailer, OutboxMailer, SmtpMailer, SmtpUrl};

use crate::authorize::flow::assert_id_token;

const ADDRESS: &str = "Ann.Lee@Example.com";

/// The app of `base` (its store) again, now mailing through `mailer`.
async fn with_mailer(base: &TestApp, mailer: Arc<dyn Mailer>) -> TestApp {
    let options = AppOptions {
        mailer: Some(mailer),
        ..AppOptions::default()
    };
    let mut app = TestApp::with_store(base.store.clone(), base.backend, options).await;
    app.data = base.data.clone();
    app
}

fn sender() -> Mailbox {
    "Token Service <no-reply@example.com>".parse().unwrap()
}

fn smtp_mailer(server: &SmtpServer) -> Arc<dyn Mailer> {
    let url = SmtpUrl::parse(&server.url()).unwrap();
    Arc::new(SmtpMailer::new(&url, sender()).unwrap())
}

/// The app over an accepting SMTP server.
async fn smtp_app(base: TestApp) -> (TestApp, SmtpServer) {
    let server = start_smtp_server();
    let app = with_mailer(&base, smtp_mailer(&server)).await;
    (app, server)
}

/// The six digits of a mail's text part.
fn password_in(text: &str) -> String {
    text.split(|c: char| !c.is_ascii_digit())
        .find(|run| run.len() == 6)
        .unwrap_or_else(|| panic!("no six-digit password in {text:?}"))
        .to_owned()
}

async fn user_with_email(app: &TestApp, login: &str, status: UserStatus) -> User {
    app.create_user_with(login, "a password", |new| {
        new.email = Some(ADDRESS.to_owned());
        new.status = status;
    })
    .await
}

fn with_client<'a>(client: &'a TestClient, form: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut all = vec![
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
    ];
    all.extend_from_slice(form);
    all
}

async fn request_otp(app: &TestApp, client: &TestClient, form: &[(&str, &str)]) -> Answer {
    json_of(
        app.post_form("/oauth2/v0/otp", &with_client(client, form))
            .await,
    )
    .await
}

async fn otp_grant(app: &TestApp, client: &TestClient, form: &[(&str, &str)]) -> Answer {
    let mut all = vec![("grant_type", "otp")];
    all.extend_from_slice(form);
    app.token(&with_client(client, &all)).await
}

const CHANNEL: [(&str, &str); 2] = [("channel_type", "email"), ("channel_handle", ADDRESS)];

/// Requests a password for [`ADDRESS`] with `facts` and returns it, read from the mail.
async fn mailed_password(
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
async fn client_with_links(app: &TestApp, scopes: &str) -> TestClient {
    let mut new = NewClient::named("Expenses", Scopes::parse(scopes).unwrap());
    new.redirect_uris = vec!["https://app.example.com/callback".to_owned()];
    app.create_client_with(new).await
}

async fn the_password_yields_a_user_family_once(base: TestApp) {
    let (app, server) = smtp_app(base).await;
    let client = client_with_links(&app, "read write").await;
    let user = user_with_email(&app, "ann", UserStatus::Active).await;
    let facts = [
        ("name", "Ann"),
        ("company", "ACME"),
        ("link", "https://app.example.com/x"),
    ];
    let password = mailed_password(&app, &server, &client, &facts).await;
    assert!(
        !app.data.contains(&password).await,
        "an open password is stored only as a hash"
    );
    assert!(
        app.data.contains("ann").await,
        "the scan sees what is stored in clear"
    );
    let text = server.received()[0].part("text/plain").unwrap();
    assert!(
        text.contains("https://app.example.com/x"),
        "the link is shown"
    );

    // The address in another case is the same address.
    let upper = ADDRESS.to_uppercase();
    let mut form = vec![
        ("otp", password.as_str()),
        ("channel_type", "email"),
        ("channel_handle", upper.as_str()),
    ];
    form.extend_from_slice(&facts);
    let (status, body) = otp_grant(&app, &client, &form).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["principal_type"], "user");
    assert_eq!(body["id"], user.id.to_string());
    assert!(body["refresh_token"].is_string(), "{body}");
    assert_eq!(body["scope"], "read write");
    let claims = assert_id_token(&app, &body, &user.id.to_string(), &client, "user").await;
    assert!(
        claims.get("nonce").is_none(),
        "no nonce was given: {claims}"
    );
    assert!(
        !app.data.contains(&password).await,
        "the password is never stored in clear, open or consumed"
    );

    let again = otp_grant(&app, &client, &form).await;
    assert_token_error(&again, 400, "invalid_request", 83);
}

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

async fn grant_refusals_56_57_58_80_81_and_83(base: TestApp) {
    let (app, _server) = smtp_app(base).await;
    let client = app.create_client("read").await;
    let refusals: [(&[(&str, &str)], u64); 6] = [
        (&CHANNEL, 56),
        (&[("otp", "123456"), ("channel_handle", ADDRESS)], 57),
        (&[("otp", "123456"), ("channel_type", "email")], 58),
        (
            &[
                ("otp", "123456"),
                ("channel_type", "sms"),
                ("channel_handle", ADDRESS),
            ],
            80,
        ),
        (
            &[
                ("otp", "123456"),
                ("channel_type", "email"),
                ("channel_handle", "x@"),
            ],
            81,
        ),
        (&[("otp", "123456"), CHANNEL[0], CHANNEL[1]], 83),
    ];
    for (form, code) in refusals {
        let answer = otp_grant(&app, &client, form).await;
        assert_token_error(&answer, 400, "invalid_request", code);
    }
}

async fn wrong_passwords_85_and_the_fifth_closes_it(base: TestApp) {
    let (app, server) = smtp_app(base).await;
    let client = app.create_client("read").await;
    user_with_email(&app, "ann", UserStatus::Active).await;
    let password = mailed_password(&app, &server, &client, &[]).await;
    let wrong = if password == "000000" {
        "000001"
    } else {
        "000000"
    };
    for _ in 0..5 {
        let answer = otp_grant(&app, &client, &[("otp", wrong), CHANNEL[0], CHANNEL[1]]).await;
        assert_token_error(&answer, 400, "invalid_request", 85);
    }
    let answer = otp_grant(&app, &client, &[("otp", &password), CHANNEL[0], CHANNEL[1]]).await;
    assert_token_error(&answer, 400, "invalid_request", 83);
}

async fn facts_must_match_84_and_expiry_83(base: TestApp) {
    let (app, server) = smtp_app(base).await;
    let client = app.create_client("read").await;
    user_with_email(&app, "ann", UserStatus::Active).await;
    let password = mailed_password(&app, &server, &client, &[("name", "Ann")]).await;
    let base_form = [("otp", password.as_str()), CHANNEL[0], CHANNEL[1]];
    let answer = otp_grant(&app, &client, &base_form).await;
    assert_token_error(&answer, 400, "invalid_request", 84);
    let mut other = base_form.to_vec();
    other.push(("name", "Bob"));
    let answer = otp_grant(&app, &client, &other).await;
    assert_token_error(&answer, 400, "invalid_request", 84);

    // Another client cannot redeem it.
    let stranger = app.create_client("read").await;
    let mut right = base_form.to_vec();
    right.push(("name", "Ann"));
    let answer = otp_grant(&app, &stranger, &right).await;
    assert_token_error(&answer, 400, "invalid_request", 83);

    app.clock.advance(600);
    let answer = otp_grant(&app, &client, &right).await;
    assert_token_error(&answer, 400, "invalid_request", 83);
}

/// `company` and `link` are facts like `name`: each must be sent again, unchanged, with the
/// password; the password still works once they are.
async fn company_and_link_facts_must_match_84(base: TestApp) {
    let (app, server) = smtp_app(base).await;
    let client = client_with_links(&app, "read").await;
    user_with_email(&app, "ann", UserStatus::Active).await;
    let company = ("company", "ACME");
    let link = ("link", "https://app.example.com/x");
    let password = mailed_password(&app, &server, &client, &[company, link]).await;
    let with_facts = |facts: &[(&'static str, &'static str)]| {
        let mut form = vec![("otp", password.as_str()), CHANNEL[0], CHANNEL[1]];
        form.extend_from_slice(facts);
        form
    };
    for facts in [
        vec![link],
        vec![("company", "Other Corp"), link],
        vec![company],
        vec![company, ("link", "https://app.example.com/y")],
    ] {
        let answer = otp_grant(&app, &client, &with_facts(&facts)).await;
        assert_token_error(&answer, 400, "invalid_request", 84);
    }
    let (status, body) = otp_grant(&app, &client, &with_facts(&[company, link])).await;
    assert_eq!(status, 200, "the right facts: {body}");
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

async fn unknown_address_is_answered_alike_then_55(base: TestApp) {
    let (app, server) = smtp_app(base).await;
    let client = app.create_client("read").await;
    // No user has the address: the request answers exactly as for a user's address.
    let password = mailed_password(&app, &server, &client, &[]).await;
    let answer = otp_grant(&app, &client, &[("otp", &password), CHANNEL[0], CHANNEL[1]]).await;
    assert_token_error(&answer, 400, "invalid_request", 55);
}

async fn user_status_and_home_decide_after_the_password(base: TestApp) {
    let (app, server) = smtp_app(base).await;
    let client = app.create_client("read").await;
    let user = user_with_email(&app, "ann", UserStatus::Disabled).await;
    let elsewhere = Geolocation::parse("https://eu.api.example.com").unwrap();
    let expectations = [
        (UserStatus::Disabled, None, "invalid_grant", 10),
        (UserStatus::LogonDenied, None, "invalid_grant", 12),
        (
            UserStatus::Active,
            Some(elsewhere.clone()),
            "invalid_request",
            16,
        ),
    ];
    for (status, home, error, code) in expectations {
        let mut stored = app
            .store
            .principals()
            .get_user(&user.id)
            .await
            .unwrap()
            .unwrap();
        stored.status = status;
        if let Some(home) = home {
            stored.geolocation = home;
        }
        app.store.principals().put_user(&stored).await.unwrap();
        let password = mailed_password(&app, &server, &client, &[]).await;
        let answer = otp_grant(&app, &client, &[("otp", &password), CHANNEL[0], CHANNEL[1]]).await;
        assert_token_error(&answer, 400, error, code);
        if code == 16 {
            assert_eq!(answer.1["geolocation"], elsewhere.as_str());
        }
    }
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
    let mail = integration_tests::smtp_server::ReceivedMail {
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

on_both_stores!(
    the_password_yields_a_user_family_once,
    request_refusals_57_58_80_81_and_client_60_to_63,
    grant_refusals_56_57_58_80_81_and_83,
    wrong_passwords_85_and_the_fifth_closes_it,
    facts_must_match_84_and_expiry_83,
    company_and_link_facts_must_match_84,
    five_open_requests_then_82,
    unknown_address_is_answered_alike_then_55,
    user_status_and_home_decide_after_the_password,
    a_refusing_or_dead_mail_server_is_503_and_leaves_nothing,
    without_smtp_the_mail_is_an_eml_file_in_the_outbox,
);
