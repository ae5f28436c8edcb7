//! A sender-constrained subject or actor token (`cnf.jkt`) is exchanged only with a DPoP proof
//! by its key: with it, the new token is bound to that key too (`token_type: DPoP`, `cnf.jkt`);
//! without a proof, or with another key's, 400 `invalid_grant` 165 (166 for the actor) and
//! nothing issued. An unbound subject exchanged with a proof gets a bound token.

use super::*;
use crate::dpop::{bound_password_grant, token_with, DpopKey};

crate::on_both_stores!(
    a_bound_subject_token_needs_a_proof_by_its_key,
    a_bound_actor_token_needs_a_proof_by_its_key,
);

/// The exchange's form for `subject` by `client`, with `extra`.
fn form<'a>(
    client: &'a TestClient,
    subject: &'a str,
    extra: &[(&'a str, &'a str)],
) -> Vec<(&'a str, &'a str)> {
    let mut form = vec![
        ("grant_type", GRANT),
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
        ("subject_token", subject),
        ("subject_token_type", ACCESS),
    ];
    form.extend_from_slice(extra);
    form
}

/// The `token.exchanged` events of `client` so far.
async fn exchanges(app: &TestApp, client: &TestClient) -> usize {
    events_of(app, client_subject(&client.id))
        .await
        .iter()
        .filter(|event| event.kind.name() == "token.exchanged")
        .count()
}

async fn a_bound_subject_token_needs_a_proof_by_its_key(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = client_with(&app, "agent", &[API]).await;
    let key = DpopKey::generate();
    let tokens = bound_password_grant(&app, &client, (LOGIN, PASSWORD), &[], &key).await;
    assert_eq!(tokens["token_type"], "DPoP", "{tokens}");
    let subject = tokens["access_token"].as_str().unwrap();
    let target = [("resource", API)];

    // Without a proof: not exchangeable, nothing issued (a stolen bound token stays bound).
    let (status, body) = exchange(&app, &client, subject, &target).await;
    assert_token_error(&(status, body), 400, "invalid_grant", 165);
    // With a proof by another key: the same.
    let other = DpopKey::generate();
    let answer = token_with(
        &app,
        &form(&client, subject, &target),
        &[&other.token_proof(&app)],
    )
    .await;
    assert_token_error(&(answer.0, answer.2), 400, "invalid_grant", 165);
    assert_eq!(exchanges(&app, &client).await, 0, "nothing issued");

    // With a proof by its key: a token bound to that key.
    let (status, _, body) = token_with(
        &app,
        &form(&client, subject, &target),
        &[&key.token_proof(&app)],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["token_type"], "DPoP", "{body}");
    let exchanged = body["access_token"].as_str().unwrap();
    let bound = claims(&app, exchanged).await;
    assert_eq!(bound["cnf"]["jkt"], key.thumbprint(), "{bound}");
    assert_eq!(bound["aud"], API);
    let active = introspect(&app, &client, exchanged).await;
    assert_eq!(active["cnf"]["jkt"], key.thumbprint(), "{active}");
    assert_eq!(exchanges(&app, &client).await, 1);

    // An unbound subject exchanged with a proof: the new token is bound to the proof's key.
    let unbound = user_token(&app, &client, &[]).await;
    let unbound = unbound["access_token"].as_str().unwrap();
    let (status, _, body) = token_with(
        &app,
        &form(&client, unbound, &target),
        &[&other.token_proof(&app)],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["token_type"], "DPoP", "{body}");
    let claims = claims(&app, body["access_token"].as_str().unwrap()).await;
    assert_eq!(claims["cnf"]["jkt"], other.thumbprint(), "{claims}");
}

async fn a_bound_actor_token_needs_a_proof_by_its_key(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let agent = client_with(&app, "agent", &[]).await;
    let actor = client_with(&app, "actor", &[]).await;
    let key = DpopKey::generate();
    let subject = user_token(&app, &agent, &[]).await;
    let subject = subject["access_token"].as_str().unwrap();
    let (status, _, actor_tokens) = token_with(
        &app,
        &crate::dpop::client_credentials(&actor),
        &[&key.token_proof(&app)],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{actor_tokens}");
    let actor_token = actor_tokens["access_token"].as_str().unwrap();
    let with_actor = [("actor_token", actor_token), ("actor_token_type", ACCESS)];

    let (status, body) = exchange(&app, &agent, subject, &with_actor).await;
    assert_token_error(&(status, body), 400, "invalid_grant", 166);
    let other = DpopKey::generate();
    let answer = token_with(
        &app,
        &form(&agent, subject, &with_actor),
        &[&other.token_proof(&app)],
    )
    .await;
    assert_token_error(&(answer.0, answer.2), 400, "invalid_grant", 166);
    assert_eq!(exchanges(&app, &agent).await, 0, "nothing issued");

    let (status, _, body) = token_with(
        &app,
        &form(&agent, subject, &with_actor),
        &[&key.token_proof(&app)],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let claims = claims(&app, body["access_token"].as_str().unwrap()).await;
    assert_eq!(claims["act"]["client_id"], actor.id, "{claims}");
    assert_eq!(claims["cnf"]["jkt"], key.thumbprint(), "{claims}");
}
