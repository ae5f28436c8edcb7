//! `legacy-apps link`: a consumer key to a client, and re-linked to another.

use token_domain::{ClientId, ConsumerKey};

use super::target::{Target, UNKNOWN};

pub async fn link_and_relink(t: &Target, client_id: ClientId, other_id: ClientId) {
    let store = &t.store;
    let key = ConsumerKey::parse("qyprd-OLD-key").unwrap();
    let linked = t.json(&[
        "legacy-apps",
        "link",
        "qyprd-OLD-key",
        &client_id.to_string(),
    ]);
    assert_eq!(linked["consumer_key"], "qyprd-OLD-key");
    let app = store.legacy().get_legacy_app(&key).await.unwrap().unwrap();
    assert_eq!(app.client_id, client_id);
    t.json(&[
        "legacy-apps",
        "link",
        "qyprd-OLD-key",
        &other_id.to_string(),
    ]);
    let app = store.legacy().get_legacy_app(&key).await.unwrap().unwrap();
    assert_eq!(app.client_id, other_id);
    t.fails(&["legacy-apps", "link", "qyprd-NEW", UNKNOWN], 3);
    assert!(store
        .legacy()
        .get_legacy_app(&ConsumerKey::parse("qyprd-NEW").unwrap())
        .await
        .unwrap()
        .is_none());
}
