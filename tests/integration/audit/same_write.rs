//! A family and its `family.started` event land together or not at all: the family's write
//! fails (DynamoDB: its transaction refused by the fault proxy; SQLite: the file write-locked)
//! → 503 and no event; the retry → one family, one event. Likewise a repeated legacy exchange
//! whose write fails leaves the previous family live and its `family.revoked` unwritten.

use crate::support::app::json_of;
use reqwest::StatusCode;
use token_domain::audit::AuditEvent;
use token_domain::{FamilyId, PrincipalId};
use uuid::Uuid;

use super::{
    events_of, family_of, family_of_refresh_token, family_subject, names, principal_subject,
};
use crate::exchange::Migration;
use crate::store_unavailable::{FaultyApp, Outage};

const PASSWORD: &str = "same write password";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_write_locked() {
    a_failed_family_write_leaves_no_started_event(FaultyApp::sqlite().await).await;
    a_failed_exchange_leaves_no_revocation_event(FaultyApp::sqlite().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn dynamodb_transactions_refused() {
    if let Some(app) = FaultyApp::dynamodb(Outage::TransactionsRefused).await {
        a_failed_family_write_leaves_no_started_event(app).await;
    }
    if let Some(app) = FaultyApp::dynamodb(Outage::TransactionsRefused).await {
        a_failed_exchange_leaves_no_revocation_event(app).await;
    }
}

/// What a request answers once the outage is over, sent again after a 503 that says retrying is
/// safe (DynamoDB Local answering a call late on a loaded machine), as a client would: at most
/// twice.
async fn answered(
    request: impl Fn() -> reqwest::RequestBuilder,
) -> (StatusCode, serde_json::Value) {
    let mut answer = json_of(request().send().await.unwrap()).await;
    for _ in 0..2 {
        if answer.0 != StatusCode::SERVICE_UNAVAILABLE
            || answer.1["error"] != "temporarily_unavailable"
        {
            break;
        }
        answer = json_of(request().send().await.unwrap()).await;
    }
    answer
}

/// The `family.started` events of the user.
async fn started(app: &FaultyApp, user: PrincipalId) -> Vec<AuditEvent> {
    events_of(app, principal_subject(user))
        .await
        .into_iter()
        .filter(|event| event.kind.name() == "family.started")
        .collect()
}

async fn a_failed_family_write_leaves_no_started_event(app: FaultyApp) {
    let client = app.create_client("read").await;
    let login = format!("same-{}", Uuid::new_v4().simple());
    let user = app.create_user(&login, PASSWORD).await;
    let request = || {
        app.http.post(app.url("/v0/token")).form(&[
            ("grant_type", "password"),
            ("client_id", client.id.as_str()),
            ("client_secret", client.secret.as_str()),
            ("username", login.as_str()),
            ("password", PASSWORD),
        ])
    };

    app.refused("password", request()).await;
    assert!(
        started(&app, user.id).await.is_empty(),
        "no event without its family"
    );

    let (status, tokens) = answered(request).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    let family_id = family_of(&app, &tokens).await;
    let events = started(&app, user.id).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].family_id.unwrap().to_string(), family_id);
    assert_eq!(
        names(&events_of(&app, family_subject(&family_id)).await),
        ["family.started"]
    );
}

async fn a_failed_exchange_leaves_no_revocation_event(app: FaultyApp) {
    let m = Migration::new(&app, "read").await;
    let login = format!("same-exchange-{}", Uuid::new_v4().simple());
    let (_, old) = m.user_with_old_token(&app, &login).await;
    let request = || {
        app.exchange_request(&m.consumer_key, "")
            .header("authorization", m.bearer())
            .form(&[
                ("token", old.as_str()),
                ("secret", m.client.secret.as_str()),
            ])
    };
    let (status, first) = answered(request).await;
    assert_eq!(status, StatusCode::OK, "{first}");
    let first_family = family_of_refresh_token(&app, first["refreshToken"].as_str().unwrap()).await;

    app.refused("exchange", request()).await;
    let family = app
        .stored_family(&FamilyId::parse(&first_family).unwrap())
        .await;
    assert_eq!(family.revoked_at, None, "the previous family is still live");
    assert_eq!(
        names(&events_of(&app, family_subject(&first_family)).await),
        ["family.started"],
        "no revocation recorded without the revocation"
    );

    let (status, second) = answered(request).await;
    assert_eq!(status, StatusCode::OK, "{second}");
    assert_eq!(
        names(&events_of(&app, family_subject(&first_family)).await),
        ["family.revoked", "family.started"]
    );
}
