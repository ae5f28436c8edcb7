//! A family and its `family.started` event land together or not at all: the family's write
//! fails (DynamoDB: its transaction refused by the fault proxy; SQLite: the file write-locked)
//! → 503 and no event; the retry → one family, one event.

use integration_tests::app::json_of;
use reqwest::StatusCode;
use token_service::domain::audit::AuditEvent;
use token_service::domain::PrincipalId;
use uuid::Uuid;

use super::{events_of, family_of, family_subject, names, principal_subject};
use crate::store_unavailable::{FaultyApp, Outage};

const PASSWORD: &str = "same write password";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_write_locked() {
    a_failed_family_write_leaves_no_started_event(FaultyApp::sqlite().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn dynamodb_transactions_refused() {
    if let Some(app) = FaultyApp::dynamodb(Outage::TransactionsRefused).await {
        a_failed_family_write_leaves_no_started_event(app).await;
    }
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

    let (status, tokens) = json_of(request().send().await.unwrap()).await;
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
