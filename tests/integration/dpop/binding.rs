//! What a proof binds: a family's refresh tokens (a refresh without a proof by the same key is
//! refused with 108 and revokes nothing), and an authorization code requested with `dpop_jkt`.

use crate::support::app::TestApp;
use reqwest::StatusCode;
use serde_json::{json, Value};

use super::*;
use crate::authorize::flow::{code_client, query, redirect_query, Session, REDIRECT_URI};

crate::on_both_stores!(
    a_password_grant_binds_the_family_to_the_key,
    a_bound_refresh_token_needs_a_proof_by_its_key_and_revokes_nothing,
    a_refresh_with_a_proof_binds_the_refresh_tokens_it_issues,
    a_retry_of_a_rotation_meets_the_successors_binding,
    dpop_jkt_binds_the_authorization_code,
    a_malformed_dpop_jkt_is_refused_at_the_authorize_endpoint,
);

const LOGIN: &str = "dpop-user@example.com";
const PASSWORD: &str = "correct horse battery staple";

async fn password_tokens(app: &TestApp, client: &TestClient, key: &DpopKey) -> Value {
    bound_password_grant(app, client, (LOGIN, PASSWORD), &[], key).await
}

async fn refresh(
    app: &TestApp,
    client: &TestClient,
    refresh_token: &str,
    proof: Option<String>,
) -> (StatusCode, Value) {
    let form = [
        ("grant_type", "refresh_token"),
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
        ("refresh_token", refresh_token),
    ];
    let proofs: Vec<&str> = proof.iter().map(String::as_str).collect();
    let (status, _, body) = token_with(app, &form, &proofs).await;
    (status, body)
}

fn assert_108(status: StatusCode, body: &Value, case: &str) {
    assert_eq!(status, StatusCode::BAD_REQUEST, "{case}: {body}");
    assert_eq!(body["error"], "invalid_grant", "{case}: {body}");
    assert_eq!(body["code"], 108, "{case}: {body}");
}

async fn a_password_grant_binds_the_family_to_the_key(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = app.create_client("read").await;
    let key = DpopKey::generate();
    let tokens = password_tokens(&app, &client, &key).await;
    assert_eq!(tokens["token_type"], "DPoP");
    let bound = json!({"jkt": key.thumbprint()});
    assert_eq!(
        claims(tokens["access_token"].as_str().unwrap())["cnf"],
        bound
    );
    let refresh_token = tokens["refresh_token"].as_str().unwrap();
    let introspection = introspect(&app, &client, refresh_token).await;
    assert_eq!(introspection["active"], true);
    assert_eq!(introspection["cnf"], bound);
}

async fn a_bound_refresh_token_needs_a_proof_by_its_key_and_revokes_nothing(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = app.create_client("read").await;
    let key = DpopKey::generate();
    let other = DpopKey::generate();
    let tokens = password_tokens(&app, &client, &key).await;
    let first = tokens["refresh_token"].as_str().unwrap().to_owned();

    let (status, body) = refresh(&app, &client, &first, None).await;
    assert_108(status, &body, "without a proof");
    let (status, body) = refresh(&app, &client, &first, Some(other.token_proof(&app))).await;
    assert_108(status, &body, "with another key's proof");

    // Nothing was revoked or rotated: the token still refreshes with its key.
    let (status, body) = refresh(&app, &client, &first, Some(key.token_proof(&app))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["token_type"], "DPoP");
    let bound = json!({"jkt": key.thumbprint()});
    assert_eq!(claims(body["access_token"].as_str().unwrap())["cnf"], bound);
    let second = body["refresh_token"].as_str().unwrap().to_owned();

    // A thief replaying the rotated token without the key is refused before reuse detection:
    // the family lives on.
    let (status, body) = refresh(&app, &client, &first, None).await;
    assert_108(status, &body, "the rotated token without a proof");
    app.clock.advance(120);
    let (status, body) = refresh(&app, &client, &first, Some(other.token_proof(&app))).await;
    assert_108(status, &body, "the rotated token with another key");
    let (status, body) = refresh(&app, &client, &second, Some(key.token_proof(&app))).await;
    assert_eq!(status, StatusCode::OK, "the family still refreshes: {body}");
    assert_eq!(
        introspect(&app, &client, body["refresh_token"].as_str().unwrap()).await["cnf"],
        bound
    );
}

/// A token request with a DPoP proof gets refresh tokens bound to its key, also a refresh of a
/// family started without one. The tokens issued before stay unbound, so replaying one is still
/// reuse and revokes the family.
async fn a_refresh_with_a_proof_binds_the_refresh_tokens_it_issues(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = app.create_client("read").await;
    let key = DpopKey::generate();
    let other = DpopKey::generate();
    let unbound = app.user_tokens(&client, LOGIN, PASSWORD).await;
    assert_eq!(unbound["token_type"], "Bearer");
    let first = unbound["refresh_token"].as_str().unwrap().to_owned();

    let (status, body) = refresh(&app, &client, &first, Some(key.token_proof(&app))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["token_type"], "DPoP");
    let bound = json!({"jkt": key.thumbprint()});
    let second = body["refresh_token"].as_str().unwrap().to_owned();
    assert_eq!(introspect(&app, &client, &second).await["cnf"], bound);

    for (case, proof) in [
        ("without a proof", None),
        ("with another key's proof", Some(other.token_proof(&app))),
    ] {
        let (status, body) = refresh(&app, &client, &second, proof).await;
        assert_108(status, &body, case);
    }
    let (status, body) = refresh(&app, &client, &second, Some(key.token_proof(&app))).await;
    assert_eq!(status, StatusCode::OK, "refreshes with its key: {body}");
    let third = body["refresh_token"].as_str().unwrap().to_owned();
    assert_eq!(
        introspect(&app, &client, &third).await["cnf"],
        bound,
        "still bound"
    );

    // The unbound first token, replayed after the retry window: reuse, the family is revoked.
    app.clock.advance(120);
    let (status, body) = refresh(&app, &client, &first, None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, body) = refresh(&app, &client, &third, Some(key.token_proof(&app))).await;
    assert_108(status, &body, "the family was revoked by the reuse");
}

/// An unbound token rotated with a proof has a bound successor. Replaying the unbound token
/// within the retry window is a retry, answered with that successor: only with a proof by its
/// key. Without one it is refused as an unknown token would be, and nothing is revoked.
async fn a_retry_of_a_rotation_meets_the_successors_binding(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = app.create_client("read").await;
    let key = DpopKey::generate();
    let unbound = app.user_tokens(&client, LOGIN, PASSWORD).await;
    let first = unbound["refresh_token"].as_str().unwrap().to_owned();
    let (status, body) = refresh(&app, &client, &first, Some(key.token_proof(&app))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let successor = body["refresh_token"].as_str().unwrap().to_owned();

    for (case, proof) in [
        ("a retry without a proof", None),
        (
            "a retry with another key's proof",
            Some(DpopKey::generate().token_proof(&app)),
        ),
    ] {
        let (status, body) = refresh(&app, &client, &first, proof).await;
        assert_108(status, &body, case);
        assert!(body.get("access_token").is_none(), "{case}: {body}");
    }
    let (status, body) = refresh(&app, &client, &first, Some(key.token_proof(&app))).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "a retry with the key's proof: {body}"
    );
    assert_eq!(body["token_type"], "DPoP");
    assert_eq!(
        body["refresh_token"],
        successor.as_str(),
        "the same successor"
    );
    let (status, body) = refresh(&app, &client, &successor, Some(key.token_proof(&app))).await;
    assert_eq!(status, StatusCode::OK, "nothing was revoked: {body}");
}

/// The token request redeeming `code`, with `proofs`.
async fn redeem(
    app: &TestApp,
    client: &TestClient,
    code: &str,
    proofs: &[&str],
) -> (StatusCode, Value) {
    let form = [
        ("grant_type", "authorization_code"),
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
        ("code", code),
        ("redirect_uri", REDIRECT_URI),
    ];
    let (status, _, body) = token_with(app, &form, proofs).await;
    (status, body)
}

async fn dpop_jkt_binds_the_authorization_code(app: TestApp) {
    app.create_user(
        crate::authorize::flow::LOGIN,
        crate::authorize::flow::PASSWORD,
    )
    .await;
    let client = code_client(&app).await;
    let key = DpopKey::generate();
    let other = DpopKey::generate();
    let jkt = key.thumbprint();
    let redirect = Session::new(&app)
        .decide(&query(&client, &[("dpop_jkt", &jkt)]), "approve")
        .await;
    let code = &redirect["code"];

    let (status, body) = redeem(&app, &client, code, &[]).await;
    assert_invalid_proof(status, &body, "no proof");
    let (status, body) = redeem(&app, &client, code, &[&other.token_proof(&app)]).await;
    assert_invalid_proof(status, &body, "another key");
    // The refusals used nothing up.
    let (status, body) = redeem(&app, &client, code, &[&key.token_proof(&app)]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["token_type"], "DPoP");
    assert_eq!(
        claims(body["access_token"].as_str().unwrap())["cnf"],
        json!({"jkt": jkt})
    );
}

async fn a_malformed_dpop_jkt_is_refused_at_the_authorize_endpoint(app: TestApp) {
    let client = code_client(&app).await;
    let response = Session::new(&app)
        .open(&query(&client, &[("dpop_jkt", "not a thumbprint")]))
        .await;
    let answer = redirect_query(&response);
    assert_eq!(answer["error"], "invalid_request", "{answer:?}");
}
