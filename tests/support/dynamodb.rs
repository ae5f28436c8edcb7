//! DynamoDB Local test stores: a fresh table per test on the emulator the test command started.
//!
//! `infra/test.sh` starts DynamoDB Local and sets `DYNAMODB_ENDPOINT`. Without it these suites
//! fail, so that a missing emulator can never pass for a green run; a developer without Java may
//! opt out explicitly with `SKIP_DYNAMODB=1`, which is refused in CI.

use std::io::Write;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use token_store::dynamodb::DynamoStore;
use token_store::Store;

pub const ENDPOINT_VAR: &str = "DYNAMODB_ENDPOINT";
pub const SKIPPED: &str = "SKIPPED: DynamoDB suite (SKIP_DYNAMODB=1)";

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The DynamoDB Local endpoint, or `None` when the developer opted out (after saying so on
/// stderr, which the test harness shows). Panics when neither, and always in CI.
pub fn endpoint() -> Option<String> {
    if let Some(endpoint) = env(ENDPOINT_VAR) {
        return Some(endpoint);
    }
    let in_ci = env("CI").is_some_and(|v| v != "false" && v != "0");
    if !in_ci && env("SKIP_DYNAMODB").as_deref() == Some("1") {
        // Straight to the stderr handle, not `eprintln!`, which the test harness captures and
        // hides for passing tests; once per run is loud enough.
        static SAID: std::sync::Once = std::sync::Once::new();
        SAID.call_once(|| {
            let _ = writeln!(std::io::stderr(), "\n{SKIPPED}\n");
        });
        return None;
    }
    panic!(
        "{ENDPOINT_VAR} is not set, so there is no DynamoDB Local to test against.\n\
         Run the project's test command, which starts one:  infra/test.sh\n\
         or start one yourself:  export {ENDPOINT_VAR}=$(infra/dynamodb-local.sh start)\n\
         (to leave the DynamoDB suites out locally: SKIP_DYNAMODB=1; never honoured in CI)"
    );
}

/// A table name no other test (or earlier run on the same emulator) uses.
pub fn unique_table_name() -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!(
        "test-{}-{nanos}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// A store on a new table on DynamoDB Local, created as production creates it
/// (`create_table_if_missing`, TTL included). `None` when the suite is skipped.
///
/// The concrete type gives access to the raw client (`client()`, `table_name()`) for checks on
/// stored items; `token_store::dynamodb::sdk` names the SDK's types.
pub async fn fresh_table() -> Option<DynamoStore> {
    let endpoint = endpoint()?;
    let store = DynamoStore::connect(&unique_table_name(), Some(&endpoint)).await;
    store
        .create_table_if_missing()
        .await
        .unwrap_or_else(|e| panic!("create a test table on DynamoDB Local at {endpoint}: {e}"));
    Some(store)
}

/// A fresh table per test as the app's store, or `None` (after the skip line) when the
/// developer opted out with `SKIP_DYNAMODB=1`. The conformance suite takes [`fresh_table`].
pub async fn make_store() -> Option<Arc<dyn Store>> {
    fresh_table()
        .await
        .map(|store| Arc::new(store) as Arc<dyn Store>)
}
