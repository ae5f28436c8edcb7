//! The functions start without network reads (docs/decisions.md, "Lazy start-up"): their init
//! builds configuration and clients; the key ring's first read runs after it, and the first
//! request that needs the ring waits for it. A store that does not answer at start does not
//! fail the init: the requests that need the ring answer 503 until it answers, and then the same
//! instance serves, without a restart.

use crate::support::jwks_check::assert_signed_by_jwks;
use crate::support::tcp_fault::SilentRelay;
use serde_json::{json, Value};

use super::function::RunningFunction;
use super::{http_api_event, Deployment};

fn jwks_event() -> Value {
    let mut event = http_api_event("/v0/token/jwks", "none", None);
    event["requestContext"]["http"]["method"] = json!("GET");
    event
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn a_function_started_while_its_store_does_not_answer_serves_once_it_does() {
    let Some(deployment) = Deployment::create().await else {
        return;
    };
    let relay = SilentRelay::start(&deployment.env.endpoint).await;
    relay.go_silent();
    let endpoint = relay.url();
    let extra = [("DYNAMODB_ENDPOINT", endpoint.as_str())];
    // Returns once the function polls for its first event: the init succeeded.
    let token = RunningFunction::start_with("token", &deployment.env, &extra).await;

    let (jwks, _) = token.invoke(jwks_event()).await;
    assert_eq!(jwks.status, 503, "{}", jwks.body);
    assert_eq!(
        jwks.body["error"], "temporarily_unavailable",
        "{}",
        jwks.body
    );
    assert!(
        jwks.body["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{}",
        jwks.body
    );
    let grant = [("grant_type", "client_credentials")];
    let event = http_api_event("/v0/token", &deployment.basic(), Some(&grant));
    let (refused, _) = token.invoke(event.clone()).await;
    assert_eq!(refused.status, 503, "{}", refused.body);
    assert_eq!(refused.body["error"], "temporarily_unavailable");

    // The store answers again: the same process reads the ring on the next request.
    relay.answer_again();
    let (jwks, _) = token.invoke(jwks_event()).await;
    assert_eq!(jwks.status, 200, "{}", jwks.body);
    let (issued, _) = token.invoke(event).await;
    assert_eq!(issued.status, 200, "{}", issued.body);
    assert_signed_by_jwks(issued.body["access_token"].as_str().unwrap(), &jwks.body);
    let output = token.output();
    assert!(
        output.contains("signing key ring not read after init"),
        "the failed read after init is logged: {output}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn the_first_request_after_init_gets_a_token_that_verifies_against_the_jwks() {
    let Some(deployment) = Deployment::create().await else {
        return;
    };
    let token = RunningFunction::start("token", &deployment.env).await;
    let grant = [("grant_type", "client_credentials")];
    let event = http_api_event("/v0/token", &deployment.basic(), Some(&grant));
    let (issued, _) = token.invoke(event).await;
    assert_eq!(issued.status, 200, "{}", issued.body);
    let (jwks, _) = token.invoke(jwks_event()).await;
    assert_eq!(jwks.status, 200, "{}", jwks.body);
    assert_signed_by_jwks(issued.body["access_token"].as_str().unwrap(), &jwks.body);
    let ready = token.wait_for_output("services ready").await;
    assert!(ready.contains("read after init"), "{ready}");
    token
        .wait_for_output("signing key ring read after init")
        .await;
}

/// The local server keeps reading the ring at start: with `SIGNING_KEYS=kms` and no stored ring
/// it refuses to start and says what to run (a start-up error is clearer there than a 503 on
/// every request). The KMS endpoint is never called: the missing ring is found first.
#[test]
fn the_local_server_still_refuses_to_start_without_a_kms_ring() {
    let binary = super::function::binaries_dir().join("token-service");
    assert!(
        binary.is_file(),
        "{} is missing: run `cargo build --workspace --bins` first",
        binary.display()
    );
    let data_dir = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(&binary)
        .env_clear()
        .env("STORE", "sqlite")
        .env("DATA_DIR", data_dir.path())
        .env("PORT", "0")
        .env("SIGNING_KEYS", "kms")
        .env("KMS_ENDPOINT", "http://127.0.0.1:9")
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ACCESS_KEY_ID", "local")
        .env("AWS_SECRET_ACCESS_KEY", "local")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!output.status.success(), "{text}");
    assert!(text.contains("tokenctl keys rotate"), "{text}");
}
