//! Refreshes when the store fails (docs/decisions.md, Refresh tokens): a DynamoDB fault proxy
//! between the service and DynamoDB Local (lost answers, answers held past the SDK's timeouts,
//! refused connections), and an SQLite file locked by another connection. A client that retries the
//! same request gets the one successor; the store is used again once it is back; nothing is left
//! half-written. Also the real `concur-api` client against both refresh policies.

use std::sync::Arc;
use std::time::Duration;

use crate::support::app::{AppOptions, Backend, TestApp, TestClient};
use crate::support::assertions::assert_token_error as assert_error;
use crate::support::ddb_proxy::{DdbProxy, Fault};
use crate::support::dynamodb::unique_table_name;
use concur_api::auth::{Grant, OAuth2TokenManager, TokenManager};
use reqwest::StatusCode;
use serde_json::Value;
use token_domain::audit::{AuditKind, AuditSubject};
use token_domain::clock::Clock;
use token_domain::secrets::{Secret, TokenHash};
use token_domain::{RefreshRotation, RefreshTokenName};
use token_store::dynamodb::DynamoStore;
use token_store::prelude::*;
use token_store_conformance::fixtures::listed_audit_events;

use super::refresh_rotation::{field, ok, refresh, user_family};

/// An app whose DynamoDB store goes through a fault proxy, and a direct handle on the same
/// table to read what was really written. `None` when the DynamoDB suite is skipped.
pub(crate) async fn proxied_app() -> Option<(TestApp, DdbProxy, DynamoStore)> {
    let proxy = DdbProxy::start().await?;
    let table = unique_table_name();
    let store = DynamoStore::connect(&table, Some(proxy.url())).await;
    store
        .create_table_if_missing()
        .await
        .expect("create a test table through the proxy");
    let direct =
        DynamoStore::connect(&table, crate::support::dynamodb::endpoint().as_deref()).await;
    let app = TestApp::with_store(Arc::new(store), Backend::DynamoDb, AppOptions::default()).await;
    Some((app, proxy, direct))
}

/// The table holds exactly one rotation of `rotated` to `successor`: the family's current
/// token, generation 1, rotated (the time on the family, the old token's record as it was), and
/// one `family.refreshed` event, listed for each of its subjects (stored under its family).
async fn assert_rotated_once(direct: &DynamoStore, rotated: &str, successor: &str, now: i64) {
    let family = direct
        .families()
        .get_family(&stored_family_id(rotated), now)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(family.generation, 1, "rotated once");
    assert_eq!(family.current_token, TokenHash::of(successor));
    assert_eq!(family.revoked_at, None);
    assert!(
        family.rotated_at.is_some(),
        "the family records its rotation"
    );
    for subject in [
        AuditSubject::Family(family.id),
        AuditSubject::Client(family.client_id),
        AuditSubject::Principal(family.principal_id),
    ] {
        assert_eq!(
            first_refreshes(direct, subject, now).await,
            1,
            "one family.refreshed under {subject:?}"
        );
    }
}

/// How many `family.refreshed` events of a first rotation `subject` has.
async fn first_refreshes(direct: &DynamoStore, subject: AuditSubject, now: i64) -> usize {
    listed_audit_events(direct, subject, None, now)
        .await
        .into_iter()
        .filter(|e| e.kind == AuditKind::FamilyRefreshed { generation: 1 })
        .count()
}

/// A user's family on a `rotate` client: the client and the family's first refresh token.
async fn rotating_family(app: &TestApp) -> (TestClient, String) {
    let (client, first) = user_family(app, RefreshRotation::Rotate, "read").await;
    (client, field(&first, "refresh_token").to_owned())
}

/// How many `UpdateItem`s reached a family's item (the rotation's decisive write, each attempt).
fn family_updates(proxy: &DdbProxy) -> usize {
    proxy
        .calls()
        .per_partition("UpdateItem", "FAMILY#")
        .values()
        .sum()
}

/// The family's conditional update, not the rate counter's `UpdateItem` before it.
fn the_family_update(fault: Fault) -> crate::support::ddb_proxy::Injection {
    fault.only_for("UpdateItem").touching("FAMILY#")
}

#[tokio::test]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn a_lost_rotation_answer_is_resolved_by_reading_back() {
    let Some((app, proxy, direct)) = proxied_app().await else {
        return;
    };
    let (client, rt1) = rotating_family(&app).await;

    // Every attempt (the SDK's three) reaches DynamoDB and loses its answer: the first lands,
    // the others find the token rotated away.
    proxy.take_calls();
    proxy.inject(the_family_update(Fault::DropResponse));
    let second = ok(refresh(&app, &client, &rt1).await);
    let family_updates = family_updates(&proxy);
    assert_eq!(
        family_updates, 3,
        "the SDK's three attempts, then a read, not a fourth write"
    );
    proxy.clear_fault();
    let rt2 = field(&second, "refresh_token");
    assert_rotated_once(&direct, &rt1, rt2, app.clock.now()).await;

    // The client lost this answer too: its retry gets the same successor.
    let retried = ok(refresh(&app, &client, &rt1).await);
    assert_eq!(retried["refresh_token"], rt2);
    assert_rotated_once(&direct, &rt1, rt2, app.clock.now()).await;
}

#[tokio::test]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn a_503_after_a_landed_rotation_is_retried_with_the_same_successor() {
    let Some((app, proxy, direct)) = proxied_app().await else {
        return;
    };
    let (client, rt1) = rotating_family(&app).await;
    let family_id = stored_family_id(&rt1);

    // The family's update lands at once but its answer is held past the attempt timeout; once
    // it has been sent, the store stops answering altogether, so the read-back fails too.
    proxy.take_calls();
    proxy.inject(the_family_update(Fault::DelayResponse(
        Duration::from_secs(4),
    )));
    let pending = {
        let (app, client, rt1) = (&app, &client, rt1.clone());
        async move { refresh(app, client, &rt1).await }
    };
    let outage = async {
        while proxy
            .calls()
            .per_partition("UpdateItem", "FAMILY#")
            .is_empty()
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        proxy.inject(Fault::RefuseConnections);
    };
    let ((status, body), ()) = futures::future::join(pending, outage).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    // The step under test is "landed, answer lost", not "refused": the write is there.
    let family = direct
        .families()
        .get_family(&family_id, app.clock.now())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        family.generation, 1,
        "the held update landed before the store went away"
    );
    assert_eq!(body["error"], "temporarily_unavailable");
    let message = body["message"].as_str().unwrap();
    assert!(
        !message.to_lowercase().contains("nothing was changed"),
        "the write landed, so the 503 must not say otherwise: {message}"
    );

    // The store comes back; the same service uses it again, and the retry is answered with
    // the successor the lost rotation made, whose record and event it writes.
    proxy.clear_fault();
    let retried = ok(refresh(&app, &client, &rt1).await);
    let rt2 = field(&retried, "refresh_token");
    assert_rotated_once(&direct, &rt1, rt2, app.clock.now()).await;
    let again = ok(refresh(&app, &client, &rt1).await);
    assert_eq!(again["refresh_token"], rt2, "one successor");
    ok(refresh(&app, &client, rt2).await);
}

#[tokio::test]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn a_rotation_that_failed_after_its_decisive_write_is_answered_after_the_grace_window() {
    let Some((app, proxy, direct)) = proxied_app().await else {
        return;
    };
    let (client, rt1) = rotating_family(&app).await;
    let family_id = stored_family_id(&rt1);

    // The family's update lands; every write after it fails: the client gets a 503, never the
    // successor.
    proxy.inject(Fault::InternalServerError.only_for("PutItem"));
    let (status, body) = refresh(&app, &client, &rt1).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    proxy.clear_fault();
    let family = direct
        .families()
        .get_family(&family_id, app.clock.now())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(family.generation, 1, "the decisive write landed");
    assert_eq!(
        first_refreshes(&direct, AuditSubject::Family(family_id), app.clock.now()).await,
        0,
        "the rotation's event is missing"
    );

    // The client comes back long after the grace window: its token was rotated by our failed
    // request, not replayed by a thief, so it gets the successor and keeps its family.
    app.clock
        .advance(app.services.policy.refresh_grace_seconds * 10);
    let retried = ok(refresh(&app, &client, &rt1).await);
    let rt2 = field(&retried, "refresh_token");
    assert_rotated_once(&direct, &rt1, rt2, app.clock.now()).await;
    ok(refresh(&app, &client, rt2).await);

    // Once completed, the same old token is reuse: the family is revoked.
    assert_error(
        &refresh(&app, &client, &rt1).await,
        400,
        "invalid_grant",
        108,
    );
    let family = direct
        .families()
        .get_family(&family_id, app.clock.now())
        .await
        .unwrap()
        .unwrap();
    assert!(family.revoked_at.is_some(), "reuse revokes the family");
}

#[tokio::test]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn a_rotation_meeting_a_transaction_on_its_family_is_sent_again() {
    let Some((app, proxy, direct)) = proxied_app().await else {
        return;
    };
    let (client, rt1) = rotating_family(&app).await;

    // A revocation's transaction holds the family as the rotation's update arrives, twice.
    proxy.take_calls();
    proxy.inject(the_family_update(Fault::TransactionConflict).times(2));
    let second = ok(refresh(&app, &client, &rt1).await);
    let family_updates = family_updates(&proxy);
    assert_eq!(family_updates, 3, "refused twice, then landed");
    assert_rotated_once(
        &direct,
        &rt1,
        field(&second, "refresh_token"),
        app.clock.now(),
    )
    .await;
}

/// The family `token` names.
fn stored_family_id(token: &str) -> token_domain::FamilyId {
    RefreshTokenName::of(&Secret::new(token))
        .expect("a token that names its family")
        .family_id
}

#[tokio::test]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn refused_connections_answer_503_and_write_nothing_until_the_store_is_back() {
    let Some((app, proxy, direct)) = proxied_app().await else {
        return;
    };
    let (client, rt1) = rotating_family(&app).await;
    let family_id = stored_family_id(&rt1);

    proxy.inject(Fault::RefuseConnections);
    let (status, body) = refresh(&app, &client, &rt1).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    let family = direct
        .families()
        .get_family(&family_id, app.clock.now())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(family.generation, 0, "nothing written");

    proxy.clear_fault();
    let second = ok(refresh(&app, &client, &rt1).await);
    assert_rotated_once(
        &direct,
        &rt1,
        field(&second, "refresh_token"),
        app.clock.now(),
    )
    .await;
}

#[tokio::test]
async fn an_sqlite_lock_held_elsewhere_answers_503_then_the_retry_succeeds() {
    let (store, _dir) = crate::support::sqlite::fresh_store();
    let path = store.path().to_owned();
    let app = TestApp::with_store(Arc::new(store), Backend::Sqlite, AppOptions::default()).await;
    let (client, first) = user_family(&app, RefreshRotation::Rotate, "read").await;
    let rt1 = field(&first, "refresh_token");

    let other = rusqlite::Connection::open(&path).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    let (status, body) = refresh(&app, &client, rt1).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(
        app.stored_refresh_token(rt1).await.rotated_at,
        None,
        "nothing written while locked"
    );
    other.execute_batch("ROLLBACK").unwrap();

    let second = ok(refresh(&app, &client, rt1).await);
    let again = ok(refresh(&app, &client, rt1).await);
    assert_eq!(
        again["refresh_token"], second["refresh_token"],
        "one successor"
    );
}

/// `concur-api` keeps sending the refresh token it was configured with; a new manager per
/// simulated hour stands for its hourly refresh.
async fn concur_refresh(app: &TestApp, client: &TestClient, token: &str) -> Result<String, String> {
    let manager = OAuth2TokenManager::new(
        app.url("/oauth2/v0/token"),
        client.id.clone(),
        client.secret.clone(),
        Grant::RefreshToken {
            refresh_token: token.to_owned(),
            scope: None,
        },
    );
    manager.access_token().await.map_err(|e| e.to_string())
}

#[tokio::test]
async fn concur_api_refreshes_hourly_with_its_first_token_on_a_sliding_client_sqlite() {
    concur_api_refreshes_hourly_on_a_sliding_client(Backend::Sqlite).await;
}

#[tokio::test]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn concur_api_refreshes_hourly_with_its_first_token_on_a_sliding_client_dynamodb() {
    concur_api_refreshes_hourly_on_a_sliding_client(Backend::DynamoDb).await;
}

async fn concur_api_refreshes_hourly_on_a_sliding_client(backend: Backend) {
    let Some(app) = TestApp::spawn(backend).await else {
        return;
    };
    let (client, first) = user_family(&app, RefreshRotation::Sliding, "read").await;
    let rt = field(&first, "refresh_token");
    for hour in 1..=3 {
        app.clock.advance(3600);
        let access = concur_refresh(&app, &client, rt)
            .await
            .unwrap_or_else(|e| panic!("hour {hour}: {e}"));
        assert!(app
            .services
            .codec
            .decode(&access, app.clock.now())
            .await
            .unwrap()
            .is_ok());
    }
}

#[tokio::test]
async fn concur_api_on_a_rotating_client_refreshes_once_then_is_refused_sqlite() {
    concur_api_on_a_rotating_client(Backend::Sqlite).await;
}

#[tokio::test]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn concur_api_on_a_rotating_client_refreshes_once_then_is_refused_dynamodb() {
    concur_api_on_a_rotating_client(Backend::DynamoDb).await;
}

async fn concur_api_on_a_rotating_client(backend: Backend) {
    let Some(app) = TestApp::spawn(backend).await else {
        return;
    };
    let (client, first) = user_family(&app, RefreshRotation::Rotate, "read").await;
    let rt = field(&first, "refresh_token");
    app.clock.advance(3600);
    concur_refresh(&app, &client, rt)
        .await
        .expect("the first refresh succeeds");

    // An hour later the same token is outside the retry window: reuse, family revoked.
    app.clock.advance(3600);
    let refusal = concur_refresh(&app, &client, rt)
        .await
        .expect_err("the rotated token is refused");
    assert!(refusal.contains("\"code\":108"), "{refusal}");
    let record = app.stored_refresh_token(rt).await;
    let family = app.stored_family(&record.family_id).await;
    assert!(family.revoked_at.is_some(), "reuse revokes the family");
    let body: Value = serde_json::from_str(&refusal[refusal.find('{').unwrap()..]).unwrap();
    assert_error(&(StatusCode::BAD_REQUEST, body), 400, "invalid_grant", 108);
}
