//! Each Lambda function's handler, driven in-process by API Gateway HTTP API (payload 2.0)
//! fixture events, exactly as `lambda_http::run` hands them over: the event JSON is parsed by
//! `lambda_http` and the resulting request goes through the function's own router.

use crate::support::app::{Backend, TestApp};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use http_body_util::BodyExt;
use serde_json::Value;
use token_core::admin;
use token_domain::secrets::TokenHash;
use token_domain::{ClientId, ConsumerKey, Scopes};
use token_http::{company_router, exchange_router, registration_router, token_router};
use token_store_conformance::records::user_legacy_token;
use tower::ServiceExt;

/// A fixture from `tests/fixtures/apigw/` with its `{{PLACEHOLDERS}}` filled in.
fn fixture(name: &str, values: &[(&str, &str)]) -> lambda_http::Request {
    fixture_from("198.51.100.7", name, values)
}

/// [`fixture`], its request sent from `source_ip` instead of the fixtures' address.
fn fixture_from(source_ip: &str, name: &str, values: &[(&str, &str)]) -> lambda_http::Request {
    let path = format!("{}/fixtures/apigw/{name}", env!("CARGO_MANIFEST_DIR"));
    let mut text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    for (key, value) in values {
        text = text.replace(&format!("{{{{{key}}}}}"), value);
    }
    assert!(!text.contains("{{"), "unfilled placeholder in {name}");
    let text = text.replace(
        r#""sourceIp": "198.51.100.7""#,
        &format!(r#""sourceIp": "{source_ip}""#),
    );
    lambda_http::request::from_str(&text)
        .unwrap_or_else(|e| panic!("{name} is not an API Gateway event: {e}"))
}

/// Runs the event through `router` and returns status, headers and body.
async fn handle(
    router: axum::Router,
    request: lambda_http::Request,
) -> (u16, http::HeaderMap, Vec<u8>) {
    let response = router.oneshot(request).await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes()
        .to_vec();
    (status, headers, body)
}

fn json(body: &[u8]) -> Value {
    serde_json::from_slice(body)
        .unwrap_or_else(|_| panic!("not JSON: {}", String::from_utf8_lossy(body)))
}

async fn app() -> TestApp {
    TestApp::spawn(Backend::Sqlite).await.unwrap()
}

#[tokio::test]
async fn token_function_accepts_a_base64_encoded_form_body() {
    let app = app().await;
    let client = app.create_client("read").await;
    let form = format!(
        "grant_type=client_credentials&client_id={}&client_secret={}",
        client.id, client.secret
    );
    let event = fixture(
        "token_client_credentials_base64_form.json",
        &[("BODY_BASE64", &STANDARD.encode(form))],
    );
    let (status, headers, body) = handle(token_router(app.services.clone()), event).await;
    let body = json(&body);
    assert_eq!(status, 200, "{body}");
    assert_eq!(headers["cache-control"], "no-store");
    assert_eq!(headers["pragma"], "no-cache");
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["principal_type"], "application");
    assert_eq!(body["id"], client.id.as_str());
}

#[tokio::test]
async fn token_function_serves_the_alias_path_with_json() {
    let app = app().await;
    let client = app.create_client("read").await;
    let event = fixture(
        "token_alias_json.json",
        &[("CLIENT_ID", &client.id), ("CLIENT_SECRET", &client.secret)],
    );
    let (status, _, body) = handle(token_router(app.services.clone()), event).await;
    assert_eq!(status, 200, "{}", json(&body));
    assert_eq!(json(&body)["expires_in"], 3600);
}

#[tokio::test]
async fn token_function_answers_catalogued_errors_and_serves_the_jwk_set() {
    let app = app().await;
    let basic = STANDARD.encode(format!("{}:whatever", uuid::Uuid::new_v4()));
    let (status, headers, body) = handle(
        token_router(app.services.clone()),
        fixture("token_unknown_client.json", &[("BASIC", &basic)]),
    )
    .await;
    assert_eq!(status, 401);
    assert!(headers["www-authenticate"]
        .to_str()
        .unwrap()
        .starts_with("Basic"));
    let body = json(&body);
    assert_eq!(
        (body["error"].as_str(), body["code"].as_u64()),
        (Some("invalid_client"), Some(61))
    );

    let (status, headers, body) = handle(
        token_router(app.services.clone()),
        fixture("token_jwks.json", &[]),
    )
    .await;
    assert_eq!(status, 200);
    assert!(headers["cache-control"]
        .to_str()
        .unwrap()
        .contains("max-age"));
    assert_eq!(json(&body)["keys"][0]["alg"], "ES256");

    // The token function serves only its own routes.
    let (status, _, body) = handle(
        token_router(app.services.clone()),
        fixture(
            "exchange_form.json",
            &[
                ("CONSUMER_KEY", "k"),
                ("APP_TOKEN", "t"),
                ("OLD_TOKEN", "o"),
                ("CLIENT_SECRET", "s"),
            ],
        ),
    )
    .await;
    assert_eq!(status, 404);
    assert_eq!(json(&body)["error"], "not_found");
}

#[tokio::test]
async fn exchange_function_exchanges_an_old_token() {
    let app = app().await;
    let client = app.create_client("read write").await;
    let user = app.create_user("lambda-user", "a password").await;
    let key = ConsumerKey::parse("old-lambda-app").unwrap();
    admin::link_legacy_app(
        app.ctx(),
        key.clone(),
        &ClientId::parse(&client.id).unwrap(),
    )
    .await
    .unwrap();
    let old_token = "old-refresh-token-for-the-lambda-fixture";
    app.store
        .legacy()
        .put_legacy_tokens(&[user_legacy_token(old_token, key.clone(), user.id)])
        .await
        .unwrap();
    let app_token = app.app_token(&client).await;
    let event = fixture(
        "exchange_form.json",
        &[
            ("CONSUMER_KEY", key.as_str()),
            ("APP_TOKEN", &app_token),
            ("OLD_TOKEN", old_token),
            ("CLIENT_SECRET", &client.secret),
        ],
    );
    let (status, headers, body) = handle(exchange_router(app.services.clone()), event).await;
    let body = json(&body);
    assert_eq!(status, 200, "{body}");
    assert_eq!(headers["cache-control"], "no-store");
    assert_eq!(body["code"], "OK");
    assert_eq!(body["principalType"], "user");
    assert_eq!(body["id"], user.id.to_string());
    assert!(body["refreshToken"].as_str().is_some_and(|t| !t.is_empty()));

    // Its family.started, with the source address API Gateway saw and the caller's user agent.
    let refresh = body["refreshToken"].as_str().unwrap();
    let family_id = crate::audit::family_of_refresh_token(&app, refresh).await;
    let events = crate::audit::events_of(&app, crate::audit::family_subject(&family_id)).await;
    assert_eq!(crate::audit::names(&events), ["family.started"]);
    let started = crate::audit::json(&events[0]);
    assert_eq!(started["grant"], "legacy_exchange");
    assert_eq!(started["client_id"], client.id);
    assert_eq!(started["principal_id"], user.id.to_string());
    assert_eq!(started["source_address"], "198.51.100.7");
    assert_eq!(started["user_agent"], "fixture");
    assert!(started["correlation_id"].is_string(), "{started}");
}

#[tokio::test]
async fn company_function_redirects_to_the_connect_url_on_the_trailing_slash_path() {
    let app = app().await;
    let mut new_client = admin::NewClient::named("connect app", Scopes::parse("read").unwrap());
    new_client.connect_url = Some("https://app.example.com/connect?tenant=42".into());
    new_client.first_party = true;
    let client = app.create_client_with(new_client).await;
    let company = app.create_company("Lambda Co").await;
    admin::enable_company_for_client(
        app.ctx(),
        &company.id,
        &ClientId::parse(&client.id).unwrap(),
    )
    .await
    .unwrap();
    let admin_user = app
        .create_user_with("lambda-admin", "admin password", |u| {
            u.company_id = Some(company.id);
            u.is_admin = true;
        })
        .await;
    let tokens = app
        .user_tokens(&client, "lambda-admin", "admin password")
        .await;
    let event = fixture(
        "company_authtoken_redirect.json",
        &[
            ("COMPANY_ID", &company.id.to_string()),
            ("CLIENT_ID", &client.id),
            ("ADMIN_TOKEN", tokens["access_token"].as_str().unwrap()),
        ],
    );
    let (status, headers, _) = handle(company_router(app.services.clone()), event).await;
    assert_eq!(status, 301);
    let location = url::Url::parse(headers["location"].to_str().unwrap()).unwrap();
    assert_eq!(location.host_str(), Some("app.example.com"));
    let query: std::collections::HashMap<_, _> = location.query_pairs().into_owned().collect();
    assert_eq!(query["tenant"], "42");
    assert_eq!(query["id"], company.id.to_string());
    assert_eq!(query["userID"], admin_user.id.to_string());
    let auth_token = &query["requestToken"];
    let stored = app
        .store
        .auth_tokens()
        .get_auth_token(
            &TokenHash::of(auth_token),
            token_domain::clock::Clock::now(app.clock.as_ref()),
        )
        .await
        .unwrap()
        .expect("the auth token in the redirect is stored (as a hash)");
    assert_eq!(stored.company_id, company.id);
}

/// API Gateway's source address is counted per IPv6 /64: stepping through the addresses of one
/// prefix is still one source.
#[tokio::test]
async fn password_grants_from_one_ipv6_prefix_count_as_one_source_sqlite() {
    one_ipv6_prefix_is_one_source(Backend::Sqlite).await;
}

#[tokio::test]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn password_grants_from_one_ipv6_prefix_count_as_one_source_dynamodb() {
    one_ipv6_prefix_is_one_source(Backend::DynamoDb).await;
}

async fn one_ipv6_prefix_is_one_source(backend: Backend) {
    let limits = token_core::config::RateLimits {
        address_per_minute: 2,
        ..token_core::config::RateLimits::default()
    };
    let Some(app) = TestApp::spawn_with(backend, crate::limits::with_limits(limits)).await else {
        return;
    };
    let now = token_domain::clock::Clock::now(app.clock.as_ref());
    app.clock.advance(60 - now.rem_euclid(60));
    let client = app.create_client("read").await;
    app.create_user("pat", "a password").await;
    let form = format!(
        "grant_type=password&client_id={}&client_secret={}&username=pat&password=a+password",
        client.id, client.secret
    );
    let grant_from = |source_ip: &str| {
        fixture_from(
            source_ip,
            "token_client_credentials_base64_form.json",
            &[("BODY_BASE64", &STANDARD.encode(&form))],
        )
    };
    for source_ip in ["2001:db8:1:2::1", "2001:db8:1:2::2"] {
        let (status, _, body) =
            handle(token_router(app.services.clone()), grant_from(source_ip)).await;
        assert_eq!(status, 200, "{source_ip}: {}", json(&body));
    }
    let (status, _, body) = handle(
        token_router(app.services.clone()),
        grant_from("2001:db8:1:2:ffff::3"),
    )
    .await;
    let status = reqwest::StatusCode::from_u16(status).unwrap();
    crate::support::assertions::assert_token_error(&(status, json(&body)), 429, "slow_down", 141);
    let (status, _, body) = handle(
        token_router(app.services.clone()),
        grant_from("2001:db8:1:3::1"),
    )
    .await;
    assert_eq!(status, 200, "another /64: {}", json(&body));
}

/// Registration is a function of its own (the only role that may write whole client items): its
/// router registers the client, the token function's knows no such route.
#[tokio::test]
async fn registration_function_registers_a_client_and_the_token_function_does_not() {
    let app = TestApp::spawn_with(Backend::Sqlite, crate::registration::open())
        .await
        .unwrap();
    let (status, _, body) = handle(
        registration_router(app.services.clone()),
        fixture("register_public_client.json", &[]),
    )
    .await;
    let body = json(&body);
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["client_name"], "fixture agent");
    let id = ClientId::parse(body["client_id"].as_str().unwrap()).unwrap();
    let stored = app.store.clients().get_client(&id).await.unwrap();
    assert!(
        stored.is_some_and(|client| client.enabled),
        "the client is stored"
    );

    let (status, _, _) = handle(
        token_router(app.services.clone()),
        fixture("register_public_client.json", &[]),
    )
    .await;
    assert_eq!(
        status, 404,
        "the token function does not serve registration"
    );
}
