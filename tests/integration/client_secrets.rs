//! Client secrets over real HTTP on both stores: several secrets per client (any unexpired one
//! authenticates, an expired one is `invalid_client` 64 and writes nothing), a record written
//! before clients had several secrets (authenticates, lists as one secret, migrates in place),
//! Concur's secrets API for the app itself, and a rotation drill with two app instances that
//! never sees a failed request. `tokenctl clients secrets` is in `tokenctl`.

pub mod api;
mod drill;
pub mod old_record;

use crate::support::app::{TestApp, TestClient};
use crate::support::assertions::assert_token_error;
use api::{
    keeps_at_most_five_and_never_the_last, lists_adds_and_revokes_for_the_app_itself,
    refuses_other_callers_and_bad_requests,
    the_secrets_scope_is_asked_for_by_name_lives_minutes_and_is_audited,
};
use reqwest::StatusCode;
use serde_json::Value;
use token_core::admin;
use token_domain::clock::Clock;
use token_domain::{ClientId, ListedSecret, SecretId};

crate::on_both_stores!(
    several_secrets_each_authenticate_and_an_expired_one_is_refused,
    an_old_single_secret_record_authenticates_and_lists_as_one_secret,
    lists_adds_and_revokes_for_the_app_itself,
    refuses_other_callers_and_bad_requests,
    keeps_at_most_five_and_never_the_last,
    the_secrets_apis_audit_events_name_the_caller,
    the_secrets_scope_is_asked_for_by_name_lives_minutes_and_is_audited,
);

/// `client.secret_added` and `client.secret_revoked` from the secrets API carry the request's
/// source address, user agent and correlation id: "who did this, from where" is answerable.
async fn the_secrets_apis_audit_events_name_the_caller(app: TestApp) {
    use token_domain::audit::{AuditKind, AuditSubject};
    let client = app.create_client("read").await;
    let token = app.secrets_token(&client).await;
    let url = app.url(&format!("/app-mgmt/v4/apps/{}/secrets", client.id));
    let added = app
        .http
        .post(&url)
        .bearer_auth(&token)
        .header("x-correlation-id", "rotate-2026-11")
        .header("user-agent", "secrets-rotation/1.0")
        .send()
        .await
        .unwrap();
    assert_eq!(added.status(), StatusCode::CREATED);
    let secret_id = added.json::<Value>().await.unwrap()["secret_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let revoked = app
        .http
        .delete(format!("{url}/{secret_id}"))
        .bearer_auth(&token)
        .header("x-correlation-id", "rotate-2026-11-b")
        .send()
        .await
        .unwrap();
    assert!(revoked.status().is_success(), "{}", revoked.status());
    let events = crate::audit::events_of(
        &app,
        AuditSubject::Client(ClientId::parse(&client.id).unwrap()),
    )
    .await;
    let facts = |name: &str| {
        let event = events
            .iter()
            .find(|event| event.kind.name() == name)
            .unwrap_or_else(|| panic!("{name} in {events:?}"));
        assert!(matches!(
            event.kind,
            AuditKind::ClientSecretAdded { .. } | AuditKind::ClientSecretRevoked { .. }
        ));
        event.request.clone()
    };
    let added = facts("client.secret_added");
    assert_eq!(added.correlation_id.unwrap().as_str(), "rotate-2026-11");
    assert_eq!(added.user_agent.unwrap().as_str(), "secrets-rotation/1.0");
    assert!(added.source_address.unwrap().is_loopback());
    let revoked = facts("client.secret_revoked");
    assert_eq!(revoked.correlation_id.unwrap().as_str(), "rotate-2026-11-b");
    assert!(revoked.source_address.is_some());
}

mod drill_tests {
    use super::drill;

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn sqlite() {
        drill::rotation_without_a_failed_request(crate::support::app::Backend::Sqlite).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    #[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
    async fn dynamodb() {
        drill::rotation_without_a_failed_request(crate::support::app::Backend::DynamoDb).await;
    }
}

const DAY: i64 = 86_400;

pub fn client_id(client: &TestClient) -> ClientId {
    ClientId::parse(&client.id).unwrap()
}

/// `client_credentials` with `secret` in the body.
pub async fn with_secret(app: &TestApp, client: &TestClient, secret: &str) -> (StatusCode, Value) {
    app.token(&[
        ("grant_type", "client_credentials"),
        ("client_id", &client.id),
        ("client_secret", secret),
    ])
    .await
}

/// The client's secrets as the store has them.
pub async fn stored_secrets(app: &TestApp, client: &TestClient) -> Vec<ListedSecret> {
    app.store
        .clients()
        .get_client(&client_id(client))
        .await
        .unwrap()
        .unwrap()
        .list_secrets()
}

fn listed(secrets: &[ListedSecret], id: SecretId) -> &ListedSecret {
    secrets.iter().find(|s| s.secret_id == id).unwrap()
}

async fn several_secrets_each_authenticate_and_an_expired_one_is_refused(app: TestApp) {
    let client = app.create_client("read").await;
    let id = client_id(&client);
    let second = admin::add_client_secret(app.ctx(), &id, None)
        .await
        .unwrap();
    let short = admin::add_client_secret(app.ctx(), &id, Some(1))
        .await
        .unwrap();
    assert_eq!(short.expires, Some(short.created + DAY));
    assert!(!app.data.contains(second.client_secret.expose()).await);

    for secret in [
        client.secret.as_str(),
        second.client_secret.expose(),
        short.client_secret.expose(),
    ] {
        let (status, body) = with_secret(&app, &client, secret).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    // Basic too.
    let (status, body) = json_of_basic(&app, &client.id, second.client_secret.expose()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let now = app.clock.now();
    let secrets = stored_secrets(&app, &client).await;
    assert_eq!(secrets.len(), 3);
    assert!(
        secrets.iter().all(|s| s.last_used == Some(now)),
        "{secrets:?}"
    );

    // Past its expiry: 64 invalid_client, and nothing written (its last use stays).
    app.clock.advance(DAY);
    let before = stored_secrets(&app, &client).await;
    let refused = with_secret(&app, &client, short.client_secret.expose()).await;
    assert_token_error(&refused, 401, "invalid_client", 64);
    assert_eq!(
        refused.1["error_description"], "client_secret has expired",
        "{}",
        refused.1
    );
    assert_eq!(
        stored_secrets(&app, &client).await,
        before,
        "nothing written"
    );
    // A wrong secret is still 64; the others still work, and their use is recorded again
    // once an hour has passed.
    assert_token_error(
        &with_secret(&app, &client, "not-a-secret").await,
        401,
        "invalid_client",
        64,
    );
    let (status, _) = with_secret(&app, &client, second.client_secret.expose()).await;
    assert_eq!(status, StatusCode::OK);
    let after = stored_secrets(&app, &client).await;
    assert_eq!(
        listed(&after, second.secret_id).last_used,
        Some(app.clock.now())
    );
    assert_eq!(listed(&after, short.secret_id).last_used, Some(now));
}

async fn json_of_basic(app: &TestApp, id: &str, secret: &str) -> (StatusCode, Value) {
    let response = app
        .http
        .post(app.url("/v0/token"))
        .basic_auth(id, Some(secret))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .unwrap();
    crate::support::app::json_of(response).await
}

async fn an_old_single_secret_record_authenticates_and_lists_as_one_secret(app: TestApp) {
    let created = app.create_client("read").await;
    let client = app
        .store
        .clients()
        .get_client(&client_id(&created))
        .await
        .unwrap()
        .unwrap();
    let old_secret = "0d6c1a3e-5b7f-4c2a-9e8d-123456789abc";
    old_record::write(
        app.store.as_ref(),
        old_record::raw_of(&app.data),
        client,
        old_secret,
    )
    .await;
    let old = TestClient {
        id: created.id.clone(),
        secret: old_secret.to_owned(),
    };
    // The secret it was given at creation is gone: the record holds the old one only.
    assert_token_error(
        &with_secret(&app, &old, &created.secret).await,
        401,
        "invalid_client",
        64,
    );
    let token = app.secrets_token(&old).await;
    let (status, listed) = api::list(&app, &old.id, Some(&token)).await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["last_used"], app.clock.now());
    // Its first use rewrote it in the new shape, under the same id.
    let stored = app
        .store
        .clients()
        .get_client(&client_id(&old))
        .await
        .unwrap()
        .unwrap();
    assert!(!stored.secrets.is_legacy());
    assert_eq!(
        stored.list_secrets()[0].secret_id.to_string(),
        listed[0]["secret_id"].as_str().unwrap()
    );
    assert!(
        !app.app_token(&old).await.is_empty(),
        "and it still authenticates"
    );
}
