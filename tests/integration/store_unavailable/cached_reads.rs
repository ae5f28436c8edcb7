//! With the read cache the functions run with (`READ_CACHE_SECONDS`, here 5), reads the cache
//! holds (clients) are answered during an outage, but nothing that writes is: the cache never
//! turns a failed write into a success.

use std::sync::Arc;

use crate::support::app::{json_of, AppOptions, Backend, TestApp};
use crate::support::ddb_proxy::{DdbProxy, Fault};
use reqwest::StatusCode;

use super::assert_unavailable;
use crate::authorize::flow::{code_client, query, Session};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn cached_clients_are_read_but_writes_still_answer_503() {
    let Some((proxy, store)) = DdbProxy::start_with_fresh_table().await else {
        return;
    };
    let app =
        TestApp::with_read_cache(Arc::new(store), Backend::DynamoDb, AppOptions::default(), 5)
            .await;
    let client = code_client(&app).await;
    let token_request = || {
        app.http.post(app.url("/v0/token")).form(&[
            ("grant_type", "client_credentials"),
            ("client_id", client.id.as_str()),
            ("client_secret", client.secret.as_str()),
        ])
    };
    let query = query(&client, &[]);
    let mut session = Session::new(&app);
    // Both read the client, so it is cached.
    assert_eq!(session.open(&query).await.status(), StatusCode::OK);
    assert_eq!(
        json_of(token_request().send().await.unwrap()).await.0,
        StatusCode::OK
    );

    proxy.inject(Fault::RefuseConnections);
    assert_eq!(
        session.open(&query).await.status(),
        StatusCode::OK,
        "from the cache"
    );
    let refused = token_request().send().await.unwrap();
    proxy.clear_fault();
    assert_unavailable("client_credentials, client cached", refused).await;
    assert_eq!(
        json_of(token_request().send().await.unwrap()).await.0,
        StatusCode::OK
    );
}
