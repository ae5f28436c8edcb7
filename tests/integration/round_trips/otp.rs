//! Budgets of the one-time-password flow, warm: the request that mails a password, and the
//! `otp` grant that redeems it. Each abuse limit is one conditional write.

use std::sync::{Arc, Mutex};

use super::counted::*;
use crate::support::app::{json_of, AppOptions, TestClient};
use reqwest::StatusCode;
use serde_json::Value;
use token_core::mail::{MailError, Mailer, OtpMail};
use uuid::Uuid;

/// Keeps the passwords it is asked to mail.
#[derive(Debug, Default)]
pub(crate) struct RecordingMailer(Mutex<Vec<String>>);

#[async_trait::async_trait]
impl Mailer for RecordingMailer {
    async fn send(&self, message: &OtpMail) -> Result<(), MailError> {
        self.0
            .lock()
            .unwrap()
            .push(message.password.expose().to_owned());
        Ok(())
    }
}

impl RecordingMailer {
    pub(crate) fn last(&self) -> String {
        self.0
            .lock()
            .unwrap()
            .last()
            .cloned()
            .expect("a mailed password")
    }
}

/// The two counters (the client's OTP limit, the address's open requests: 2) and the password's
/// item (under 1 KB: 1).
const OTP_REQUEST_UNITS: f64 = 2.0 * RATE_LIMIT_UNITS + 1.0;
/// The client's counter (1), the spent try, the consumption and the open-request count given
/// back (three `UpdateItem`s of small items: 3), and the new family's transaction (14).
const OTP_GRANT_UNITS: f64 = RATE_LIMIT_UNITS + 3.0 + NEW_FAMILY_UNITS;

async fn request(c: &Counted, client: &TestClient, address: &str) {
    let form = client_form(
        client,
        &[("channel_type", "email"), ("channel_handle", address)],
    );
    let (status, body) = json_of(c.app.post_form("/oauth2/v0/otp", &form).await).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

async fn redeem(c: &Counted, client: &TestClient, address: &str, otp: &str) -> Value {
    let form = client_form(
        client,
        &[
            ("grant_type", "otp"),
            ("channel_type", "email"),
            ("channel_handle", address),
            ("otp", otp),
        ],
    );
    let (status, tokens) = c.app.token(&form).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    tokens
}

/// Request: ≤ 2 + 2 limits: the open requests of the address (a Query) and the password (a
/// PutItem), plus the client's OTP limit and the address's open-request cap (one conditional
/// write each).
///
/// Grant: ≤ 10 + 1 limit: the address's failure block (GetItem); its open password (Query); the
/// spent try and, later, the consumption (each a Query locating the item, since its sort key
/// holds the write's microseconds, then a conditional UpdateItem); the user by address (two
/// GetItems: the address's owner item, then the user); the family (one transaction); the
/// open-request count given back (UpdateItem); plus the client's token limit. The two locating
/// Queries could go if the found record carried its sort key: left for when OTP volume matters.
pub async fn one_time_password(c: Counted) {
    let mailer = Arc::new(RecordingMailer::default());
    let c = c
        .with_options(AppOptions {
            mailer: Some(mailer.clone()),
            ..AppOptions::default()
        })
        .await;
    let client = c.app.create_client("read").await;
    let address = format!("ann-{}@example.com", Uuid::new_v4().simple());
    let login = format!("ann-{}", Uuid::new_v4().simple());
    c.app
        .create_user_with(&login, PASSWORD, |u| u.email = Some(address.clone()))
        .await;
    // Warm: the client and the user in the read cache.
    request(&c, &client, &address).await;
    redeem(&c, &client, &address, &mailer.last()).await;

    let ((), calls) = c
        .calls_of("otp request", request(&c, &client, &address))
        .await;
    assert_within(&calls, 2 + 2 * RATE_LIMIT, "otp request");
    assert_eq!(calls.count("PutItem"), 1, "one password stored");
    assert_write_units(&calls, OTP_REQUEST_UNITS, "otp request");
    let otp = mailer.last();
    let (_, calls) = c
        .calls_of("otp grant", redeem(&c, &client, &address, &otp))
        .await;
    // Two of them since a user's own factor counts: their authenticator app (`GetItem`) and
    // passkeys (`Query`), read side by side after the password is known right.
    assert_within(&calls, 12 + RATE_LIMIT, "otp grant");
    assert_eq!(calls.count("TransactWriteItems"), 1, "one family write");
    assert_write_units(&calls, OTP_GRANT_UNITS, "otp grant");
}
