//! DPoP at the PAR endpoint (RFC 9449 §10.1): a proof sent with the push binds the code to its
//! key as `dpop_jkt` would; a push naming one key in `dpop_jkt` and proving another is refused
//! (150), as is a replayed proof, and neither stores a request.

use super::*;
use crate::authorize::flow::{Session, LOGIN, PASSWORD};
use crate::dpop::{assert_invalid_proof, claims, token_with, DpopKey};

crate::on_both_stores!(
    a_proof_at_the_push_binds_the_code,
    a_push_proving_another_key_than_its_dpop_jkt_is_refused,
);

/// `POST /oauth2/v0/par` with the client's secret, `parameters` and `proofs` as `DPoP` fields.
async fn push_with(
    app: &TestApp,
    client: &TestClient,
    parameters: &[(&str, &str)],
    proofs: &[&str],
) -> Answer {
    let mut form = vec![
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
    ];
    form.extend_from_slice(parameters);
    let mut request = app.http.post(app.url(PAR)).form(&form);
    for proof in proofs {
        request = request.header("DPoP", *proof);
    }
    json_of(request.send().await.unwrap()).await
}

async fn redeem(app: &TestApp, client: &TestClient, code: &str, proofs: &[&str]) -> Answer {
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

async fn a_proof_at_the_push_binds_the_code(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = secret_client(&app).await;
    let key = DpopKey::generate();
    let proof = key.sign(&key.proof(&app, "POST", PAR));
    let (status, body) = push_with(&app, &client, &parameters(&[]), &[&proof]).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let redirect = Session::new(&app)
        .decide(
            &by_reference(&client, body["request_uri"].as_str().unwrap()),
            "approve",
        )
        .await;
    let code = redirect["code"].as_str();

    let (status, body) = redeem(&app, &client, code, &[]).await;
    assert_invalid_proof(status, &body, "no proof for a bound code");
    let other = DpopKey::generate();
    let (status, body) = redeem(&app, &client, code, &[&other.token_proof(&app)]).await;
    assert_invalid_proof(status, &body, "another key");
    let (status, body) = redeem(&app, &client, code, &[&key.token_proof(&app)]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["token_type"], "DPoP");
    assert_eq!(
        claims(body["access_token"].as_str().unwrap())["cnf"],
        json!({"jkt": key.thumbprint()})
    );
}

async fn a_push_proving_another_key_than_its_dpop_jkt_is_refused(app: TestApp) {
    let client = secret_client(&app).await;
    let (named, proving) = (DpopKey::generate(), DpopKey::generate());
    let jkt = named.thumbprint();
    let proof = proving.sign(&proving.proof(&app, "POST", PAR));
    let (status, body) =
        push_with(&app, &client, &parameters(&[("dpop_jkt", &jkt)]), &[&proof]).await;
    assert_invalid_proof(status, &body, "dpop_jkt names another key");
    assert!(body.get("request_uri").is_none(), "{body}");

    // The same key in both is a push; its proof, sent again, is a replay.
    let jkt = proving.thumbprint();
    let proof = proving.sign(&proving.proof(&app, "POST", PAR));
    let answer = push_with(&app, &client, &parameters(&[("dpop_jkt", &jkt)]), &[&proof]).await;
    assert_eq!(answer.0, StatusCode::CREATED, "{}", answer.1);
    let (status, body) = push_with(&app, &client, &parameters(&[]), &[&proof]).await;
    assert_invalid_proof(status, &body, "a replayed proof");
    // A proof for the token endpoint is not one for the PAR endpoint.
    let (status, body) = push_with(
        &app,
        &client,
        &parameters(&[]),
        &[&proving.token_proof(&app)],
    )
    .await;
    assert_invalid_proof(status, &body, "htu of the token endpoint");
}
