//! `GET`/`POST /app-mgmt/v4/apps/{client_id}/secrets`, `DELETE .../secrets/{secret_id}`.

use crate::support::app::{json_of, TestApp, TestClient};
use crate::support::assertions::assert_token_error;
use reqwest::StatusCode;
use serde_json::{json, Value};
use token_core::admin;
use token_domain::clock::Clock;
use uuid::Uuid;

use super::{stored_secrets, with_secret, DAY};

fn url(app: &TestApp, client_id: &str) -> String {
    app.url(&format!("/app-mgmt/v4/apps/{client_id}/secrets"))
}

fn bearer(request: reqwest::RequestBuilder, token: Option<&str>) -> reqwest::RequestBuilder {
    match token {
        Some(token) => request.bearer_auth(token),
        None => request,
    }
}

pub async fn list(app: &TestApp, client_id: &str, token: Option<&str>) -> (StatusCode, Value) {
    let request = bearer(app.http.get(url(app, client_id)), token);
    json_of(request.send().await.unwrap()).await
}

pub async fn add(
    app: &TestApp,
    client_id: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let mut request = bearer(app.http.post(url(app, client_id)), token);
    if let Some(body) = body {
        request = request.json(&body);
    }
    json_of(request.send().await.unwrap()).await
}

/// The status, and the body (`Value::Null` when empty).
pub async fn revoke(
    app: &TestApp,
    client_id: &str,
    secret_id: &str,
    token: Option<&str>,
) -> (StatusCode, Value) {
    let request = bearer(
        app.http
            .delete(format!("{}/{secret_id}", url(app, client_id))),
        token,
    );
    let response = request.send().await.unwrap();
    let status = response.status();
    let text = response.text().await.unwrap();
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap()
    };
    (status, body)
}

fn secret_ids(listed: &Value) -> Vec<String> {
    listed
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["secret_id"].as_str().unwrap().to_owned())
        .collect()
}

#[track_caller]
fn expect(answer: (StatusCode, Value), status: StatusCode) -> Value {
    assert_eq!(answer.0, status, "{}", answer.1);
    answer.1
}

pub async fn lists_adds_and_revokes_for_the_app_itself(app: TestApp) {
    let client = app.create_client("read").await;
    let token = app.secrets_token(&client).await;
    let token = Some(token.as_str());

    let listed = expect(list(&app, &client.id, token).await, StatusCode::OK);
    let first = &listed[0];
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(
        first.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["created", "expires", "last_used", "secret_id"]
    );
    assert_eq!(first["expires"], Value::Null);
    assert_eq!(first["last_used"], app.clock.now());
    let first_id = first["secret_id"].as_str().unwrap().to_owned();

    // Added without a body: expires in 90 days (an app's own secret, unlike an administrator's);
    // with one: in that many days.
    let added = expect(
        add(&app, &client.id, token, None).await,
        StatusCode::CREATED,
    );
    assert_eq!(
        added.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["client_secret", "secret_id"]
    );
    let new_secret = added["client_secret"].as_str().unwrap().to_owned();
    assert!(Uuid::parse_str(&new_secret).is_ok());
    assert!(
        !app.data.contains(&new_secret).await,
        "stored only as a hash"
    );
    let expiring = expect(
        add(
            &app,
            &client.id,
            token,
            Some(json!({ "expires_in_days": 7 })),
        )
        .await,
        StatusCode::CREATED,
    );
    let listed = expect(list(&app, &client.id, token).await, StatusCode::OK);
    assert_eq!(secret_ids(&listed).len(), 3);
    let expiring_listed = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["secret_id"] == expiring["secret_id"])
        .unwrap();
    assert_eq!(
        expiring_listed["expires"].as_i64().unwrap(),
        expiring_listed["created"].as_i64().unwrap() + 7 * DAY
    );
    let defaulted = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["secret_id"] == added["secret_id"])
        .unwrap();
    assert_eq!(
        defaulted["expires"].as_i64().unwrap(),
        defaulted["created"].as_i64().unwrap() + 90 * DAY
    );
    assert!(!listed.to_string().contains(&new_secret), "never listed");

    // The new secret authenticates at once; the first one stops at once once revoked.
    let (status, body) = with_secret(&app, &client, &new_secret).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let answer = revoke(&app, &client.id, &first_id, token).await;
    assert_eq!(answer.0, StatusCode::NO_CONTENT, "{}", answer.1);
    assert_token_error(
        &with_secret(&app, &client, &client.secret).await,
        401,
        "invalid_client",
        64,
    );
    let listed = expect(list(&app, &client.id, token).await, StatusCode::OK);
    assert!(!secret_ids(&listed).contains(&first_id));
    assert_eq!(secret_ids(&listed).len(), 2);
    // The token obtained with the revoked secret is still a token of the app.
    expect(list(&app, &client.id, token).await, StatusCode::OK);
}

pub async fn refuses_other_callers_and_bad_requests(app: TestApp) {
    let client = app.create_client("read").await;
    let token = app.secrets_token(&client).await;
    let other = app.create_client("read").await;
    let other_token = app.secrets_token(&other).await;
    let login = format!("user-{}@example.com", Uuid::new_v4().simple());
    app.create_user(&login, "a password 1").await;
    let user_token = app.user_tokens(&client, &login, "a password 1").await["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    let before = stored_secrets(&app, &client).await;
    let first_id = before[0].secret_id.to_string();

    // No token, a bad one: 401 with a Bearer challenge.
    for token in [None, Some("not-a-token")] {
        let response = bearer(app.http.get(url(&app, &client.id)), token)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        let challenge = response.headers()["www-authenticate"].to_str().unwrap();
        assert!(challenge.starts_with("Bearer"), "{challenge}");
        assert_eq!(
            json_of(response).await.1["error"],
            "invalid_token",
            "{token:?}"
        );
        expect(
            add(&app, &client.id, token, None).await,
            StatusCode::UNAUTHORIZED,
        );
        expect(
            revoke(&app, &client.id, &first_id, token).await,
            StatusCode::UNAUTHORIZED,
        );
    }
    // The app's own token that did not ask for the scope: 403 insufficient_scope (RFC 6750).
    let plain = app.app_token(&client).await;
    for answer in [
        bearer(app.http.get(url(&app, &client.id)), Some(&plain))
            .send()
            .await
            .unwrap(),
        bearer(app.http.post(url(&app, &client.id)), Some(&plain))
            .send()
            .await
            .unwrap(),
    ] {
        assert_eq!(answer.status(), StatusCode::FORBIDDEN);
        let challenge = answer.headers()["www-authenticate"].to_str().unwrap();
        assert!(
            challenge.contains(r#"error="insufficient_scope""#),
            "{challenge}"
        );
        assert!(
            challenge.contains(r#"scope="app-mgmt.secrets""#),
            "{challenge}"
        );
        assert_eq!(json_of(answer).await.1["error"], "insufficient_scope");
    }
    // Another app's token, a user's token, an id that is no client: 403.
    for (token, path) in [
        (other_token.as_str(), client.id.as_str()),
        (user_token.as_str(), client.id.as_str()),
        (token.as_str(), "not-a-client"),
    ] {
        let body = expect(list(&app, path, Some(token)).await, StatusCode::FORBIDDEN);
        assert_eq!(body["error"], "access_denied");
        expect(
            add(&app, path, Some(token), None).await,
            StatusCode::FORBIDDEN,
        );
        expect(
            revoke(&app, path, &first_id, Some(token)).await,
            StatusCode::FORBIDDEN,
        );
    }
    // Bad bodies: 400. Unknown secrets: 404.
    let token = Some(token.as_str());
    for body in [
        json!({ "expires_in_days": 0 }),
        json!({ "expires_in_days": 366 }),
        json!({ "expires_in_days": "7" }),
        json!({ "expires": 7 }),
        json!([1]),
    ] {
        let answer = expect(
            add(&app, &client.id, token, Some(body.clone())).await,
            StatusCode::BAD_REQUEST,
        );
        assert_eq!(answer["error"], "invalid_request", "{body}");
    }
    for unknown in [Uuid::new_v4().to_string(), "not-a-uuid".to_owned()] {
        let body = expect(
            revoke(&app, &client.id, &unknown, token).await,
            StatusCode::NOT_FOUND,
        );
        assert_eq!(body["error"], "not_found");
    }
    assert_eq!(
        stored_secrets(&app, &client).await,
        before,
        "nothing written"
    );
    assert_eq!(stored_secrets(&app, &other).await.len(), 1);

    // A disabled app's tokens may still be live; it manages nothing with them.
    admin::disable_client(app.ctx(), &super::client_id(&client))
        .await
        .unwrap();
    let body = expect(list(&app, &client.id, token).await, StatusCode::FORBIDDEN);
    assert_eq!(body["error"], "access_denied");
    expect(
        add(&app, &client.id, token, None).await,
        StatusCode::FORBIDDEN,
    );
    assert_eq!(
        stored_secrets(&app, &client).await,
        before,
        "nothing written"
    );
}

pub async fn keeps_at_most_five_and_never_the_last(app: TestApp) {
    let client: TestClient = app.create_client("read").await;
    let token = app.secrets_token(&client).await;
    let token = Some(token.as_str());
    for _ in 0..4 {
        expect(
            add(&app, &client.id, token, None).await,
            StatusCode::CREATED,
        );
    }
    let five = stored_secrets(&app, &client).await;
    assert_eq!(five.len(), 5);
    let sixth = expect(
        add(&app, &client.id, token, None).await,
        StatusCode::CONFLICT,
    );
    assert_eq!(sixth["error"], "conflict");
    assert_eq!(stored_secrets(&app, &client).await, five, "nothing written");

    // The one the app authenticated with is the only one used so far: keep it.
    let mut ids: Vec<String> = five.iter().map(|s| s.secret_id.to_string()).collect();
    let kept = five.iter().position(|s| s.last_used.is_some()).unwrap();
    ids.swap(0, kept);
    for id in &ids[1..] {
        expect(
            revoke(&app, &client.id, id, token).await,
            StatusCode::NO_CONTENT,
        );
    }
    let last = expect(
        revoke(&app, &client.id, &ids[0], token).await,
        StatusCode::CONFLICT,
    );
    assert_eq!(last["error"], "conflict");
    assert_eq!(stored_secrets(&app, &client).await.len(), 1);
    let (status, _) = with_secret(&app, &client, &client.secret).await;
    assert_eq!(status, StatusCode::OK, "the last secret still works");
    // Revoked twice: 404 the second time.
    expect(
        revoke(&app, &client.id, &ids[1], token).await,
        StatusCode::NOT_FOUND,
    );
}

/// Part 13: `app-mgmt.secrets` is granted only when a confidential client's `client_credentials`
/// names it (never by default, never with the client's default scopes), for 300 s, with this
/// deployment as audience; no other resource takes it (the exchange refuses it as a subject);
/// an app's secret lives at most 365 days; every call is audited with the token's `jti`.
pub async fn the_secrets_scope_is_asked_for_by_name_lives_minutes_and_is_audited(app: TestApp) {
    use token_domain::audit::{AuditKind, AuditSubject};
    let client = app.create_client("read").await;
    let plain = app
        .token(&[
            ("grant_type", "client_credentials"),
            ("client_id", &client.id),
            ("client_secret", &client.secret),
        ])
        .await
        .1;
    assert_eq!(plain["scope"], "read", "never by default: {plain}");
    let body = app.secrets_token_answer(&client).await;
    assert_eq!(body["scope"], "app-mgmt.secrets", "only what was named");
    assert_eq!(body["expires_in"], 300);
    let token = body["access_token"].as_str().unwrap().to_owned();
    let claims = crate::dpop::claims(&token);
    assert_eq!(
        claims["aud"],
        app.geolocation().to_string(),
        "the issuer, no resource"
    );
    assert_eq!(
        claims["exp"].as_i64().unwrap() - claims["iat"].as_i64().unwrap(),
        300
    );
    let jti = claims["jti"].as_str().unwrap().to_owned();

    // No resource takes it: the exchange refuses it as a subject token.
    let (status, refused) = app
        .token(&[
            (
                "grant_type",
                "urn:ietf:params:oauth:grant-type:token-exchange",
            ),
            ("client_id", &client.id),
            ("client_secret", &client.secret),
            ("subject_token", &token),
            (
                "subject_token_type",
                "urn:ietf:params:oauth:token-type:access_token",
            ),
        ])
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");

    // An app's own secret: 365 days at most.
    let token = Some(token.as_str());
    let longest = expect(
        add(
            &app,
            &client.id,
            token,
            Some(json!({ "expires_in_days": 365 })),
        )
        .await,
        StatusCode::CREATED,
    );
    let stored = stored_secrets(&app, &client).await;
    let added = stored
        .iter()
        .find(|secret| secret.secret_id.to_string() == longest["secret_id"])
        .unwrap();
    assert_eq!(added.expires, Some(added.created + 365 * DAY));
    expect(list(&app, &client.id, token).await, StatusCode::OK);
    let secret_id = longest["secret_id"].as_str().unwrap();
    expect(
        revoke(&app, &client.id, secret_id, token).await,
        StatusCode::NO_CONTENT,
    );
    let events =
        crate::audit::events_of(&app, AuditSubject::Client(super::client_id(&client))).await;
    let named = |name: &str| {
        events
            .iter()
            .find(|event| event.kind.name() == name)
            .unwrap_or_else(|| panic!("{name} in {events:?}"))
            .kind
            .clone()
    };
    let token_of = |kind: AuditKind| match kind {
        AuditKind::ClientSecretAdded { jti, .. } | AuditKind::ClientSecretRevoked { jti, .. } => {
            jti.map(|jti| jti.to_string())
        }
        AuditKind::ClientSecretsListed { jti } => Some(jti.to_string()),
        other => panic!("{other:?}"),
    };
    for name in [
        "client.secret_added",
        "client.secrets_listed",
        "client.secret_revoked",
    ] {
        assert_eq!(token_of(named(name)), Some(jti.clone()), "{name}");
    }
}
