//! `keys rotate`: the local key file, or a key-ring document to upload to Secrets Manager.

use token_service::signing::{KeyRing, KeyRingDocument};

use super::output::{assert_failure, str_field};
use super::target::Target;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_rotate_the_local_key_file_or_a_key_ring_document() {
    let t = Target::sqlite().await;
    let local = t.dir.path().join("signing-keys.json");

    let first = t.json(&["keys", "rotate"]);
    let second = t.json(&["keys", "rotate"]);
    assert_ne!(first["kid"], second["kid"]);
    assert_eq!(str_field(&second, "file"), local.display().to_string());
    let document: KeyRingDocument =
        serde_json::from_str(&std::fs::read_to_string(&local).unwrap()).unwrap();
    let kids: Vec<&str> = document.keys.iter().map(|k| k.kid.as_str()).collect();
    assert_eq!(kids, [str_field(&first, "kid"), str_field(&second, "kid")]);
    let ring = KeyRing::from_document(&document).unwrap();
    assert_eq!(
        ring.signing_key().0,
        str_field(&second, "kid"),
        "the newest signs"
    );

    // A document to upload to Secrets Manager: created, then rotated; private to the owner.
    let ring_file = t.dir.path().join("ring.json");
    let ring_path = ring_file.display().to_string();
    let created = t.json(&["keys", "rotate", "--file", &ring_path]);
    assert_eq!(created["keys"], 1);
    let rotated = t.json(&["keys", "rotate", "--file", &ring_path]);
    assert_eq!(rotated["keys"], 2);
    let document: KeyRingDocument =
        serde_json::from_str(&std::fs::read_to_string(&ring_file).unwrap()).unwrap();
    assert_eq!(
        document.keys.last().unwrap().kid,
        str_field(&rotated, "kid")
    );
    KeyRing::from_document(&document).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&ring_file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let text = t.text(&["keys", "rotate", "--file", &ring_path]);
    assert!(!text.contains("PRIVATE KEY"), "{text}");

    let not_a_ring = t.dir.path().join("other.json");
    std::fs::write(&not_a_ring, "{\"hello\": 1}").unwrap();
    t.fails(
        &[
            "keys",
            "rotate",
            "--file",
            &not_a_ring.display().to_string(),
        ],
        2,
    );

    // Keys kept in Secrets Manager are rotated through a downloaded file only.
    let out = t
        .command()
        .args(["keys", "rotate"])
        .env(
            "SIGNING_KEYS_SECRET_ARN",
            "arn:aws:secretsmanager:us-east-1:1:secret:k",
        )
        .output()
        .unwrap();
    let reason = assert_failure(&out, &["keys", "rotate"], 2);
    assert!(reason.contains("--file"), "{reason}");
}
