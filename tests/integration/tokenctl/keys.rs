//! `keys rotate` and `keys list` on the stored signing key ring, starting from a data directory
//! whose key file has today's format (migrated by the first rotation).

use super::output::str_field;
use super::target::Target;

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
