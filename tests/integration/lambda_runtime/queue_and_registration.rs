//! The two functions no other suite starts as binaries, as Lambda runs them over DynamoDB Local:
//!
//! - `registration` gets the API Gateway event of a public client's registration
//!   (`tests/fixtures/apigw/register_public_client.json`) and its RFC 7592 read;
//! - `logout-delivery` gets an SQS event as the event source hands it over: one delivery the
//!   client accepts, one it refuses (offered again: a batch item failure) and one message nobody
//!   can read (left for the dead-letter queue); the accepted one is audited in the table.

use reqwest::StatusCode;
use serde_json::{json, Value};
use token_domain::audit::{AuditKind, AuditSubject};
use token_domain::clock::{Clock, SystemClock};
use token_domain::random::OsRandom;
use token_domain::ClientId;
use token_store::{AuditQuery, Store};

use super::function::{FunctionEnv, RunningFunction};
use crate::support::logout_receiver::LogoutReceiver;

/// A fresh table and a data directory with signing keys, as a deployment has them.
async fn environment(prefix: &str) -> Option<(token_store::dynamodb::DynamoStore, FunctionEnv)> {
    let store = crate::support::dynamodb::fresh_table().await?;
    let env = FunctionEnv {
        endpoint: crate::support::dynamodb::endpoint()?,
        table_name: store.table_name().to_owned(),
        data_dir: tempfile::Builder::new().prefix(prefix).tempdir().unwrap(),
    };
    token_core::signing::rotate_local(env.data_dir.path(), &OsRandom, &SystemClock).unwrap();
    Some((store, env))
}

fn fixture(name: &str) -> Value {
    let path = format!("{}/fixtures/apigw/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn the_registration_binary_registers_a_client_and_reads_it_back() {
    let Some((store, env)) = environment("registration-").await else {
        return;
    };
    let function =
        RunningFunction::start_with("registration", &env, &[("DYNAMIC_REGISTRATION", "open")])
            .await;
    let (registered, _) = function
        .invoke(fixture("register_public_client.json"))
        .await;
    assert_eq!(registered.status, 201, "{}", registered.body);
    let body = &registered.body;
    assert_eq!(body["client_name"], "fixture agent");
    assert_eq!(body["token_endpoint_auth_method"], "none");
    let id = ClientId::parse(body["client_id"].as_str().unwrap()).unwrap();
    let stored = store.clients().get_client(&id).await.unwrap();
    assert!(stored.is_some_and(|c| c.enabled), "stored in the table");

    // RFC 7592: the client's own configuration, with its registration access token.
    let uri = body["registration_client_uri"].as_str().unwrap();
    let path = &uri[uri.find("/oauth2/").expect("a path under /oauth2")..];
    let token = body["registration_access_token"].as_str().unwrap();
    let mut read = crate::lambda_runtime::http_api_event(path, &format!("Bearer {token}"), None);
    read["requestContext"]["http"]["method"] = json!("GET");
    let (configuration, _) = function.invoke(read).await;
    assert_eq!(configuration.status, 200, "{}", configuration.body);
    assert_eq!(configuration.body["client_id"], body["client_id"]);

    let mut unauthenticated = crate::lambda_runtime::http_api_event(path, "Bearer wrong", None);
    unauthenticated["requestContext"]["http"]["method"] = json!("GET");
    let (refused, _) = function.invoke(unauthenticated).await;
    assert_eq!(refused.status, 401, "{}", refused.body);
}

/// An SQS record as the event source hands it over (its first receipt).
fn record(id: &str, body: String) -> Value {
    json!({
        "messageId": id,
        "receiptHandle": format!("handle-{id}"),
        "body": body,
        "attributes": {"ApproximateReceiveCount": "1"},
        "messageAttributes": {},
        "eventSource": "aws:sqs",
        "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:logout-deliveries",
        "awsRegion": "us-east-1",
    })
}

fn delivery(client: &ClientId, uri: String, logout_token: &str) -> String {
    json!({
        "client_id": client.to_string(),
        "principal_id": uuid::Uuid::new_v4().to_string(),
        "sid": "lambda-runtime-session",
        "uri": uri,
        "logout_token": logout_token,
    })
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn the_logout_delivery_binary_delivers_and_reports_what_to_offer_again() {
    let Some((store, env)) = environment("logout-delivery-").await else {
        return;
    };
    let accepting = LogoutReceiver::start(StatusCode::OK, None).await;
    let refusing = LogoutReceiver::start(StatusCode::SERVICE_UNAVAILABLE, None).await;
    let allowed = format!("{},{}", accepting.host_port, refusing.host_port);
    let function = RunningFunction::start_with(
        "logout-delivery",
        &env,
        &[("CLIENT_ID_METADATA_ALLOW_HOSTS", allowed.as_str())],
    )
    .await;
    let delivered = ClientId::parse(&uuid::Uuid::new_v4().to_string()).unwrap();
    let retried = ClientId::parse(&uuid::Uuid::new_v4().to_string()).unwrap();
    let event = json!({"Records": [
        record("accepted", delivery(&delivered, accepting.url("/bcl"), "token-accepted")),
        record("refused", delivery(&retried, refusing.url("/bcl"), "token-refused")),
        record("unreadable", "not a delivery".to_owned()),
    ]});
    let (answer, _) = function.invoke_raw(event).await;
    let mut offered_again: Vec<&str> = answer["batchItemFailures"]
        .as_array()
        .unwrap_or_else(|| panic!("a batch response: {answer}"))
        .iter()
        .map(|failure| failure["itemIdentifier"].as_str().unwrap())
        .collect();
    offered_again.sort_unstable();
    assert_eq!(offered_again, ["refused", "unreadable"], "{answer}");
    let received = accepting.received();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].logout_token(), "token-accepted");
    assert_eq!(refusing.received().len(), 1, "one attempt per receipt");

    // Audited in the table: the delivery, on its first attempt; the retried one not yet.
    let audited = client_events(&store, delivered).await;
    assert!(
        matches!(
            &audited[..],
            [event] if matches!(event.kind, AuditKind::LogoutDelivered { attempts: 1, .. })
        ),
        "{audited:?}"
    );
    assert!(
        client_events(&store, retried).await.is_empty(),
        "offered again, not final"
    );
}

async fn client_events(
    store: &dyn Store,
    client: ClientId,
) -> Vec<token_domain::audit::AuditEvent> {
    store
        .audit()
        .audit_events(AuditQuery {
            subject: AuditSubject::Client(client),
            since: None,
            now: SystemClock.now(),
        })
        .await
        .unwrap()
}
