//! Proofs at the token endpoint: a valid one binds the token; each bad one is refused with
//! `invalid_dpop_proof` (150) and leaves nothing behind (its `jti` is still unused: the same
//! `jti` in a valid proof is then accepted).

use crate::support::app::TestApp;
use futures::future::join_all;
use reqwest::StatusCode;
use serde_json::{json, Value};
use token_core::admin::NewClient;
use token_domain::clock::Clock;
use token_domain::Scopes;

use super::*;

crate::on_both_stores!(
    a_valid_proof_binds_the_application_token,
    each_bad_proof_is_refused_and_changes_nothing,
    a_proof_is_accepted_once,
    parallel_replays_of_one_proof_succeed_once,
    a_client_that_requires_dpop_must_send_a_proof,
    bearer_requests_stay_bearer,
);

mod nonces {
    use super::*;

    crate::on_both_stores!(with crate::support::app::AppOptions::dpop_nonces(); the_server_nonce_round_trip);
}

async fn a_valid_proof_binds_the_application_token(app: TestApp) {
    let client = app.create_client("read").await;
    let key = DpopKey::generate();
    let (status, _, body) = token_with(
        &app,
        &client_credentials(&client),
        &[&key.token_proof(&app)],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["token_type"], "DPoP");
    let token = body["access_token"].as_str().unwrap();
    assert_eq!(claims(token)["cnf"], json!({"jkt": key.thumbprint()}));
    let introspection = introspect(&app, &client, token).await;
    assert_eq!(introspection["active"], true);
    assert_eq!(introspection["token_type"], "DPoP");
    assert_eq!(introspection["cnf"], json!({"jkt": key.thumbprint()}));

    // Metadata names the algorithms.
    let metadata: Value = app
        .get_json("/.well-known/oauth-authorization-server")
        .await;
    assert_eq!(
        metadata["dpop_signing_alg_values_supported"],
        json!(["ES256", "PS256", "EdDSA"])
    );
}

/// An unsigned token (`alg: none`) or one MACed with HS256, in compact form.
fn unsigned_or_hmac(proof: &Proof, alg: &str) -> String {
    let mut header = proof.header.clone();
    header["alg"] = alg.into();
    let input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(proof.claims.to_string())
    );
    if alg == "none" {
        return format!("{input}.");
    }
    let key = jsonwebtoken::EncodingKey::from_secret(b"a shared secret is not a key");
    let mut jwt_header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256);
    jwt_header.typ = Some("dpop+jwt".into());
    jsonwebtoken::encode(&jwt_header, &proof.claims, &key).unwrap()
}

async fn each_bad_proof_is_refused_and_changes_nothing(app: TestApp) {
    let client = app.create_client("read").await;
    let key = DpopKey::generate();
    let other = DpopKey::generate();
    let form = client_credentials(&client);
    let now = app.clock.now();
    let edit = |change: &dyn Fn(&mut Proof)| {
        let mut proof = key.proof(&app, "POST", TOKEN_PATH);
        change(&mut proof);
        proof
    };
    let cases: Vec<(&str, Proof, Option<String>)> = vec![
        (
            "another URL",
            edit(&|p| p.claims["htu"] = app.url("/oauth2/v0/userinfo").into()),
            None,
        ),
        (
            "another host",
            edit(&|p| p.claims["htu"] = "https://evil.example/oauth2/v0/token".into()),
            None,
        ),
        (
            "another method",
            edit(&|p| p.claims["htm"] = "GET".into()),
            None,
        ),
        (
            "iat 61 s ago",
            edit(&|p| p.claims["iat"] = (now - 61).into()),
            None,
        ),
        (
            "iat 61 s ahead",
            edit(&|p| p.claims["iat"] = (now + 61).into()),
            None,
        ),
        (
            "no jti",
            edit(&|p| {
                p.claims.as_object_mut().unwrap().remove("jti");
            }),
            None,
        ),
        (
            "no iat",
            edit(&|p| {
                p.claims.as_object_mut().unwrap().remove("iat");
            }),
            None,
        ),
        ("typ JWT", edit(&|p| p.header["typ"] = "JWT".into()), None),
        (
            "no jwk",
            edit(&|p| {
                p.header.as_object_mut().unwrap().remove("jwk");
            }),
            None,
        ),
        (
            "jwk with its private key",
            edit(&|p| p.header["jwk"] = key.private_jwk()),
            None,
        ),
        (
            "jwk of another key",
            edit(&|p| p.header["jwk"] = other.jwk()),
            None,
        ),
        (
            "alg RS256",
            edit(&|p| p.header["alg"] = "RS256".into()),
            None,
        ),
    ];
    let mut proofs: Vec<(String, String, Value)> = cases
        .into_iter()
        .map(|(case, proof, _)| (case.to_owned(), key.sign(&proof), proof.claims))
        .collect();
    for alg in ["none", "HS256"] {
        let proof = key.proof(&app, "POST", TOKEN_PATH);
        proofs.push((
            format!("alg {alg}"),
            unsigned_or_hmac(&proof, alg),
            proof.claims,
        ));
    }
    let good = key.proof(&app, "POST", TOKEN_PATH);
    // One character inside the signature (the last one carries padding bits).
    let mut tampered = key.sign(&good).into_bytes();
    let at = tampered.len() - 10;
    tampered[at] = if tampered[at] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    proofs.push(("bad signature".into(), tampered, good.claims.clone()));
    // Unreadable: nothing to spend.
    proofs.push(("not a JWT".into(), "not-a-jwt".into(), json!({})));

    for (case, proof, claims) in &proofs {
        let (status, _, body) = token_with(&app, &form, &[proof]).await;
        assert_invalid_proof(status, &body, case);
        assert!(body.get("access_token").is_none(), "{case}");
        // Nothing was written: the proof's jti is still unused.
        if let Some(jti) = claims.get("jti") {
            let mut valid = key.proof(&app, "POST", TOKEN_PATH);
            valid.claims["jti"] = jti.clone();
            let (status, _, body) = token_with(&app, &form, &[&key.sign(&valid)]).await;
            assert_eq!(status, StatusCode::OK, "{case}: the jti was spent: {body}");
        }
    }

    // Two DPoP header fields.
    let (status, _, body) = token_with(
        &app,
        &form,
        &[&key.token_proof(&app), &key.token_proof(&app)],
    )
    .await;
    assert_invalid_proof(status, &body, "two proofs");

    // The iat window's edges are inside.
    for iat in [now - 60, now + 60] {
        let proof = edit(&|p| p.claims["iat"] = iat.into());
        let (status, _, body) = token_with(&app, &form, &[&key.sign(&proof)]).await;
        assert_eq!(status, StatusCode::OK, "iat {iat} (now {now}): {body}");
    }
    // htu normalisation: scheme and host case, the default port of http, query, fragment.
    let address = app.address.replace("http://", "HTTP://");
    let proof = edit(&|p| p.claims["htu"] = format!("{address}{TOKEN_PATH}?x=1#y").into());
    let (status, _, body) = token_with(&app, &form, &[&key.sign(&proof)]).await;
    assert_eq!(status, StatusCode::OK, "normalised htu: {body}");
}

async fn a_proof_is_accepted_once(app: TestApp) {
    let client = app.create_client("read").await;
    let key = DpopKey::generate();
    let proof = key.token_proof(&app);
    let form = client_credentials(&client);
    let (status, _, body) = token_with(&app, &form, &[&proof]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, _, body) = token_with(&app, &form, &[&proof]).await;
    assert_invalid_proof(status, &body, "replayed");
    // Still refused later in the iat window.
    app.clock.advance(59);
    let (status, _, body) = token_with(&app, &form, &[&proof]).await;
    assert_invalid_proof(status, &body, "replayed 59 s later");
}

async fn parallel_replays_of_one_proof_succeed_once(app: TestApp) {
    let client = app.create_client("read").await;
    let key = DpopKey::generate();
    let proof = key.token_proof(&app);
    let form = client_credentials(&client);
    let proofs = [proof.as_str()];
    let answers = join_all((0..8).map(|_| token_with(&app, &form, &proofs))).await;
    let ok = answers
        .iter()
        .filter(|(status, _, _)| *status == StatusCode::OK)
        .count();
    assert_eq!(ok, 1, "exactly one success");
    for (status, _, body) in answers.iter().filter(|(s, _, _)| *s != StatusCode::OK) {
        assert_invalid_proof(*status, body, "parallel replay");
    }
}

async fn a_client_that_requires_dpop_must_send_a_proof(app: TestApp) {
    let mut new = NewClient::named("sender-constrained", Scopes::parse("read").unwrap());
    new.require_dpop = true;
    let client = app.create_client_with(new).await;
    let form = client_credentials(&client);
    let (status, _, body) = token_with(&app, &form, &[]).await;
    assert_invalid_proof(status, &body, "no proof");
    let key = DpopKey::generate();
    let (status, _, body) = token_with(&app, &form, &[&key.token_proof(&app)]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["token_type"], "DPoP");
}

async fn bearer_requests_stay_bearer(app: TestApp) {
    let client = app.create_client("read").await;
    let (status, headers, body) = token_with(&app, &client_credentials(&client), &[]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["token_type"], "Bearer");
    assert!(claims(body["access_token"].as_str().unwrap())
        .get("cnf")
        .is_none());
    assert!(
        headers.get("dpop-nonce").is_none(),
        "nonces are off by default"
    );
    let introspection = introspect(&app, &client, body["access_token"].as_str().unwrap()).await;
    assert_eq!(introspection["token_type"], "Bearer");
    assert!(introspection.get("cnf").is_none());
}

/// RFC 9449 §8: refused with `use_dpop_nonce` and the nonce, accepted with it; every answer
/// carries the current nonce.
pub(super) async fn the_server_nonce_round_trip(app: TestApp) {
    let client = app.create_client("read").await;
    let key = DpopKey::generate();
    let form = client_credentials(&client);
    let (status, headers, body) = token_with(&app, &form, &[&key.token_proof(&app)]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"], "use_dpop_nonce");
    assert_eq!(body["code"], 151);
    let nonce = headers["dpop-nonce"].to_str().unwrap().to_owned();

    let with_nonce = |nonce: &str| {
        let mut proof = key.proof(&app, "POST", TOKEN_PATH);
        proof.claims["nonce"] = nonce.into();
        key.sign(&proof)
    };
    let (status, _, body) = token_with(&app, &form, &[&with_nonce("made-up")]).await;
    assert_eq!(body["error"], "use_dpop_nonce", "{status} {body}");
    let (status, headers, body) = token_with(&app, &form, &[&with_nonce(&nonce)]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["token_type"], "DPoP");
    assert!(headers.get("dpop-nonce").is_some(), "sent on success too");

    // Still good in the next period, stale after that.
    app.clock.advance(300);
    let (status, _, body) = token_with(&app, &form, &[&with_nonce(&nonce)]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    app.clock.advance(300);
    let (status, _, body) = token_with(&app, &form, &[&with_nonce(&nonce)]).await;
    assert_eq!(body["error"], "use_dpop_nonce", "{status} {body}");
}
