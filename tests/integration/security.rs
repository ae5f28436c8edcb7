//! Security hardening (docs/decisions.md, Company auth tokens and Least privilege) at the
//! administration API, on SQLite and DynamoDB Local. The other rules are tested where they live:
//! the decoy hash (`secrets.rs`), the log ceilings (`telemetry.rs`), the import's skip reasons
//! (`import.rs`), the IAM conditions (`infra/check-iam.py`, run by `infra/lint-template.sh`).

use crate::support::app::{answer_of, json_of, RequestBody, TestApp};
use crate::support::assertions::{assert_company_error, assert_exchange_error, assert_token_error};
use reqwest::StatusCode;
use token_core::admin::{self, AdminError, NewClient};
use token_domain::Scopes;

fn client_with_connect_url(url: &str) -> NewClient {
    NewClient {
        connect_url: Some(url.to_owned()),
        ..NewClient::named("partner app", Scopes::parse("read").unwrap())
    }
}

/// The company auth-token endpoint redirects to the Connect URL with the auth token in the
/// query, so a plain-http URL would send that token in clear.
async fn plain_http_connect_urls_are_refused(app: TestApp) {
    for url in [
        "http://crm.example.com/connect?tenant=1",
        "http://203.0.113.7:8080/connect",
        "http://[2001:db8::1]/connect",
        "http://localhost.example.com/connect",
    ] {
        match admin::create_client(app.ctx(), client_with_connect_url(url)).await {
            Err(AdminError::Invalid(message)) => {
                assert!(message.contains("must use https"), "{url}: {message}");
                assert!(message.contains("loopback"), "{url}: {message}");
            }
            other => panic!("{url}: expected Invalid, got {other:?}"),
        }
    }
}

/// Local development keeps working: loopback hosts never put the token on a network.
async fn loopback_and_https_connect_urls_are_stored(app: TestApp) {
    for url in [
        "https://crm.example.com/connect?tenant=1",
        "http://localhost:3000/connect",
        "http://127.0.0.1:8080/connect",
        "http://[::1]:8080/connect",
    ] {
        let created = admin::create_client(app.ctx(), client_with_connect_url(url))
            .await
            .unwrap_or_else(|e| panic!("{url}: {e}"));
        let stored = app
            .ctx()
            .store
            .clients()
            .get_client(&created.client.id)
            .await
            .unwrap()
            .expect("the client is stored");
        assert_eq!(stored.connect_url.as_deref(), Some(url));
    }
}

/// docs/decisions.md, Company auth tokens: a partner app holding an administrator's access token
/// cannot mint company auth tokens (for itself or any app); the administration console, a
/// first-party app, can.
async fn only_first_party_tokens_may_request_company_auth_tokens(app: TestApp) {
    let company = app.create_company("First Party Co").await;
    let partner = app.create_client("read").await;
    let console = app.create_first_party_client("read").await;
    for client in [&partner, &console] {
        app.enable_company_for(&company, client).await;
    }
    let login = "root@first-party.example";
    app.create_company_admin(login, "admin password 1", &company)
        .await;
    let issue = |access: String, client_id: String| {
        let company_id = company.id.to_string();
        let app = &app;
        async move {
            let query = [("client_id", client_id.as_str())];
            app.company_auth_token(&company_id, Some(&access), &query, RequestBody::Empty)
                .await
        }
    };
    let access_of = |tokens: serde_json::Value| tokens["access_token"].as_str().unwrap().to_owned();

    let partner_access = access_of(app.user_tokens(&partner, login, "admin password 1").await);
    for target in [&partner, &console] {
        let answer = issue(partner_access.clone(), target.id.clone()).await;
        assert_company_error(&answer, 403, "access_denied", 403);
        assert_eq!(answer.1["status"], "FAIL");
        assert_eq!(answer.1["token"], "");
    }
    // Refused before the company is looked up: an unknown company is not revealed as 404.
    let unknown = app
        .company_auth_token(
            &uuid::Uuid::new_v4().to_string(),
            Some(&partner_access),
            &[("client_id", partner.id.as_str())],
            RequestBody::Empty,
        )
        .await;
    assert_company_error(&unknown, 403, "access_denied", 403);

    let console_access = access_of(app.user_tokens(&console, login, "admin password 1").await);
    let (status, body) = issue(console_access, partner.id.clone()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["status"], "PASS");
}

/// A JSON body naming a parameter twice is refused like a repeated form parameter, at every
/// endpoint that reads a body: two parsers of one body (a gateway, this service) must never
/// disagree on which value counts.
async fn repeated_json_names_are_refused_everywhere(app: TestApp) {
    let client = app.create_first_party_client("read").await;
    let consumer_key = format!("old-{}", uuid::Uuid::new_v4().simple());
    app.link_legacy_app(&consumer_key, &client).await;
    let app_token = app.app_token(&client).await;
    let json = |request: reqwest::RequestBuilder, body: String| {
        answer_of(
            request
                .header("content-type", "application/json")
                .body(body),
        )
    };

    // The second grant_type would win if the last value were taken.
    let token_body = format!(
        r#"{{"grant_type":"password","client_id":"{id}","client_secret":"{secret}","grant_type":"client_credentials"}}"#,
        id = client.id,
        secret = client.secret,
    );
    let answer = json(app.http.post(app.url("/v0/token")), token_body).await;
    assert_token_error(&answer, 400, "invalid_request", 135);

    let exchange_body = format!(
        r#"{{"token":"a","secret":"{secret}","token":"b"}}"#,
        secret = client.secret
    );
    let answer = json(
        app.exchange_request(&consumer_key, "")
            .bearer_auth(&app_token),
        exchange_body,
    )
    .await;
    assert_exchange_error(&answer, 400, "INVALIDTOKEN", "invalid_request");

    let company = app.create_company("Repeated Co").await;
    let admin_login = "root@repeated.example";
    app.create_company_admin(admin_login, "admin password 1", &company)
        .await;
    let access = app
        .user_tokens(&client, admin_login, "admin password 1")
        .await["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    let company_body = format!(
        r#"{{"client_id":"{id}","client_id":"{id}"}}"#,
        id = client.id
    );
    let answer = json(
        app.company_auth_token_request(&company.id.to_string(), Some(&access), &[]),
        company_body,
    )
    .await;
    assert_company_error(&answer, 400, "invalid_request", 135);
}

/// The exchange answers every refusal in its own JSON shape with a string code: an undecodable
/// consumer key (after authentication, as an unknown one) and an unreadable body.
async fn exchange_refusals_keep_the_exchange_shape(app: TestApp) {
    let client = app.create_client("read").await;
    let app_token = app.app_token(&client).await;
    let undecodable = "/appmgmt/v0/legacyApps/%FF/exchangeRefreshToken/me";
    let send = |bearer: Option<String>| {
        let mut request = app
            .http
            .post(app.url(undecodable))
            .form(&[("token", "old"), ("secret", client.secret.as_str())]);
        if let Some(bearer) = bearer {
            request = request.bearer_auth(bearer);
        }
        async move { json_of(request.send().await.unwrap()).await }
    };
    // Before authentication: the bearer token is refused first.
    assert_exchange_error(&send(None).await, 400, "UNAUTHORIZED", "invalid_client");
    // Authenticated: no old app has such a key.
    let answer = send(Some(app_token.clone())).await;
    assert_eq!(answer.0, StatusCode::NOT_FOUND, "{}", answer.1);
    assert_eq!(answer.1["code"], "INVALIDAPP");
    assert_eq!(answer.1["error"], "invalid_client");

    let consumer_key = format!("old-{}", uuid::Uuid::new_v4().simple());
    app.link_legacy_app(&consumer_key, &client).await;
    let text = app
        .exchange_request(&consumer_key, "")
        .bearer_auth(&app_token)
        .header("content-type", "text/plain")
        .body(format!("token=old&secret={}", client.secret))
        .send()
        .await
        .unwrap();
    let answer = json_of(text).await;
    assert_exchange_error(&answer, 400, "INVALIDTOKEN", "invalid_request");
    assert!(answer.1["code"].is_string(), "{}", answer.1);
}

crate::on_both_stores!(
    repeated_json_names_are_refused_everywhere,
    exchange_refusals_keep_the_exchange_shape,
    plain_http_connect_urls_are_refused,
    loopback_and_https_connect_urls_are_stored,
    only_first_party_tokens_may_request_company_auth_tokens,
);

/// The no-secrets check itself: a one-time password's digits inside a timestamp or a longer
/// number are chance, not a leak; standing alone they are one.
#[test]
fn a_one_time_password_counts_as_logged_only_standing_alone() {
    use crate::support::logs::holds;
    assert!(holds(r#"{"otp":"123456"}"#, "123456"));
    assert!(holds("message otp 123456 sent", "123456"));
    assert!(!holds(
        r#"{"timestamp":"2026-11-23T21:02:35.123456Z"}"#,
        "123456"
    ));
    assert!(!holds(r#"{"latency_ms":12.1234567}"#, "123456"));
    assert!(!holds(r#"{"expires_at":1795123456}"#, "123456"));
    assert!(holds("a-long-secret-value", "long-secret"));
}
