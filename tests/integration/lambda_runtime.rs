//! The three Lambda binaries run as Lambda runs them: each built function is a process whose
//! `AWS_LAMBDA_RUNTIME_API` points at a Runtime API served by this test, over a fresh table on
//! DynamoDB Local. Each function gets API Gateway HTTP API (payload 2.0) events, as in
//! `tests/fixtures/apigw/`, and must answer one flow:
//!
//! - token: `client_credentials` → 200 with an application access token;
//! - exchange: an imported old token → 200, `"code": "OK"`, a user family;
//! - company-authtoken: an administrator's user token (password grant at the token function),
//!   then the company auth token → 200, `"status": "PASS"`.
//!
//! Before them the baseline, `hello-lambda` (`tests/hello-lambda/`): `lambda_http` answering
//! "hello" after reading one DynamoDB item, so the functions' figures can be read against the
//! runtime's and the SDK's own (issue 46's "hello world whose first request reads one item").
//!
//! The binaries are `target/<profile>/{hello-lambda,token,exchange,company-authtoken}`, next to
//! this test's own directory, or in `$LAMBDA_BINARIES_DIR`. `cargo test` does not build the
//! binaries of other packages, so the test command builds them first (`cargo build --workspace
//! --bins`, as `infra/test.sh` does); a missing binary fails the test, it never skips.
//!
//! Each binary's cold start is printed on stderr in every run: init, from process start to its
//! first poll of `next`, and the latency of its first request, from the event handed out to the
//! response posted. `infra/bench.sh` reads those lines.

pub(crate) mod function;
mod lazy_start;
mod metrics_off;
mod queue_and_registration;
mod rotate_keys;
mod runtime_api;
mod secrets_manager;

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::{json, Value};
use token_core::admin::{self, NewClient, NewUser};
use token_core::context::Context;
use token_core::import::import_legacy_tokens;
use token_core::signing;
use token_domain::clock::SystemClock;
use token_domain::random::OsRandom;
use token_domain::secrets::Secret;
use token_domain::{ConsumerKey, Geolocation, Login, Scopes, UserStatus};

use crate::support::otlp_receiver::{attribute, OtlpReceiver};
use function::{FunctionEnv, RunningFunction};

/// The deployment's geolocation, the same for the three functions and the users.
const GEOLOCATION: &str = "https://lambda-runtime.test.example";
const ADMIN_LOGIN: &str = "admin@lambda-runtime.example";
const ADMIN_PASSWORD: &str = "the administrator's password";

/// What the functions are deployed over, set up through the library as `tokenctl` would: a
/// signing key in `DATA_DIR`, an app, a company enabled for it with an administrator, and an old
/// token of the administrator's imported for a consumer key linked to the app.
struct Deployment {
    env: FunctionEnv,
    client_id: String,
    client_secret: String,
    company_id: String,
    admin_id: String,
    consumer_key: String,
    old_token: String,
}

impl Deployment {
    /// `None` only when the DynamoDB suites are explicitly opted out (`SKIP_DYNAMODB=1`).
    async fn create() -> Option<Self> {
        let store = crate::support::dynamodb::fresh_table().await?;
        let endpoint = crate::support::dynamodb::endpoint()?;
        let table_name = store.table_name().to_owned();
        let data_dir = tempfile::Builder::new()
            .prefix("lambda-runtime-")
            .tempdir()
            .unwrap();
        signing::rotate_local(data_dir.path(), &OsRandom, &SystemClock).unwrap();

        let ctx = Context::new(Arc::new(store));
        let geolocation = Geolocation::parse(GEOLOCATION).unwrap();
        let mut new_client =
            NewClient::named("lambda runtime app", Scopes::parse("read write").unwrap());
        new_client.connect_url = Some("https://app.example.com/connect".into());
        new_client.first_party = true;
        let client = admin::create_client(&ctx, new_client).await.unwrap();
        let company = admin::create_company(&ctx, "Lambda Runtime Co", geolocation.clone())
            .await
            .unwrap();
        admin::enable_company_for_client(&ctx, &company.id, &client.client.id)
            .await
            .unwrap();
        let administrator = NewUser {
            login: Login::parse(ADMIN_LOGIN).unwrap(),
            password: Secret::new(ADMIN_PASSWORD),
            company_id: Some(company.id),
            is_admin: true,
            geolocation,
            status: UserStatus::Active,
            email: None,
        };
        let administrator = admin::create_user(&ctx, administrator).await.unwrap();
        let consumer_key = ConsumerKey::parse("lambda-runtime-app").unwrap();
        admin::link_legacy_app(&ctx, consumer_key.clone(), &client.client.id)
            .await
            .unwrap();
        let old_token = format!("legacy-{}", uuid::Uuid::new_v4().simple());
        let line = json!({
            "token": old_token,
            "consumer_key": consumer_key.as_str(),
            "principal_type": "user",
            "principal_id": administrator.id.to_string(),
            "scopes": ["read"],
            "wsadmin": false,
        })
        .to_string();
        let report = import_legacy_tokens(&ctx, line.as_bytes(), |_| {})
            .await
            .unwrap();
        assert_eq!(report.imported, 1, "{:?}", report.skipped_lines);

        Some(Self {
            env: FunctionEnv {
                endpoint,
                table_name,
                data_dir,
            },
            client_id: client.client.id.to_string(),
            client_secret: client.secret.expose().to_owned(),
            company_id: company.id.to_string(),
            admin_id: administrator.id.to_string(),
            consumer_key: consumer_key.to_string(),
            old_token,
        })
    }

    fn basic(&self) -> String {
        let credentials = format!("{}:{}", self.client_id, self.client_secret);
        format!("Basic {}", STANDARD.encode(credentials))
    }
}

fn is_jwt(value: &Value) -> bool {
    value
        .as_str()
        .is_some_and(|t| t.split('.').count() == 3 && t.split('.').all(|part| !part.is_empty()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn each_function_binary_answers_under_the_runtime_api() {
    let Some(deployment) = Deployment::create().await else {
        return;
    };
    // One at a time, so that no init competes with another for the CPU.
    let hello = RunningFunction::start("hello-lambda", &deployment.env).await;
    let token = RunningFunction::start("token", &deployment.env).await;
    let exchange = RunningFunction::start("exchange", &deployment.env).await;
    let company = RunningFunction::start("company-authtoken", &deployment.env).await;

    // The baseline: the runtime and one item read (a 500 if the read failed).
    let event = http_api_event("/hello", "none", None);
    let (greeting, hello_first) = hello.invoke(event).await;
    assert_eq!(greeting.status, 200, "hello-lambda: {}", greeting.body);
    assert_eq!(greeting.body, "hello");

    // token: an application token.
    let grant = [("grant_type", "client_credentials")];
    let event = http_api_event("/v0/token", &deployment.basic(), Some(&grant));
    let (app, token_first) = token.invoke(event).await;
    assert_eq!(app.status, 200, "client_credentials: {}", app.body);
    assert!(is_jwt(&app.body["access_token"]), "{}", app.body);
    assert_eq!(app.body["token_type"], "Bearer");
    assert_eq!(app.body["principal_type"], "application");
    assert_eq!(app.body["id"], deployment.client_id.as_str());
    assert!(app.body.get("refresh_token").is_none(), "{}", app.body);
    let app_token = app.body["access_token"].as_str().unwrap();

    // exchange: the imported old token becomes a family of the administrator's.
    let path = format!(
        "/appmgmt/v0/legacyApps/{}/exchangeRefreshToken/me",
        deployment.consumer_key
    );
    let form = [
        ("token", deployment.old_token.as_str()),
        ("secret", &deployment.client_secret),
    ];
    let event = http_api_event(&path, &format!("Bearer {app_token}"), Some(&form));
    let (exchanged, exchange_first) = exchange.invoke(event).await;
    assert_eq!(exchanged.status, 200, "exchange: {}", exchanged.body);
    assert_eq!(exchanged.body["code"], "OK");
    assert!(is_jwt(&exchanged.body["accessToken"]), "{}", exchanged.body);
    assert!(exchanged.body["refreshToken"]
        .as_str()
        .is_some_and(|t| !t.is_empty()));
    assert_eq!(exchanged.body["principalType"], "user");
    assert_eq!(exchanged.body["id"], deployment.admin_id.as_str());

    // company-authtoken: the administrator's user token, then the company's auth token.
    let grant = [
        ("grant_type", "password"),
        ("username", ADMIN_LOGIN),
        ("password", ADMIN_PASSWORD),
    ];
    let event = http_api_event("/v0/token", &deployment.basic(), Some(&grant));
    let (user, _) = token.invoke(event).await;
    assert_eq!(user.status, 200, "password grant: {}", user.body);
    assert!(is_jwt(&user.body["access_token"]), "{}", user.body);
    assert_eq!(user.body["principal_type"], "user");
    assert_eq!(user.body["id"], deployment.admin_id.as_str());
    let user_token = user.body["access_token"].as_str().unwrap();
    let path = format!(
        "/profile-service/v1/keys/principals/{}/authtoken/",
        deployment.company_id
    );
    let form = [("client_id", deployment.client_id.as_str())];
    let event = http_api_event(&path, &format!("Bearer {user_token}"), Some(&form));
    let (issued, company_first) = company.invoke(event).await;
    assert_eq!(issued.status, 200, "company auth token: {}", issued.body);
    assert_eq!(issued.body["status"], "PASS");
    assert_eq!(issued.body["code"], 0);
    assert!(issued.body["token"].as_str().is_some_and(|t| !t.is_empty()));

    let secrets = [
        deployment.client_secret.as_str(),
        ADMIN_PASSWORD,
        app_token,
        user_token,
        deployment.old_token.as_str(),
    ];
    assert_metrics_written(&token, &secrets);

    report_cold_starts(&[
        (&hello, hello_first),
        (&token, token_first),
        (&exchange, exchange_first),
        (&company, company_first),
    ]);
}

/// With `OTEL_EXPORTER_OTLP_ENDPOINT` set, the token function exports its spans to the OTLP
/// receiver before it answers: the request span with the correlation id the caller sent, and
/// the store's calls (the SDK's DynamoDB operation spans) in the same trace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn the_token_function_exports_the_request_span_with_its_correlation_id() {
    let Some(deployment) = Deployment::create().await else {
        return;
    };
    let receiver = OtlpReceiver::start().await;
    let extra = [("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint.as_str())];
    let token = RunningFunction::start_with("token", &deployment.env, &extra).await;
    let correlation_id = format!("trace-test-{}", uuid::Uuid::new_v4());
    let grant = [("grant_type", "client_credentials")];
    let mut event = http_api_event("/v0/token", &deployment.basic(), Some(&grant));
    event["headers"]["x-correlation-id"] = json!(correlation_id);
    let (answer, _) = token.invoke(event).await;
    assert_eq!(answer.status, 200, "client_credentials: {}", answer.body);

    let request = receiver
        .wait_for(Duration::from_secs(10), |span| {
            span.name == "request" && attribute(span, "correlation_id") == Some(&correlation_id)
        })
        .await
        .unwrap_or_else(|| {
            let names: Vec<String> = receiver.spans().iter().map(|s| s.name.clone()).collect();
            panic!(
                "no request span with the correlation id; received {names:?}\n{}",
                token.output()
            )
        });
    assert_eq!(
        attribute(&request, "grant_type"),
        Some("client_credentials")
    );
    assert_eq!(attribute(&request, "path"), Some("/v0/token"));
    let spans = receiver.spans();
    let store_calls: Vec<&str> = spans
        .iter()
        .filter(|s| s.trace_id == request.trace_id && s.name.starts_with("DynamoDB."))
        .map(|s| s.name.as_str())
        .collect();
    assert!(
        !store_calls.is_empty(),
        "no store call in the request's trace: {spans:?}"
    );
    let secret = deployment.client_secret.as_str();
    let access_token = answer.body["access_token"].as_str().unwrap();
    for span in &spans {
        let text = format!("{span:?}");
        assert!(
            !text.contains(secret) && !text.contains(access_token),
            "a secret in {text}"
        );
    }
}

/// The token function wrote its metrics as CloudWatch embedded metric format lines on stdout,
/// one per label set, after its invocations: the cold start, and the two token requests by
/// grant. No metric line holds a secret of the requests.
fn assert_metrics_written(token: &RunningFunction, secrets: &[&str]) {
    let output = token.output();
    let lines: Vec<Value> = output
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|line| line.get("_aws").is_some())
        .collect();
    for line in &lines {
        let directive = &line["_aws"]["CloudWatchMetrics"][0];
        assert_eq!(directive["Namespace"], "TokenService", "{line}");
        assert!(line["_aws"]["Timestamp"].is_u64(), "{line}");
        for set in directive["Dimensions"].as_array().expect("Dimensions") {
            for name in set.as_array().expect("a dimension set") {
                assert!(line[name.as_str().unwrap()].is_string(), "{line}");
            }
        }
        for metric in directive["Metrics"].as_array().expect("Metrics") {
            assert!(!line[metric["Name"].as_str().unwrap()].is_null(), "{line}");
        }
        assert_eq!(line["function"], "token", "{line}");
        for (i, secret) in secrets.iter().enumerate() {
            assert!(
                !line.to_string().contains(secret),
                "secret #{i} in a metric line"
            );
        }
    }
    let requests = |grant: &str| -> u64 {
        lines
            .iter()
            .filter(|l| l["endpoint"] == "/v0/token" && l["grant"] == grant)
            .filter_map(|l| l["requests_total"].as_u64())
            .sum()
    };
    assert_eq!(requests("client_credentials"), 1, "{output}");
    assert_eq!(requests("password"), 1, "{output}");
    let cold_starts: u64 = lines
        .iter()
        .filter_map(|l| l["cold_starts_total"].as_u64())
        .sum();
    assert_eq!(cold_starts, 1, "{output}");
}

/// Straight to the stderr handle, not `eprintln!`, which the harness hides for passing tests: the
/// figures are wanted from every run (docs/benchmarks.md records them). `infra/bench.sh` parses the
/// lines below the heading, so their shape is kept.
fn report_cold_starts(functions: &[(&RunningFunction, Duration)]) {
    let mut lines = format!(
        "\ncold starts (binaries in {}, DynamoDB Local):\n",
        function::binaries_dir().display()
    );
    for (function, first_request) in functions {
        lines += &format!(
            "  {:<18} init {:>7.1} ms   first request {:>7.1} ms\n",
            function.name,
            function.init.as_secs_f64() * 1000.0,
            first_request.as_secs_f64() * 1000.0,
        );
    }
    let _ = std::io::stderr().write_all(lines.as_bytes());
}

/// An API Gateway HTTP API (payload 2.0) event, shaped like the fixtures in
/// `tests/fixtures/apigw/`, with a form body when `form` is given.
pub(crate) fn http_api_event(
    path: &str,
    authorization: &str,
    form: Option<&[(&str, &str)]>,
) -> Value {
    let mut headers = json!({
        "host": "abc123.execute-api.us-east-1.amazonaws.com",
        "user-agent": "lambda-runtime-test",
        "x-forwarded-proto": "https",
        "authorization": authorization,
    });
    let body = form.map(|pairs| {
        headers["content-type"] = json!("application/x-www-form-urlencoded");
        serde_urlencoded::to_string(pairs).unwrap()
    });
    json!({
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": path,
        "rawQueryString": "",
        "headers": headers,
        "requestContext": {
            "accountId": "123456789012",
            "apiId": "abc123",
            "domainName": "abc123.execute-api.us-east-1.amazonaws.com",
            "domainPrefix": "abc123",
            "http": {
                "method": "POST",
                "path": path,
                "protocol": "HTTP/1.1",
                "sourceIp": "198.51.100.7",
                "userAgent": "lambda-runtime-test"
            },
            "requestId": uuid::Uuid::new_v4().to_string(),
            "routeKey": "$default",
            "stage": "$default",
            "time": "22/Nov/2026:02:00:00 +0000",
            "timeEpoch": 1795312800000u64
        },
        "isBase64Encoded": false,
        "body": body,
    })
}
