//! Properties every endpoint shares (token, JWK Set, exchange, company auth token): the
//! correlation id (echoed, logged with the same value, invalid ones replaced) and no credential
//! in any log line (captured at DEBUG), both on both stores; the 16 KiB body limit (exactly 16
//! KiB read, one byte more 413) for form and JSON bodies. The 503 when the store does not answer is
//! `store_unavailable`'s, for every endpoint on both stores.

use crate::support::app::{Backend, TestApp, TestClient};
use crate::support::logs::{assert_no_secret_logged, captured_lines_with};
use reqwest::{RequestBuilder, StatusCode};
use serde_json::Value;
use token_core::admin;
use token_domain::{ClientId, ConsumerKey, Scopes};
use uuid::Uuid;

const PASSWORD: &str = "cross cutting password 1";

// The logging and correlation properties on both stores: the DynamoDB store's SDK logs too.
crate::on_both_stores!(
    correlation_ids_are_echoed_logged_and_replaced_when_invalid,
    every_documented_operation_echoes_both_correlation_headers,
    no_credential_reaches_the_logs
);
const LIMIT: usize = 16 * 1024;

/// One request per endpoint, each able to carry a correlation id.
fn every_endpoint(app: &TestApp) -> Vec<(&'static str, RequestBuilder)> {
    let company = Uuid::new_v4().to_string();
    vec![
        (
            "token",
            app.http
                .post(app.url("/v0/token"))
                .form(&[("grant_type", "password")]),
        ),
        ("jwks", app.http.get(app.url("/v0/token/jwks"))),
        ("exchange", app.exchange_request("some-key", "")),
        (
            "company",
            app.company_auth_token_request(&company, None, &[]),
        ),
    ]
}

async fn correlation_ids_are_echoed_logged_and_replaced_when_invalid(app: TestApp) {
    for (endpoint, request) in every_endpoint(&app) {
        let given = format!("corr-{endpoint}-{}", Uuid::new_v4());
        let response = request
            .header("x-correlation-id", &given)
            .send()
            .await
            .unwrap();
        assert_eq!(
            response.headers()["x-correlation-id"],
            given.as_str(),
            "{endpoint}"
        );
        assert_logged_once(endpoint, &given);
    }
    let too_long = "x".repeat(129);
    for invalid in ["with space", too_long.as_str(), ""] {
        for (endpoint, request) in every_endpoint(&app) {
            let response = request
                .header("x-correlation-id", invalid)
                .send()
                .await
                .unwrap();
            let replaced = response.headers()["x-correlation-id"]
                .to_str()
                .unwrap()
                .to_owned();
            assert!(
                Uuid::parse_str(&replaced).is_ok(),
                "{endpoint}: {invalid:?} -> {replaced:?}"
            );
            assert_logged_once(endpoint, &replaced);
        }
    }
}

/// Every operation of the OpenAPI document echoes both correlation headers, whatever it
/// answers: sent without credentials or body, most answers are errors (400, 401, 404).
async fn every_documented_operation_echoes_both_correlation_headers(app: TestApp) {
    let document: Value = app.get_json("/openapi.json").await;
    let paths = document["paths"].as_object().expect("paths");
    let mut statuses = Vec::new();
    for (path, operations) in paths {
        let concrete = path
            .replace("{OLDConsumerKey}", "qyprd-nothing")
            .replace("{COMPANY_ID}", "00000000-0000-0000-0000-000000000000");
        for method in operations.as_object().unwrap().keys() {
            let method =
                reqwest::Method::from_bytes(method.to_ascii_uppercase().as_bytes()).unwrap();
            let (ours, concur) = (
                format!("corr-{}", Uuid::new_v4()),
                format!("concur-{}", Uuid::new_v4()),
            );
            let response = app
                .http
                .request(method.clone(), app.url(&concrete))
                .header("x-correlation-id", &ours)
                .header("concur-correlationid", &concur)
                .send()
                .await
                .unwrap();
            let headers = response.headers();
            let what = format!("{method} {path} ({})", response.status());
            assert_eq!(
                headers.get("x-correlation-id").map(|v| v.to_str().unwrap()),
                Some(ours.as_str()),
                "{what}"
            );
            assert_eq!(
                headers
                    .get("concur-correlationid")
                    .map(|v| v.to_str().unwrap()),
                Some(concur.as_str()),
                "{what}"
            );
            statuses.push(response.status());
        }
    }
    assert!(statuses.len() >= 14, "{statuses:?}");
    assert!(statuses.iter().any(|s| s.is_success()), "{statuses:?}");
    assert!(
        statuses.iter().any(|s| s.is_client_error()),
        "errors included: {statuses:?}"
    );
}

/// The request's one "request completed" line carries the correlation id the caller saw.
#[track_caller]
fn assert_logged_once(endpoint: &str, correlation_id: &str) {
    let field = format!("\"correlation_id\":\"{correlation_id}\"");
    let lines: Vec<String> = captured_lines_with(&field)
        .into_iter()
        .filter(|line| line.contains("request completed"))
        .collect();
    assert_eq!(
        lines.len(),
        1,
        "{endpoint}: one log line with {field}: {lines:?}"
    );
}

/// The company flow end to end (Basic client_credentials, the administrator's password grant,
/// the auth token answered in `Location`, the company grant, a refused replay) leaves no
/// credential in the logs, the DEBUG lines included.
async fn no_credential_reaches_the_logs(app: TestApp) {
    let company = app.create_company("Logged Co").await;
    let crm = app
        .create_client_with(admin::NewClient {
            connect_url: Some("https://crm.example.com/connect".into()),
            first_party: true,
            ..admin::NewClient::named("crm", Scopes::parse("read").unwrap())
        })
        .await;
    admin::enable_company_for_client(app.ctx(), &company.id, &ClientId::parse(&crm.id).unwrap())
        .await
        .unwrap();
    let login = format!("admin-{}", Uuid::new_v4().simple());
    app.create_user_with(&login, PASSWORD, |u| {
        u.company_id = Some(company.id);
        u.is_admin = true;
    })
    .await;

    let basic = app
        .http
        .post(app.url("/v0/token"))
        .basic_auth(&crm.id, Some(&crm.secret))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .unwrap();
    let app_token: Value = basic.json().await.unwrap();
    let admin_tokens = app.user_tokens(&crm, &login, PASSWORD).await;
    let redirect = app
        .company_auth_token_request(
            &company.id.to_string(),
            admin_tokens["access_token"].as_str(),
            &[("redirect", "true"), ("client_id", &crm.id)],
        )
        .send()
        .await
        .unwrap();
    assert_eq!(redirect.status(), StatusCode::MOVED_PERMANENTLY);
    let location = url::Url::parse(redirect.headers()["location"].to_str().unwrap()).unwrap();
    let auth_token = location
        .query_pairs()
        .find(|(k, _)| k == "requestToken")
        .unwrap()
        .1
        .into_owned();
    let grant = [
        ("grant_type", "password"),
        ("credtype", "authtoken"),
        ("client_id", crm.id.as_str()),
        ("client_secret", crm.secret.as_str()),
        ("username", &company.id.to_string()),
        ("password", auth_token.as_str()),
    ]
    .map(|(k, v)| (k, v.to_owned()));
    let grant: Vec<(&str, &str)> = grant.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (status, company_tokens) = app.token(&grant).await;
    assert_eq!(status, StatusCode::OK, "{company_tokens}");
    let refresh = company_tokens["refresh_token"].as_str().unwrap();
    let refresh_form = [
        ("grant_type", "refresh_token"),
        ("client_id", crm.id.as_str()),
        ("client_secret", crm.secret.as_str()),
        ("refresh_token", refresh),
    ];
    app.token(&refresh_form).await;
    // Replayed after the retry window: the revocation path logs too.
    app.clock.advance(app.services.policy.refresh_grace_seconds);
    app.token(&refresh_form).await;

    assert!(
        !captured_lines_with(&crm.id).is_empty(),
        "the requests were logged"
    );
    assert_no_secret_logged(&[
        crm.secret.as_str(),
        PASSWORD,
        app_token["access_token"].as_str().unwrap(),
        admin_tokens["access_token"].as_str().unwrap(),
        admin_tokens["refresh_token"].as_str().unwrap(),
        &auth_token,
        company_tokens["access_token"].as_str().unwrap(),
        refresh,
    ]);
}

/// Exactly 16 KiB is read; one byte more is 413, as a form and as JSON, at every endpoint that
/// reads a body.
#[tokio::test]
async fn bodies_of_exactly_16_kib_are_read_and_larger_ones_refused() {
    let app = TestApp::spawn(Backend::Sqlite).await.unwrap();
    let client = app.create_first_party_client("read").await;
    let consumer_key = format!("old-{}", Uuid::new_v4().simple());
    admin::link_legacy_app(
        app.ctx(),
        ConsumerKey::parse(&consumer_key).unwrap(),
        &ClientId::parse(&client.id).unwrap(),
    )
    .await
    .unwrap();
    let app_token = app.app_token(&client).await;
    let company = app.create_company("Sized Co").await;
    let login = format!("admin-{}", Uuid::new_v4().simple());
    app.create_user_with(&login, PASSWORD, |u| {
        u.company_id = Some(company.id);
        u.is_admin = true;
    })
    .await;
    let admin_token = app.user_tokens(&client, &login, PASSWORD).await["access_token"]
        .as_str()
        .unwrap()
        .to_owned();

    for size in [LIMIT, LIMIT + 1] {
        for json in [false, true] {
            let requests: [(&str, RequestBuilder); 3] = [
                ("token", app.http.post(app.url("/v0/token"))),
                (
                    "exchange",
                    app.exchange_request(&consumer_key, "")
                        .bearer_auth(&app_token),
                ),
                (
                    "company",
                    app.company_auth_token_request(
                        &company.id.to_string(),
                        Some(&admin_token),
                        &[],
                    ),
                ),
            ];
            for (endpoint, request) in requests {
                let request = padded(request, &client, size, json);
                let status = request.send().await.unwrap().status();
                let what = format!("{endpoint}, {size} bytes, json: {json}");
                if size == LIMIT {
                    assert_ne!(status, StatusCode::PAYLOAD_TOO_LARGE, "{what}");
                    assert!(
                        status.is_client_error() || status.is_success(),
                        "{what}: {status}"
                    );
                } else {
                    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{what}");
                }
            }
        }
    }
}

/// A body of exactly `size` bytes naming the client, padded with an ignored parameter.
fn padded(request: RequestBuilder, client: &TestClient, size: usize, json: bool) -> RequestBuilder {
    let (head, tail, content_type) = if json {
        (
            format!("{{\"client_id\":\"{}\",\"pad\":\"", client.id),
            "\"}",
            "application/json",
        )
    } else {
        (
            format!("client_id={}&pad=", client.id),
            "",
            "application/x-www-form-urlencoded",
        )
    };
    let body = format!("{head}{}{tail}", "x".repeat(size - head.len() - tail.len()));
    assert_eq!(body.len(), size);
    request.header("content-type", content_type).body(body)
}
