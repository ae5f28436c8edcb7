//! A DynamoDB client pointed at a closed loopback port (no table, no DynamoDB Local needed, so
//! these run even with `SKIP_DYNAMODB=1`): nothing listens, every connection is refused.

use std::sync::Arc;

use crate::support::app::{AppOptions, Backend, TestApp};
use crate::support::logs::assert_no_secret_logged;
use crate::support::ports::RefusingPort;
use reqwest::StatusCode;
use serde_json::Value;
use token_domain::clock::Clock;
use token_domain::{AccessTokenRecord, ClientId, ConsumerKey, PrincipalType, Scopes, TokenId};
use token_store::dynamodb::DynamoStore;
use uuid::Uuid;

/// An app whose DynamoDB endpoint refuses every connection, while the port is held.
async fn app_over_a_dead_endpoint() -> (TestApp, RefusingPort) {
    let refusing = RefusingPort::bind();
    let store = DynamoStore::connect("tokens", Some(&refusing.url("http"))).await;
    let app = TestApp::with_store(Arc::new(store), Backend::DynamoDb, AppOptions::default()).await;
    (app, refusing)
}

/// Every endpoint of the three functions that reads the store answers 503 with a message, and
/// the store's error lines carry no credential. (Moved here from `cross_cutting`.)
#[tokio::test]
async fn every_store_backed_endpoint_answers_503_when_the_store_is_down() {
    let (app, _refusing) = app_over_a_dead_endpoint().await;
    // A correctly signed application token, so the exchange gets as far as the store.
    let now = app.clock.now();
    let client_id = ClientId::parse(&Uuid::new_v4().to_string()).unwrap();
    let bearer = app
        .services
        .codec
        .encode(&AccessTokenRecord {
            jti: TokenId::new(Uuid::new_v4()),
            client_id,
            principal_type: PrincipalType::Application,
            subject: Uuid::parse_str(&client_id.to_string()).unwrap(),
            family_id: None,
            scopes: Scopes::parse("read").unwrap(),
            issued_at: now,
            expires_at: now + 3600,
            revoked: false,
            jkt: None,
            audience: Vec::new(),
            act: None,
            client_url: None,
            auth_time: None,
            amr: Vec::new(),
            exchanged_from: Vec::new(),
        })
        .await
        .unwrap();
    let secret = format!("dead-store-secret-{}", Uuid::new_v4());
    let requests = [
        (
            "token",
            app.http.post(app.url("/v0/token")).form(&[
                ("grant_type", "client_credentials"),
                ("client_id", &client_id.to_string()),
                ("client_secret", &secret),
            ]),
        ),
        (
            "exchange",
            app.exchange_request(ConsumerKey::parse("key").unwrap().as_str(), "")
                .bearer_auth(&bearer)
                .form(&[("token", "old"), ("secret", secret.as_str())]),
        ),
        (
            "company",
            app.company_auth_token_request(&Uuid::new_v4().to_string(), Some(&bearer), &[]),
        ),
    ];
    for (endpoint, request) in requests {
        let response = request.send().await.unwrap();
        let status = response.status();
        let body: Value = response.json().await.unwrap();
        assert_eq!(
            status,
            StatusCode::SERVICE_UNAVAILABLE,
            "{endpoint}: {body}"
        );
        assert_eq!(
            body["error"], "temporarily_unavailable",
            "{endpoint}: {body}"
        );
        assert!(
            body["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{endpoint}: {body}"
        );
    }
    assert_no_secret_logged(&[&secret, &bearer]);
}

/// The JWK Sets, the discovery documents and the OpenAPI document come from memory: they answer
/// while the store is down.
#[tokio::test]
async fn memory_endpoints_still_answer() {
    let (app, _refusing) = app_over_a_dead_endpoint().await;
    for path in [
        "/v0/token/jwks",
        "/oauth2/v0/jwks",
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
        "/openapi.json",
    ] {
        let response = app.http.get(app.url(path)).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        let body: Value = response.json().await.unwrap();
        assert!(body.is_object(), "{path}: {body}");
    }
}
