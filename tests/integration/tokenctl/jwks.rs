//! `clients create --jwks-file` and `clients set-jwks`: public keys for `private_key_jwt`
//! stored on the client, private and symmetric keys refused with the reason.

use serde_json::json;

use super::target::{Target, UNKNOWN};

/// An EC P-256 public key (RFC 7515 Appendix A.3's), and the same with its private `d`.
fn ec_key(kid: &str) -> serde_json::Value {
    json!({
        "kty": "EC", "crv": "P-256", "kid": kid,
        "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
        "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0",
    })
}

pub async fn client_jwks(t: &Target) {
    let write = |name: &str, value: &serde_json::Value| {
        let path = t.dir.path().join(name);
        std::fs::write(&path, value.to_string()).unwrap();
        path.display().to_string()
    };
    let public = write("public.json", &json!({ "keys": [ec_key("one")] }));
    let (created, id) = t.create_client(
        "Signer",
        &["--grants", "client_credentials", "--jwks-file", &public],
    );
    assert_eq!(created["jwks_keys"], json!(["one"]), "{created}");
    let stored = t.stored_client(&id).await;
    let set = stored.jwks.expect("the set is stored");
    assert_eq!(set.keys().len(), 1);
    assert_eq!(set.keys()[0].kid(), Some("one"));

    let mut unnamed = ec_key("x");
    unnamed.as_object_mut().unwrap().remove("kid");
    let replacement = write("two.json", &json!({ "keys": [ec_key("two"), unnamed] }));
    let out = t.json(&["clients", "set-jwks", &id.to_string(), &replacement]);
    assert_eq!(
        out["jwks_keys"],
        json!(["two", "oKIywvGUpTVTyxMQ3bwIIeQUudfr_CkLMjCE19ECD-U"]),
        "a key without kid is listed by its RFC 7638 thumbprint: {out}"
    );
    let stored = t.stored_client(&id).await;
    assert_eq!(stored.jwks.unwrap().keys().len(), 2, "replaced, not added");
    assert!(stored.enabled, "the rest of the client is kept");

    let mut private = ec_key("p");
    private["d"] = json!("jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI");
    let private = write("private.json", &json!({ "keys": [ec_key("ok"), private] }));
    let symmetric = write(
        "oct.json",
        &json!({ "keys": [{"kty": "oct", "k": "c2VjcmV0"}] }),
    );
    let not_json = t.dir.path().join("not.json");
    std::fs::write(&not_json, "{").unwrap();
    let not_json = not_json.display().to_string();
    for (file, says) in [
        (&private, "private"),
        (&symmetric, "symmetric"),
        (&not_json, "not JSON"),
    ] {
        let message = t.fails(&["clients", "set-jwks", &id.to_string(), file], 2);
        assert!(message.contains(says), "{message}");
        let message = t.fails(
            &[
                "clients",
                "create",
                "--name",
                "Careless",
                "--jwks-file",
                file,
            ],
            2,
        );
        assert!(message.contains(says), "{message}");
    }
    let stored = t.stored_client(&id).await;
    assert_eq!(
        stored.jwks.unwrap().keys()[0].kid(),
        Some("two"),
        "a refused set changes nothing"
    );
    t.fails(&["clients", "set-jwks", UNKNOWN, &replacement], 3);
    t.fails(
        &[
            "clients",
            "set-jwks",
            &id.to_string(),
            "/nonexistent/jwks.json",
        ],
        2,
    );
}
