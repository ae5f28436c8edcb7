//! `clients secrets add|list|revoke`: each secret printed once and stored as a digest, the
//! five-secret limit, the last secret kept, and a client record written before several secrets
//! existed (one secret in `list`, migrated in place at its first change).

use uuid::Uuid;

use super::output::{str_field, text_field};
use super::target::{Backend, Target, UNKNOWN};
use crate::client_secrets::old_record::{self, Raw};

const DAY: i64 = 86_400;

pub async fn add_list_revoke(t: &Target) {
    let (_, client_id) = t.create_client("Rotating App", &[]);
    let id = client_id.to_string();

    let listed = t.list_secrets(&id);
    assert_eq!(listed.len(), 1);
    assert_eq!(
        listed[0].as_object().unwrap().keys().collect::<Vec<_>>(),
        ["created", "expires", "last_used", "secret_id"]
    );
    assert!(listed[0]["expires"].is_null() && listed[0]["last_used"].is_null());

    let added = t.json(&["clients", "secrets", "add", &id, "--expires-in", "30"]);
    assert_eq!(
        added.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["client_secret", "secret_id"]
    );
    let secret = str_field(&added, "client_secret").to_owned();
    assert!(Uuid::parse_str(&secret).is_ok(), "a UUID");
    assert!(!t.stored_anywhere(&secret).await, "stored only as a hash");
    assert!(t.secret_verifies(&client_id, &secret).await);
    let listed = t.list_secrets(&id);
    let added_listed = listed
        .iter()
        .find(|s| s["secret_id"] == added["secret_id"])
        .expect("listed");
    assert_eq!(
        added_listed["expires"].as_i64().unwrap(),
        added_listed["created"].as_i64().unwrap() + 30 * DAY
    );
    assert!(
        !listed.iter().any(|s| s.to_string().contains(&secret)),
        "never listed"
    );

    // Readable output: the secret once, and the listing one line per secret.
    let text = t.text(&["clients", "secrets", "add", &id]);
    let text_secret = text_field(&text, "client_secret");
    assert!(text.contains("shown only this once"), "{text}");
    let text = t.text(&["clients", "secrets", "list", &id]);
    assert_eq!(text.lines().count(), 3, "{text}");
    assert!(text.contains("never expires"), "{text}");

    // Five at most, with a clear message; nothing written.
    t.json(&["clients", "secrets", "add", &id]);
    t.json(&["clients", "secrets", "add", &id]);
    let refused = t.fails(&["clients", "secrets", "add", &id], 4);
    assert!(refused.contains("5 secrets"), "{refused}");
    let five = t.list_secrets(&id);
    assert_eq!(five.len(), 5);

    // Bad input.
    t.fails(&["clients", "secrets", "add", &id, "--expires-in", "0"], 2);
    t.fails(&["clients", "secrets", "add", UNKNOWN], 3);
    t.fails(&["clients", "secrets", "list", UNKNOWN], 3);
    t.fails(&["clients", "secrets", "revoke", &id, UNKNOWN], 3);
    t.fails(&["clients", "secrets", "revoke", &id, "not-a-uuid"], 2);

    // Revoke all but one; the last is refused.
    let ids: Vec<String> = five
        .iter()
        .map(|s| s["secret_id"].as_str().unwrap().to_owned())
        .collect();
    for secret_id in &ids[1..] {
        let out = t.json(&["clients", "secrets", "revoke", &id, secret_id]);
        assert_eq!(out["revoked"], true);
    }
    let refused = t.fails(&["clients", "secrets", "revoke", &id, &ids[0]], 4);
    assert!(refused.contains("last"), "{refused}");
    assert_eq!(t.list_secrets(&id).len(), 1);
    let said = t.text(&["clients", "secrets", "add", &id]);
    assert!(said.contains("may take up to 5 seconds"), "{said}");

    // Each secret was printed by exactly one run.
    for printed in [&secret, &text_secret] {
        assert_eq!(t.runs_that_printed(printed), 1, "a secret reprinted");
    }
}

pub async fn an_old_record_lists_as_one_secret_and_migrates(t: &Target) {
    let (_, client_id) = t.create_client("Old App", &[]);
    let id = client_id.to_string();
    let client = t.stored_client(&client_id).await;
    let raw = match &t.backend {
        Backend::Sqlite => Raw::SqliteFile(t.dir.path().join(token_store::sqlite::FILE_NAME)),
        Backend::Dynamo(store) => Raw::Dynamo(store),
    };
    old_record::write(t.store.as_ref(), raw, client, "an old secret").await;

    let listed = t.list_secrets(&id);
    assert_eq!(listed.len(), 1, "{listed:?}");
    let old_id = listed[0]["secret_id"].as_str().unwrap().to_owned();
    t.json(&["clients", "secrets", "add", &id]);
    let stored = t.stored_client(&client_id).await;
    assert!(!stored.secrets.is_legacy(), "rewritten in the new shape");
    assert!(t.secret_verifies(&client_id, "an old secret").await);
    assert_eq!(t.list_secrets(&id).len(), 2);
    t.json(&["clients", "secrets", "revoke", &id, &old_id]);
    assert!(!t.secret_verifies(&client_id, "an old secret").await);
}
