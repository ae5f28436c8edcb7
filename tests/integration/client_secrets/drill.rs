//! The rotation drill: two instances of one app, each a request loop, start on secret A. A
//! secret B is added through the secrets API, one instance moves to B, the instance still on A
//! stops, A is revoked: no request of either loop fails. The service runs as two instances
//! (two servers over one store, each with its own read cache, as deployed), and each app
//! instance calls its own server, so the drill also covers a secret added on one server and
//! presented at the other while its cache still holds the client without it.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::app::{fresh_store, AppOptions, Backend, TestApp, TestClient};
use crate::support::assertions::assert_token_error;
use reqwest::StatusCode;

use super::{api, with_secret};

const READ_CACHE_SECONDS: u64 = 5;

/// One app instance: a loop of `client_credentials` with whatever secret it is configured with.
struct Instance {
    secret: Mutex<String>,
    stop: AtomicBool,
    ok: AtomicUsize,
    failures: Mutex<Vec<String>>,
}

impl Instance {
    fn start(server: Arc<TestApp>, client: TestClient) -> (Arc<Self>, tokio::task::JoinHandle<()>) {
        let instance = Arc::new(Self {
            secret: Mutex::new(client.secret.clone()),
            stop: AtomicBool::new(false),
            ok: AtomicUsize::new(0),
            failures: Mutex::default(),
        });
        let running = instance.clone();
        let handle = tokio::spawn(async move {
            while !running.stop.load(Ordering::SeqCst) {
                let secret = running.secret.lock().unwrap().clone();
                let (status, body) = with_secret(&server, &client, &secret).await;
                if status == StatusCode::OK {
                    running.ok.fetch_add(1, Ordering::SeqCst);
                } else {
                    running
                        .failures
                        .lock()
                        .unwrap()
                        .push(format!("{status} {body}"));
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        });
        (instance, handle)
    }

    /// Waits until `more` requests have succeeded since now.
    async fn served(&self, more: usize) {
        let target = self.ok.load(Ordering::SeqCst) + more;
        for _ in 0..2000 {
            if self.ok.load(Ordering::SeqCst) >= target || !self.failures.lock().unwrap().is_empty()
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        panic!("the loop did not make progress");
    }
}

pub async fn rotation_without_a_failed_request(backend: Backend) {
    let Some((store, _data)) = fresh_store(backend).await else {
        return;
    };
    let serve = || {
        TestApp::with_read_cache(
            store.clone(),
            backend,
            AppOptions::default(),
            READ_CACHE_SECONDS,
        )
    };
    let (one, two) = (Arc::new(serve().await), Arc::new(serve().await));
    let client = one.create_client("read").await;
    let secret_a = client.secret.clone();

    let (first, first_loop) = Instance::start(one.clone(), client.clone());
    let (second, second_loop) = Instance::start(two.clone(), client.clone());
    first.served(5).await;
    second.served(5).await;

    // Add B through the API, with a token the app obtained with A.
    let token = one.secrets_token(&client).await;
    let (status, added) = api::add(&one, &client.id, Some(&token), None).await;
    assert_eq!(status, StatusCode::CREATED, "{added}");
    let secret_b = added["client_secret"].as_str().unwrap().to_owned();
    // The second instance deploys B (its server still caches the client as it was before B).
    second.secret.lock().unwrap().clone_from(&secret_b);
    second.served(5).await;
    first.served(5).await;

    // The first instance, still on A, is retired; then A is revoked.
    first.stop.store(true, Ordering::SeqCst);
    first_loop.await.unwrap();
    let listed = api::list(&one, &client.id, Some(&token)).await.1;
    let id_a = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["secret_id"] != added["secret_id"])
        .unwrap()["secret_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, body) = api::revoke(&one, &client.id, &id_a, Some(&token)).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    second.served(10).await;
    second.stop.store(true, Ordering::SeqCst);
    second_loop.await.unwrap();

    for instance in [&first, &second] {
        let failures = instance.failures.lock().unwrap();
        assert!(failures.is_empty(), "failed requests: {failures:?}");
    }
    assert!(first.ok.load(Ordering::SeqCst) >= 10);
    assert!(second.ok.load(Ordering::SeqCst) >= 20);

    // A is refused at once where it was revoked, and everywhere within the cache's bound.
    assert_token_error(
        &with_secret(&one, &client, &secret_a).await,
        401,
        "invalid_client",
        64,
    );
    two.clock.advance(READ_CACHE_SECONDS as i64);
    assert_token_error(
        &with_secret(&two, &client, &secret_a).await,
        401,
        "invalid_client",
        64,
    );
    assert_eq!(
        with_secret(&two, &client, &secret_b).await.0,
        StatusCode::OK
    );
}
