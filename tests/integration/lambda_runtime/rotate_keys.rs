//! The scheduled key rotation function (`functions/rotate-keys`) as Lambda runs it: the built
//! binary under the test's Runtime API, over DynamoDB Local, invoked with the event an
//! EventBridge schedule sends (`tests/fixtures/eventbridge/scheduled_rotation.json`). Two
//! instances invoked at once rotate the ring once: the write is conditional on the ring's
//! version, and the loser finds the new `next` key too recent.
//!
//! Around it, the token function's cold start before and after the ring is stored (the key
//! ring's read is part of every function's init); the figures are printed, as the other cold
//! starts are (docs/benchmarks.md).

use std::io::Write;
use std::time::Duration;

use serde_json::Value;
use token_core::signing::ring::{KeyState, RingDocument, MIN_NEXT_SECONDS};
use token_core::signing::{self, rotation, KeyRingDocument, SigningBackend};
use token_domain::clock::{Clock, SystemClock};
use token_domain::random::OsRandom;
use token_store::SigningKeyRingStore;

use super::function::{FunctionEnv, RunningFunction};

fn scheduled_event() -> Value {
    let path = format!(
        "{}/fixtures/eventbridge/scheduled_rotation.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

async fn stored_ring(store: &dyn SigningKeyRingStore) -> (u64, RingDocument) {
    let stored = store
        .load_signing_key_ring()
        .await
        .unwrap()
        .expect("a stored ring");
    // Stored with its MAC: `{"ring": "<the ring's JSON>", "mac": ...}`.
    let document: Value = serde_json::from_str(&stored.document).unwrap();
    assert!(document["mac"].is_string(), "{document}");
    let ring = document["ring"].as_str().expect("the ring's JSON");
    (stored.version, serde_json::from_str(ring).unwrap())
}

fn kid_in(ring: &RingDocument, state: KeyState) -> Vec<String> {
    ring.keys
        .iter()
        .filter(|k| k.state == state)
        .map(|k| k.kid.clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn the_rotation_binary_rotates_the_stored_ring_once_when_run_twice_at_once() {
    let Some(store) = crate::support::dynamodb::fresh_table().await else {
        return;
    };
    let env = FunctionEnv {
        endpoint: crate::support::dynamodb::endpoint().unwrap(),
        table_name: store.table_name().to_owned(),
        data_dir: tempfile::Builder::new()
            .prefix("rotate-keys-")
            .tempdir()
            .unwrap(),
    };
    signing::rotate_local(env.data_dir.path(), &OsRandom, &SystemClock).unwrap();
    let before_ring = RunningFunction::start("token", &env).await;
    before_ring.wait_for_output(RING_READ_AFTER_INIT).await;
    let (before_ring_lines, before_ring_init) = (before_ring.output(), before_ring.init);
    drop(before_ring);

    // The first rotation (migrating the secret document, publishing a next key) as if it ran
    // long enough ago for the next key to be due.
    let legacy = KeyRingDocument::load(None, env.data_dir.path())
        .await
        .unwrap();
    let factory = SigningBackend::Local.factory(&legacy.server_secret().unwrap());
    let long_ago = SystemClock.now() - MIN_NEXT_SECONDS - 60;
    rotation::rotate(&store, &factory, &legacy, long_ago)
        .await
        .unwrap();
    let (version, ring) = stored_ring(&store).await;
    let (active, next) = (
        kid_in(&ring, KeyState::Active),
        kid_in(&ring, KeyState::Next),
    );
    assert_eq!((active.len(), next.len()), (1, 1), "{:?}", ring.keys);

    let first = RunningFunction::start("rotate-keys", &env).await;
    let second = RunningFunction::start("rotate-keys", &env).await;
    let ((a, _), (b, _)) = tokio::join!(
        first.invoke_raw(scheduled_event()),
        second.invoke_raw(scheduled_event())
    );
    let mut outcomes = [
        a["result"]["outcome"].as_str().unwrap_or_default(),
        b["result"]["outcome"].as_str().unwrap_or_default(),
    ];
    outcomes.sort_unstable();
    assert_eq!(outcomes, ["not due", "rotated"], "{a}\n{b}");

    let (rotated_version, rotated) = stored_ring(&store).await;
    assert_eq!(
        rotated_version,
        version + 1,
        "one write: {:?}",
        rotated.keys
    );
    assert_eq!(
        kid_in(&rotated, KeyState::Active),
        next,
        "next became active"
    );
    assert_eq!(
        kid_in(&rotated, KeyState::Retired),
        active,
        "active retired"
    );
    let new_next = kid_in(&rotated, KeyState::Next);
    assert_eq!(new_next.len(), 1, "{:?}", rotated.keys);
    assert!(!active.contains(&new_next[0]) && !next.contains(&new_next[0]));
    assert_eq!(rotated.keys.len(), 3, "{:?}", rotated.keys);

    // Invoked again (a retried delivery): nothing is due, nothing changes.
    let (again, _) = first.invoke_raw(scheduled_event()).await;
    assert_eq!(again["result"]["outcome"], "not due", "{again}");
    assert_eq!(stored_ring(&store).await.0, rotated_version);

    let with_ring = RunningFunction::start("token", &env).await;
    with_ring.wait_for_output(RING_READ_AFTER_INIT).await;
    report_key_ring_reads(&[
        (
            "no stored ring (secret document)",
            &before_ring_lines,
            before_ring_init,
        ),
        (
            "stored ring, 3 sealed keys",
            &with_ring.output(),
            with_ring.init,
        ),
    ]);
}

/// The function's log line once its key ring's first read, started at the end of its init, is
/// done (docs/decisions.md, "Lazy start-up").
const RING_READ_AFTER_INIT: &str = "signing key ring read after init";

/// The token function's log line holding `message`, with its fields.
fn log_line(output: &str, message: &str) -> Value {
    let line = output
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|line| line.to_string().contains(message))
        .unwrap_or_default();
    if line["fields"].is_object() {
        line["fields"].clone()
    } else {
        line
    }
}

/// Straight to stderr, as the other cold starts are, for docs/benchmarks.md.
fn report_key_ring_reads(runs: &[(&str, &str, Duration)]) {
    let mut lines =
        "\nkey ring read by the token function, after its init (DynamoDB Local):\n".to_owned();
    for (what, output, init) in runs {
        let ready = log_line(output, "services ready");
        let ring = log_line(output, RING_READ_AFTER_INIT);
        lines += &format!(
            "  {what:<34} init {:>7.1} ms   of which store {:>6.1} ms; then signing keys {:>6.1} ms\n",
            init.as_secs_f64() * 1000.0,
            ready["store_ms"].as_f64().unwrap_or(f64::NAN),
            ring["signing_keys_ms"].as_f64().unwrap_or(f64::NAN)
        );
    }
    let _ = std::io::stderr().write_all(lines.as_bytes());
}
