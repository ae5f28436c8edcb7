//! The cost of signing one access token: the local key (ES256 in process) beside KMS (one
//! `kms:Sign` per token) against the local KMS emulator at `KMS_ENDPOINT`. The emulator is a
//! local Python process: its latency is not AWS's (a regional KMS call is a network round trip,
//! typically milliseconds), so the KMS figure here is a lower bound of the overhead only.
//!
//!   KMS_ENDPOINT=$(infra/kms-local.sh start) cargo bench -p integration-tests --bench signing_cost

// The shared test support (tests/support/), compiled in: this package has no library
// (tests/Cargo.toml). Each target uses a part of it.
#[allow(dead_code, unused_imports)]
#[path = "../support/mod.rs"]
mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::signing_lifecycle as lifecycle;
use token_core::jwt::AccessTokenCodec;
use token_core::signing::{SigningBackend, SigningKeys};
use token_domain::clock::{Clock, ManualClock};
use token_domain::AccessTokenRecord;
use token_store::sqlite::SqliteStore;
use token_store::SigningKeyRingStore;
use token_store_conformance::records::user_access_token;

const TOKENS: usize = 300;

fn record(now: i64) -> AccessTokenRecord {
    user_access_token(now, "read write")
}

async fn codec(backend: SigningBackend) -> (AccessTokenCodec, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn SigningKeyRingStore> =
        Arc::new(SqliteStore::open_in_dir(dir.path()).unwrap());
    let clock = Arc::new(ManualClock::starting_now());
    let legacy = lifecycle::secret_only();
    lifecycle::rotate_once(store.as_ref(), &backend, &legacy, clock.now()).await;
    let keys = SigningKeys::open(store, legacy, backend, clock)
        .await
        .unwrap();
    (lifecycle::codec(keys), dir)
}

/// Median and 95th percentile of signing one token, sequentially.
async fn measure(codec: &AccessTokenCodec) -> (Duration, Duration) {
    let now = ManualClock::starting_now().now();
    let _ = codec.encode(&record(now)).await.unwrap(); // warm the connection
    let mut times = Vec::with_capacity(TOKENS);
    for _ in 0..TOKENS {
        let record = record(now);
        let started = Instant::now();
        codec.encode(&record).await.unwrap();
        times.push(started.elapsed());
    }
    times.sort();
    (times[TOKENS / 2], times[TOKENS * 95 / 100])
}

#[tokio::main]
async fn main() {
    let endpoint = std::env::var("KMS_ENDPOINT")
        .expect("KMS_ENDPOINT: start the emulator with `infra/kms-local.sh start`");
    let (local, _a) = codec(SigningBackend::Local).await;
    let kms =
        token_adapters::kms::connect(Some(&endpoint), &format!("bench-{}", uuid::Uuid::new_v4()))
            .await;
    let (remote, _b) = codec(SigningBackend::Kms(kms)).await;
    let (local_median, local_p95) = measure(&local).await;
    let (kms_median, kms_p95) = measure(&remote).await;
    println!("signing one access token, {TOKENS} tokens each, sequential:");
    println!("  local key:          median {local_median:>10.2?}  p95 {local_p95:>10.2?}");
    println!("  KMS (local moto):   median {kms_median:>10.2?}  p95 {kms_p95:>10.2?}");
    println!("The emulator runs on this machine: AWS KMS adds a network round trip on top.");
}
