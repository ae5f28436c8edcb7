//! Lazily opened keys (docs/decisions.md, "Lazy start-up"): nothing read until asked, one read
//! for concurrent first callers, a failed read never kept.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use super::AccessTokenCodec;
use crate::clock::ManualClock;
use crate::domain::Geolocation;
use crate::signing::{SigningBackend, SigningError, SigningKeys, LOCAL_KEY_FILE};
use crate::store::signing_key_ring::{RingWrite, SigningKeyRingStore, VersionedRing};
use crate::store::{StoreError, StoreResult};
use token_store_conformance::records::user_access_token;

/// A ring store that holds no ring, counts its reads, takes a moment to answer (so that
/// concurrent callers overlap) and can be made to fail.
#[derive(Debug, Default)]
struct CountingRingStore {
    reads: AtomicUsize,
    down: AtomicBool,
}

#[async_trait]
impl SigningKeyRingStore for CountingRingStore {
    async fn load_signing_key_ring(&self) -> StoreResult<Option<VersionedRing>> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(20)).await;
        if self.down.load(Ordering::SeqCst) {
            return Err(StoreError::unavailable("the test's store is down"));
        }
        Ok(None)
    }

    async fn replace_signing_key_ring(&self, _: Option<u64>, _: &str) -> StoreResult<RingWrite> {
        Err(StoreError::unavailable("not written in these tests"))
    }
}

fn lazy_keys() -> (SigningKeys, Arc<CountingRingStore>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(CountingRingStore::default());
    let keys = SigningKeys::lazy(
        store.clone(),
        None,
        dir.path().to_owned(),
        SigningBackend::Local,
        Arc::new(ManualClock::new(1_700_000_000)),
    );
    (keys, store, dir)
}

#[tokio::test]
async fn lazy_keys_read_nothing_until_asked() {
    let (keys, store, dir) = lazy_keys();
    assert_eq!(store.reads.load(Ordering::SeqCst), 0);
    assert!(!keys.is_loaded());
    assert!(keys.snapshot().is_none());
    assert!(
        !dir.path().join(LOCAL_KEY_FILE).exists(),
        "the secret document is not read (here: created) before the first read"
    );
    // A codec can be built on keys not read yet, and signs once they are.
    let codec = AccessTokenCodec::new(
        keys.clone(),
        Geolocation::parse("https://us.api.example.com").unwrap(),
    );
    let record = user_access_token(1_700_000_000, "read");
    let token = codec.encode(&record).await.unwrap();
    assert!(keys.is_loaded());
    assert!(dir.path().join(LOCAL_KEY_FILE).exists());
    assert!(codec.decode(&token, 1_700_000_001).await.unwrap().is_ok());
    assert_eq!(store.reads.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_first_callers_share_one_read() {
    let (keys, store, _dir) = lazy_keys();
    let callers = (0..8).map(|i| {
        let keys = keys.clone();
        tokio::spawn(async move {
            match i % 3 {
                0 => keys
                    .for_signing()
                    .await
                    .map(|ring| ring.signing_kid().to_owned()),
                1 => keys
                    .for_verifying()
                    .await
                    .map(|ring| ring.signing_kid().to_owned()),
                _ => keys.derive_key("x").await.map(|_| String::new()),
            }
        })
    });
    let answers = futures::future::join_all(callers).await;
    for answer in answers {
        answer.unwrap().unwrap();
    }
    assert_eq!(
        store.reads.load(Ordering::SeqCst),
        1,
        "eight concurrent first callers, one store read"
    );
    keys.for_signing().await.unwrap();
    assert_eq!(store.reads.load(Ordering::SeqCst), 1, "then served as read");
}

#[tokio::test]
async fn a_failed_first_read_fails_its_waiting_callers_and_the_next_caller_reads_again() {
    let (keys, store, _dir) = lazy_keys();
    store.down.store(true, Ordering::SeqCst);
    // Four callers at once: one read, whose failure all four get (none queues a read of its own).
    let answers = futures::future::join_all((0..4).map(|_| keys.for_signing())).await;
    for answer in answers {
        let SigningError::Unavailable(message) = answer.unwrap_err();
        assert!(message.contains("signing key ring"), "{message}");
    }
    assert_eq!(store.reads.load(Ordering::SeqCst), 1);

    // Never kept: each later caller reads again.
    assert!(keys.for_verifying().await.is_err());
    assert!(keys.derive_key("x").await.is_err());
    assert!(keys.load().await.is_err());
    assert!(!keys.is_loaded());
    assert_eq!(
        store.reads.load(Ordering::SeqCst),
        4,
        "every later caller tried"
    );

    store.down.store(false, Ordering::SeqCst);
    keys.for_signing().await.unwrap();
    assert!(keys.is_loaded());
    assert_eq!(store.reads.load(Ordering::SeqCst), 5);
    keys.derive_key("x").await.unwrap();
    assert_eq!(store.reads.load(Ordering::SeqCst), 5);
}
