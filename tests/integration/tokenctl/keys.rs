//! `keys rotate` and `keys list` on the stored signing key ring, starting from a data directory
//! whose key file has today's format (migrated by the first rotation); retired keys listed, then
//! removed once their tokens have all expired.

use std::sync::Arc;

use serde_json::Value;
use token_core::signing::ring::{Plan, MIN_NEXT_SECONDS, RETIRED_KEPT_SECONDS};
use token_core::signing::{rotation, KeyRingDocument, SigningBackend};
use token_domain::clock::{Clock, SystemClock};
use token_store::sqlite::SqliteStore;
use token_store::SigningKeyRingStore;

use super::output::str_field;
use super::target::{Backend, Target};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_rotate_migrates_the_local_key_file_then_publishes_a_next_key() {
    let t = Target::sqlite().await;

    // Before any rotation: the local key file's one key, as the first rotation will migrate it.
    let listed = t.json(&["keys", "list"]);
    let keys = listed.as_array().unwrap();
    assert_eq!(keys.len(), 1, "{listed}");
    assert_eq!(keys[0]["state"], "active");
    let original = str_field(&keys[0], "kid").to_owned();

    let rotated = t.json(&["keys", "rotate"]);
    assert_eq!(str_field(&rotated, "active"), original, "{rotated}");
    let next = str_field(&rotated, "next").to_owned();
    assert_ne!(next, original);
    assert_eq!(rotated["version"], 1);

    // The next key is too recent to sign: a second rotation changes nothing and says why.
    let reason = t.fails(&["keys", "rotate"], 4);
    assert!(reason.contains("not rotated"), "{reason}");
    assert!(reason.contains(&next), "{reason}");

    let listed = t.json(&["keys", "list"]);
    let keys = listed.as_array().unwrap();
    let states: Vec<(&str, &str)> = keys
        .iter()
        .map(|k| (k["kid"].as_str().unwrap(), k["state"].as_str().unwrap()))
        .collect();
    assert_eq!(
        states,
        [(original.as_str(), "active"), (next.as_str(), "next")]
    );
    assert!(keys[0]["activated"].is_i64() && keys[0].get("retired").is_none());
    assert!(keys[1]["created"].is_i64() && keys[1].get("activated").is_none());
    let text = t.text(&["keys", "list"]);
    assert!(text.contains(&next) && !text.contains("PRIVATE"), "{text}");
}

/// A compromised key is withdrawn at once: the active one hands over to the next key, which signs
/// from then on, and a new next key is published; an unknown kid is "not found".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_revoke_withdraws_a_key_at_once() {
    let t = Target::sqlite().await;
    let rotated = t.json(&["keys", "rotate"]);
    let (active, next) = (
        str_field(&rotated, "active").to_owned(),
        str_field(&rotated, "next").to_owned(),
    );

    let revoked = t.json(&["keys", "revoke", &active]);
    assert_eq!(str_field(&revoked, "revoked"), active, "{revoked}");
    assert_eq!(revoked["was"], "active");
    assert_eq!(
        str_field(&revoked, "active"),
        next,
        "the next key signs at once"
    );
    let new_next = str_field(&revoked, "next").to_owned();
    assert_ne!(new_next, next);

    let listed = t.json(&["keys", "list"]);
    let kids: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["kid"].as_str().unwrap())
        .collect();
    assert_eq!(kids, [next.as_str(), new_next.as_str()], "{listed}");

    t.fails(&["keys", "revoke", &active], 3);
    // Already a ring with its MAC: adopting it again changes nothing it would read.
    let adopted = t.json(&["keys", "adopt"]);
    assert!(adopted["version"].is_u64(), "{adopted}");
}

/// The test's own handle on the ring the tool rotates.
fn ring_store(t: &Target) -> Arc<dyn SigningKeyRingStore> {
    match &t.backend {
        Backend::Sqlite => Arc::new(SqliteStore::open_in_dir(t.dir.path()).unwrap()),
        Backend::Dynamo(store) => Arc::new(store.clone()),
    }
}

/// `(kid, state)` of each listed key, oldest first.
fn states(listed: &Value) -> Vec<(String, String)> {
    listed
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                str_field(k, "kid").to_owned(),
                str_field(k, "state").to_owned(),
            )
        })
        .collect()
}

/// A retired key is listed as `retired` with the time it was retired, and stays published until
/// every token it signed has expired: the first rotation after `RETIRED_KEPT_SECONDS` removes
/// it, one a second earlier keeps it. The rotations before and after the tool's own run at the
/// times they name (`rotation::rotate` with a `now` of its own), since the waits are hours.
pub async fn retired_keys_are_listed_then_removed(t: Target) {
    let ring = ring_store(&t);
    let legacy = KeyRingDocument::load(None, t.dir.path()).await.unwrap();
    let factory = SigningBackend::Local.factory(&legacy.server_secret().unwrap());
    let rotate_at = |now: i64| {
        let (ring, factory, legacy) = (ring.clone(), &factory, &legacy);
        async move {
            rotation::rotate(ring.as_ref(), factory, legacy, now)
                .await
                .unwrap()
                .plan
        }
    };

    // The key file's key migrated and a next key published, then promoted: the first retired.
    let started = SystemClock.now() - 2 * MIN_NEXT_SECONDS - 60;
    assert_eq!(rotate_at(started).await, Plan::AddNext);
    let first_retired_at = started + MIN_NEXT_SECONDS;
    assert_eq!(rotate_at(first_retired_at).await, Plan::Promote);
    let listed = t.json(&["keys", "list"]);
    let first = states(&listed);
    let [(a, a_state), (b, b_state), (c, c_state)] = first.as_slice() else {
        panic!("three keys: {listed}");
    };
    assert_eq!(
        [a_state.as_str(), b_state.as_str(), c_state.as_str()],
        ["retired", "active", "next"],
        "{listed}"
    );
    assert_eq!(listed[0]["retired"], first_retired_at, "{listed}");
    assert!(listed[0]["activated"].is_i64(), "{listed}");
    assert!(listed[1].get("retired").is_none(), "{listed}");
    let text = t.text(&["keys", "list"]);
    let line = text.lines().find(|l| l.contains(a.as_str())).unwrap();
    assert!(
        line.contains("Retired") && line.contains(&format!("retired {first_retired_at}")),
        "{text}"
    );

    // The tool's rotation, now: the next key signs, the active one is retired too, and the
    // first retired key is kept, its tokens may still be valid.
    let rotated = t.json(&["keys", "rotate"]);
    assert_eq!(str_field(&rotated, "active"), c, "{rotated}");
    let listed = t.json(&["keys", "list"]);
    let second = states(&listed);
    assert_eq!(second.len(), 4, "{listed}");
    assert_eq!(
        &second[..3],
        [
            (a.clone(), "retired".to_owned()),
            (b.clone(), "retired".to_owned()),
            (c.clone(), "active".to_owned()),
        ],
        "{listed}"
    );

    // A second before the first retired key's tokens have all expired: kept.
    let kept_until = first_retired_at + RETIRED_KEPT_SECONDS;
    assert_eq!(rotate_at(kept_until - 1).await, Plan::Promote);
    let listed = t.json(&["keys", "list"]);
    assert_eq!(
        states(&listed)[0],
        (a.clone(), "retired".to_owned()),
        "{listed}"
    );

    // The next rotation after that: removed; the key the tool retired, younger, is kept.
    assert_eq!(
        rotate_at(kept_until - 1 + MIN_NEXT_SECONDS).await,
        Plan::Promote
    );
    let listed = t.json(&["keys", "list"]);
    let last = states(&listed);
    assert!(last.iter().all(|(kid, _)| kid != a), "{listed}");
    assert_eq!(last[0], (b.clone(), "retired".to_owned()), "{listed}");
}
