//! What DynamoDB's TTL deletes, as the service writes it over HTTP: an authorization code's item
//! 300 s after it was issued; a one-time password (valid 600 s) 900 s after it was requested,
//! at the end of the window in which open requests are counted; a sign-in session at its idle
//! limit; an audit event 400 days after it. (The other records' TTL attributes are
//! `conformance_dynamodb`'s.)

use std::sync::Arc;

use crate::support::app::{AppOptions, Backend, TestApp};
use crate::support::smtp_server::start_smtp_server;
use crate::support::stored_data::{scan_table, Item, StoredData};
use token_adapters::mail::{SmtpMailer, SmtpUrl};
use token_domain::clock::Clock;
use token_store::dynamodb::sdk::types::AttributeValue;
use token_store::dynamodb::TTL_ATTRIBUTE;

use crate::authorize::flow::{approved_code, code_client, LOGIN, PASSWORD};

/// The one item whose partition key starts with `prefix`.
async fn only_item(app: &TestApp, prefix: &str) -> Item {
    let StoredData::Dynamo(store) = app.data.as_ref() else {
        panic!("a DynamoDB app");
    };
    let mut items: Vec<Item> = scan_table(store)
        .await
        .into_iter()
        .filter(
            |item| matches!(item.get("pk"), Some(AttributeValue::S(pk)) if pk.starts_with(prefix)),
        )
        .collect();
    assert_eq!(items.len(), 1, "one {prefix} item: {items:?}");
    items.remove(0)
}

#[track_caller]
fn assert_ttl(item: &Item, expected: i64, what: &str) {
    assert_eq!(
        item.get(TTL_ATTRIBUTE),
        Some(&AttributeValue::N(expected.to_string())),
        "{what}: `{TTL_ATTRIBUTE}` in epoch seconds: {item:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn an_authorization_code_item_expires_after_300_seconds() {
    let app = TestApp::spawn(Backend::DynamoDb)
        .await
        .expect("DynamoDB Local");
    app.create_user(LOGIN, PASSWORD).await;
    let client = code_client(&app).await;
    let issued_at = app.clock.now();
    approved_code(&app, &client).await;
    assert_ttl(
        &only_item(&app, "AUTHCODE#").await,
        issued_at + 300,
        "authorization code",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn a_one_time_password_is_valid_600_seconds_and_its_item_kept_900() {
    let server = start_smtp_server();
    let url = SmtpUrl::parse(&server.url()).unwrap();
    let sender = "Token Service <no-reply@example.com>".parse().unwrap();
    let options = AppOptions {
        mailer: Some(Arc::new(SmtpMailer::new(&url, sender).unwrap())),
        ..AppOptions::default()
    };
    let app = TestApp::spawn_with(Backend::DynamoDb, options)
        .await
        .expect("DynamoDB Local");
    let client = app.create_client("read").await;
    let address = "ttl.check@example.com";
    app.create_user_with("ttl-check", PASSWORD, |u| {
        u.email = Some(address.to_owned())
    })
    .await;
    let requested_at = app.clock.now();
    let response = app
        .post_form(
            "/oauth2/v0/otp",
            &[
                ("client_id", client.id.as_str()),
                ("client_secret", client.secret.as_str()),
                ("channel_type", "email"),
                ("channel_handle", address),
            ],
        )
        .await;
    assert_eq!(response.status(), 200, "{}", response.text().await.unwrap());
    server.wait_for(1).await;
    // Valid 600 s; the item itself outlives that until it leaves the 15-minute window in which
    // open requests are counted (the cap counts expired passwords too), so its TTL is +900 s.
    let item = only_item(&app, "OTP#").await;
    assert_eq!(
        item.get("valid_until"),
        Some(&AttributeValue::N((requested_at + 600).to_string())),
        "the password is valid 600 s: {item:?}"
    );
    assert_ttl(&item, requested_at + 900, "one-time password");
}

/// A sign-in session's item goes when its idle limit ends (8 hours after the sign-in), and every
/// audit event's item 400 days after the event.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn a_session_item_expires_when_idle_and_audit_items_after_400_days() {
    let app = TestApp::spawn(Backend::DynamoDb)
        .await
        .expect("DynamoDB Local");
    app.create_user(LOGIN, PASSWORD).await;
    let client = code_client(&app).await;
    let signed_in_at = app.clock.now();
    approved_code(&app, &client).await;
    assert_ttl(
        &only_item(&app, "SESSION#").await,
        signed_in_at + 28_800,
        "sign-in session",
    );
    let StoredData::Dynamo(store) = app.data.as_ref() else {
        panic!("a DynamoDB app");
    };
    let audit: Vec<Item> = scan_table(store)
        .await
        .into_iter()
        .filter(|item| matches!(item.get("pk"), Some(AttributeValue::S(pk)) if pk.starts_with("AUDIT#")))
        .collect();
    assert!(!audit.is_empty(), "the sign-in and the consent are audited");
    for item in &audit {
        assert_ttl(item, signed_in_at + 400 * 86_400, "audit event");
    }
}
