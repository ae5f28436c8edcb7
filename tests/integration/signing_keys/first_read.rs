//! The key ring's first read in a Lambda function's start (`Readiness::OnFirstRingRead`) with
//! `DYNAMODB_ENDPOINT`: the read goes first, as deployed, and the table is checked (created if
//! missing) only when the read is refused. Counted through the test proxy.

use token_store::{open_with_ring, Readiness, StoreKind, StoreLocation};

use crate::support::ddb_proxy::DdbProxy;
use crate::support::dynamodb::unique_table_name;

fn location(proxy: &DdbProxy, table_name: String) -> StoreLocation {
    StoreLocation {
        kind: StoreKind::DynamoDb,
        data_dir: std::env::temp_dir(),
        table_name,
        dynamodb_endpoint: Some(proxy.url().to_owned()),
    }
}

/// On a table that exists, the first read is one `GetItem`: no table check before it, the
/// calls a cold start's first request would otherwise wait for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn on_a_table_that_exists_the_first_read_is_one_get_item() {
    let Some((proxy, store)) = DdbProxy::start_with_fresh_table().await else {
        return;
    };
    let (_, ring) = open_with_ring(
        &location(&proxy, store.table_name().to_owned()),
        Readiness::OnFirstRingRead,
    )
    .await
    .unwrap();
    proxy.take_calls();
    assert_eq!(ring.load_signing_key_ring().await.unwrap(), None);
    let calls = proxy.take_calls();
    assert_eq!(calls.total(), 1, "{:?}", calls.by_operation());
    assert_eq!(calls.count("GetItem"), 1);
}

/// On a table that does not exist yet, the refused read creates it and reads again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn a_missing_table_is_created_by_the_first_read() {
    let Some(proxy) = DdbProxy::start().await else {
        return;
    };
    let (_, ring) = open_with_ring(
        &location(&proxy, unique_table_name()),
        Readiness::OnFirstRingRead,
    )
    .await
    .unwrap();
    assert_eq!(ring.load_signing_key_ring().await.unwrap(), None);
    let calls = proxy.take_calls();
    assert_eq!(calls.count("CreateTable"), 1, "{:?}", calls.by_operation());
    assert_eq!(calls.count("GetItem"), 2, "refused, then read again");
    assert_eq!(ring.load_signing_key_ring().await.unwrap(), None);
    assert_eq!(proxy.take_calls().total(), 1, "checked once");
}
