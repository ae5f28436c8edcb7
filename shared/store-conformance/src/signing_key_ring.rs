//! The signing key ring's versioned document: first write, conditional replacement, and one
//! winner among concurrent writers. Over [`SigningKeyRingStore`] alone, which [`Store`] does not
//! include, so each backend's tests call these directly (on a fresh store: the ring is one item
//! per table).
//!
//! [`Store`]: crate::store::Store

use crate::store::{RingWrite, SigningKeyRingStore, VersionedRing};

pub async fn signing_key_ring_writes_are_conditional_on_the_version(
    store: &dyn SigningKeyRingStore,
) {
    assert_eq!(store.load_signing_key_ring().await.unwrap(), None);
    let write = |expected, doc: &'static str| store.replace_signing_key_ring(expected, doc);
    assert_eq!(
        write(None, "one").await.unwrap(),
        RingWrite::Written { version: 1 }
    );
    assert_eq!(
        write(None, "other").await.unwrap(),
        RingWrite::Conflict,
        "a first write when a ring exists must lose"
    );
    assert_eq!(
        write(Some(1), "two").await.unwrap(),
        RingWrite::Written { version: 2 }
    );
    assert_eq!(
        write(Some(1), "stale").await.unwrap(),
        RingWrite::Conflict,
        "a write naming an old version must lose"
    );
    assert_eq!(
        store.load_signing_key_ring().await.unwrap(),
        Some(VersionedRing {
            version: 2,
            document: "two".to_owned()
        })
    );
}

pub async fn concurrent_signing_key_ring_writes_have_one_winner(store: &dyn SigningKeyRingStore) {
    store.replace_signing_key_ring(None, "base").await.unwrap();
    let writers = (0..8).map(|i| async move {
        let document = format!("writer {i}");
        (
            store
                .replace_signing_key_ring(Some(1), &document)
                .await
                .unwrap(),
            document,
        )
    });
    let outcomes = futures::future::join_all(writers).await;
    let winners: Vec<&String> = outcomes
        .iter()
        .filter(|(w, _)| *w == RingWrite::Written { version: 2 })
        .map(|(_, d)| d)
        .collect();
    assert_eq!(winners.len(), 1, "{outcomes:?}");
    let stored = store.load_signing_key_ring().await.unwrap().unwrap();
    assert_eq!((stored.version, &stored.document), (2, winners[0]));
}
