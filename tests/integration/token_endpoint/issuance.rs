//! Tokens issued and rotated: every way in (client credentials, Basic, JSON, the alias path,
//! the password grant), refresh with rotation, scope narrowing, reuse revoking the family, the
//! retry window, and expiry by the clock.

use crate::support::app::{field, json_of, jti_of, AppOptions, Backend, TestApp};
use crate::support::assertions::{assert_token_error as assert_error, assert_uncached_json};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use reqwest::StatusCode;
use token_core::config::Policy;
use token_domain::clock::Clock;
use token_domain::secrets::TokenHash;

use super::{client_form, PASSWORD};

crate::on_both_stores!(
    client_credentials_issues_an_application_token,
    basic_authentication_is_accepted_and_its_failures_challenge,
    json_bodies_and_the_oauth2_alias_path_work,
    password_grant_then_refresh_rotates,
    refresh_alias_and_scope_narrowing,
    replayed_refresh_token_revokes_the_family,
    expiries_follow_the_clock,
);

async fn client_credentials_issues_an_application_token(app: TestApp) {
    let client = app.create_client("read write").await;
    let response = app
        .post_form(
            "/v0/token",
            &client_form(
                &client,
                &[("grant_type", "client_credentials"), ("scope", "read")],
            ),
        )
        .await;
    let headers = response.headers().clone();
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_uncached_json(&headers);
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["expires_in"], 3600);
    assert_eq!(body["scope"], "read");
    assert_eq!(body["principal_type"], "application");
    assert_eq!(body["id"], client.id.as_str());
    assert_eq!(body["geolocation"], app.address.as_str());
    assert!(
        body.get("refresh_token").is_none(),
        "no refresh token: {body}"
    );
    assert!(body.get("refresh_expires_in").is_none());

    let token = field(&body, "access_token");
    let claims = app.claims_of(token).await;
    assert_eq!(claims.sub, client.id);
    assert_eq!(claims.client_id, client.id);
    let stored = app
        .stored_access_token(&jti_of(token))
        .await
        .expect("the jti is persisted");
    assert_eq!(stored.expires_at, stored.issued_at + 3600);
    assert_eq!(stored.family_id, None);
    assert!(!stored.revoked);
}

async fn basic_authentication_is_accepted_and_its_failures_challenge(app: TestApp) {
    let client = app.create_client("read").await;
    let basic =
        |id: &str, secret: &str| format!("Basic {}", STANDARD.encode(format!("{id}:{secret}")));
    let send = |authorization: String, form: Vec<(&'static str, String)>| {
        app.http
            .post(app.url("/v0/token"))
            .header("authorization", authorization)
            .form(&form)
            .send()
    };

    let ok = send(
        basic(&client.id, &client.secret),
        vec![("grant_type", "client_credentials".into())],
    )
    .await
    .unwrap();
    let (status, body) = json_of(ok).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["principal_type"], "application");
    assert_eq!(body["id"], client.id.as_str());
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["scope"], "read");
    let claims = app.claims_of(field(&body, "access_token")).await;
    assert_eq!(claims.sub, client.id, "issued to the client named by Basic");

    let wrong = send(
        basic(&client.id, "wrong"),
        vec![("grant_type", "client_credentials".into())],
    )
    .await
    .unwrap();
    assert!(wrong.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .starts_with("Basic"));
    assert_error(&json_of(wrong).await, 401, "invalid_client", 64);

    // Body credentials that fail get no Basic challenge.
    let in_body = app
        .post_form(
            "/v0/token",
            &[
                ("grant_type", "client_credentials"),
                ("client_id", &client.id),
                ("client_secret", "wrong"),
            ],
        )
        .await;
    assert!(
        in_body.headers().get("www-authenticate").is_none(),
        "{:?}",
        in_body.headers()
    );
    assert_error(&json_of(in_body).await, 401, "invalid_client", 64);

    let conflicting = send(
        basic(&client.id, &client.secret),
        vec![
            ("grant_type", "client_credentials".into()),
            ("client_id", uuid::Uuid::new_v4().to_string()),
        ],
    )
    .await
    .unwrap();
    assert_error(&json_of(conflicting).await, 400, "invalid_request", 115);
}

async fn json_bodies_and_the_oauth2_alias_path_work(app: TestApp) {
    let client = app.create_client("read").await;
    let body = serde_json::json!({
        "grant_type": "client_credentials", "client_id": client.id, "client_secret": client.secret
    });
    let (status, json) = json_of(app.post_json("/v0/token", &body).await).await;
    assert_eq!(status, StatusCode::OK, "{json}");
    let (status, json) = json_of(app.post_json("/oauth2/v0/token", &body).await).await;
    assert_eq!(status, StatusCode::OK, "{json}");
    assert_eq!(json["principal_type"], "application");
}

async fn password_grant_then_refresh_rotates(app: TestApp) {
    let client = app.create_client("read write").await;
    let user = app.create_user("Alice@Example.com", PASSWORD).await;
    // Logins are case-insensitive.
    let first = app
        .user_tokens(&client, "alice@example.COM", PASSWORD)
        .await;
    assert_eq!(first["principal_type"], "user");
    assert_eq!(first["id"], user.id.to_string());
    assert_eq!(first["scope"], "read write");
    // A Unix time, as in Concur's responses (docs/decisions.md, Token formats).
    assert_eq!(first["refresh_expires_in"], app.clock.now() + 15_552_000);
    assert_eq!(first["geolocation"], app.address.as_str());
    let rt1 = field(&first, "refresh_token").to_owned();
    assert!(rt1.len() >= 43, "at least 256 bits");
    let family = app.stored_refresh_token(&rt1).await.family_id;
    assert_eq!(
        app.stored_family(&family).await.current_token,
        TokenHash::of(&rt1),
        "its family holds its hash"
    );

    app.clock.advance(60);
    let (status, second) = app.refresh(&client, &rt1).await;
    assert_eq!(status, StatusCode::OK, "{second}");
    let rt2 = field(&second, "refresh_token");
    assert_ne!(rt2, rt1);
    assert_eq!(second["id"], user.id.to_string());
    assert_eq!(second["refresh_expires_in"], app.clock.now() + 15_552_000);
    let record = app.stored_refresh_token(rt2).await;
    assert_eq!(record.generation, 1);
    assert_eq!(
        record.expires_at,
        app.clock.now() + 15_552_000,
        "lifetime renewed"
    );
    let (status, third) = app.refresh(&client, rt2).await;
    assert_eq!(status, StatusCode::OK, "{third}");
}

async fn refresh_alias_and_scope_narrowing(app: TestApp) {
    let client = app.create_client("read write admin").await;
    app.create_user("bob", PASSWORD).await;
    let (status, first) = app
        .password_grant(&client, "bob", PASSWORD, &[("scope", "read write")])
        .await;
    assert_eq!(status, StatusCode::OK, "{first}");
    assert_eq!(first["scope"], "read write");
    let rt = field(&first, "refresh_token");

    let (status, body) = app
        .token(&client_form(
            &client,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", rt),
                ("scope", "read admin"),
            ],
        ))
        .await;
    assert_error(&(status, body), 400, "invalid_scope", 54);

    let (status, narrowed) = app
        .token(&client_form(
            &client,
            &[
                ("grant_type", "refresh"),
                ("refresh_token", rt),
                ("scope", "read"),
            ],
        ))
        .await;
    assert_eq!(status, StatusCode::OK, "{narrowed}");
    assert_eq!(narrowed["scope"], "read");
    // The family keeps its scopes: the next refresh may ask for all of them again.
    let (status, again) = app
        .refresh(&client, field(&narrowed, "refresh_token"))
        .await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(again["scope"], "read write");
}

async fn replayed_refresh_token_revokes_the_family(app: TestApp) {
    let client = app.create_client("read").await;
    app.create_user("carol", PASSWORD).await;
    let first = app.user_tokens(&client, "carol", PASSWORD).await;
    let rt1 = field(&first, "refresh_token").to_owned();
    let (_, second) = app.refresh(&client, &rt1).await;
    let rt2 = field(&second, "refresh_token").to_owned();
    let access2 = field(&second, "access_token").to_owned();

    // At the end of the retry window (docs/decisions.md, Refresh tokens) a replay is reuse.
    app.clock.advance(app.services.policy.refresh_grace_seconds);
    let replay = app.refresh(&client, &rt1).await;
    assert_error(&replay, 400, "invalid_grant", 108);
    // The whole family is gone: the current refresh token and the access tokens it minted.
    assert_error(&app.refresh(&client, &rt2).await, 400, "invalid_grant", 108);
    let record = app.stored_access_token(&jti_of(&access2)).await.unwrap();
    assert!(
        record.revoked,
        "access tokens of a revoked family read revoked"
    );
    let family = app.stored_family(&record.family_id.unwrap()).await;
    assert!(family.revoked_at.is_some());
    // Other families of the same user are untouched.
    let other = app.user_tokens(&client, "carol", PASSWORD).await;
    let (status, _) = app.refresh(&client, field(&other, "refresh_token")).await;
    assert_eq!(status, StatusCode::OK);
}

async fn expiries_follow_the_clock(app: TestApp) {
    let client = app.create_client("read").await;
    app.create_user("erin", PASSWORD).await;
    let tokens = app.user_tokens(&client, "erin", PASSWORD).await;
    let access = field(&tokens, "access_token");
    let rt = field(&tokens, "refresh_token").to_owned();
    let jti = jti_of(access);

    app.clock.advance(3599);
    assert!(app
        .services
        .codec
        .decode(access, app.clock.now())
        .await
        .unwrap()
        .is_ok());
    assert!(app.stored_access_token(&jti).await.is_some());
    app.clock.advance(1);
    assert!(
        app.services
            .codec
            .decode(access, app.clock.now())
            .await
            .unwrap()
            .is_err(),
        "one hour"
    );
    assert!(app.stored_access_token(&jti).await.is_none());

    // Refresh tokens live 180 days by default.
    app.clock.advance(180 * 86_400);
    assert_error(&app.refresh(&client, &rt).await, 400, "invalid_grant", 108);
}

/// `REFRESH_GRACE_SECONDS`: a replay within the window, its successor unused, is a retry: the same
/// successor again, and the family lives on (docs/decisions.md, Refresh tokens).
#[tokio::test]
async fn replay_within_the_grace_window_is_a_retry() {
    let policy = Policy {
        refresh_grace_seconds: 30,
        ..Policy::default()
    };
    let app = TestApp::spawn_with(
        Backend::Sqlite,
        AppOptions {
            policy,
            ..AppOptions::default()
        },
    )
    .await
    .unwrap();
    let client = app.create_client("read").await;
    app.create_user("niaj", PASSWORD).await;
    let first = app.user_tokens(&client, "niaj", PASSWORD).await;
    let rt1 = field(&first, "refresh_token").to_owned();
    let (_, second) = app.refresh(&client, &rt1).await;
    app.clock.advance(10);
    let (status, retried) = app.refresh(&client, &rt1).await;
    assert_eq!(status, StatusCode::OK, "{retried}");
    assert_eq!(retried["refresh_token"], second["refresh_token"]);
    let (status, _) = app.refresh(&client, field(&second, "refresh_token")).await;
    assert_eq!(status, StatusCode::OK, "the family survived");
}
