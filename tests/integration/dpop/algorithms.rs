//! Proofs by each algorithm the metadata lists (ES256 elsewhere; PS256 with an RSA key and EdDSA
//! with an Ed25519 key here, signed by `jsonwebtoken`, not the server's JOSE code), each binding
//! the token to its key's RFC 7638 thumbprint; and `--require-dpop` on the password, refresh and
//! code grants.

use crate::authorize::flow::{query, Session, LOGIN, PASSWORD, REDIRECT_URI};
use crate::private_key_jwt::keys::ClientKey;
use crate::support::app::{password_form, TestApp};
use reqwest::StatusCode;
use serde_json::json;
use token_core::admin::{self, NewClient};
use token_domain::clock::Clock;
use token_domain::{ClientId, GrantType, Scopes};
use uuid::Uuid;

use super::*;

crate::on_both_stores!(
    rsa_and_ed25519_proofs_bind_to_their_thumbprints,
    a_client_that_requires_dpop_needs_a_proof_for_every_user_grant,
);

fn proof(app: &TestApp, key: &ClientKey) -> String {
    key.sign_dpop(&json!({
        "jti": Uuid::new_v4().to_string(),
        "htm": "POST",
        "htu": app.url(TOKEN_PATH),
        "iat": app.clock.now(),
    }))
}

async fn rsa_and_ed25519_proofs_bind_to_their_thumbprints(app: TestApp) {
    let client = app.create_client("read").await;
    for key in [ClientKey::ps256("rsa"), ClientKey::eddsa("okp")] {
        let (status, _, body) =
            token_with(&app, &client_credentials(&client), &[&proof(&app, &key)]).await;
        assert_eq!(status, StatusCode::OK, "{}: {body}", key.kid);
        assert_eq!(body["token_type"], "DPoP");
        let access_token = body["access_token"].as_str().unwrap();
        assert_eq!(
            claims(access_token)["cnf"],
            json!({"jkt": key.thumbprint()}),
            "{}",
            key.kid
        );
        let introspection = introspect(&app, &client, access_token).await;
        assert_eq!(introspection["cnf"]["jkt"], key.thumbprint().as_str());
    }
}

async fn a_client_that_requires_dpop_needs_a_proof_for_every_user_grant(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let mut new = NewClient::named("strict", Scopes::parse("read").unwrap());
    new.grants = [
        GrantType::Password,
        GrantType::RefreshToken,
        GrantType::AuthorizationCode,
    ]
    .into();
    new.redirect_uris = vec![REDIRECT_URI.to_owned()];
    let client = app.create_client_with(new).await;
    // A family started before the client was made to require proofs: Bearer.
    let (status, bearer) = app.password_grant(&client, LOGIN, PASSWORD, &[]).await;
    assert_eq!(status, StatusCode::OK, "{bearer}");
    let id = ClientId::parse(&client.id).unwrap();
    admin::set_require_dpop(app.ctx(), &id, true).await.unwrap();
    let key = DpopKey::generate();

    let form = password_form(&client, LOGIN, PASSWORD, &[]);
    let (status, _, body) = token_with(&app, &form, &[]).await;
    assert_invalid_proof(status, &body, "password grant without a proof");
    let (status, _, body) = token_with(&app, &form, &[&key.token_proof(&app)]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["token_type"], "DPoP");

    let refresh = [
        ("grant_type", "refresh_token"),
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
        ("refresh_token", bearer["refresh_token"].as_str().unwrap()),
    ];
    let (status, _, body) = token_with(&app, &refresh, &[]).await;
    assert_invalid_proof(status, &body, "refresh of a Bearer family without a proof");

    let redirect = Session::new(&app)
        .decide(&query(&client, &[]), "approve")
        .await;
    let code = [
        ("grant_type", "authorization_code"),
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
        ("code", redirect["code"].as_str()),
        ("redirect_uri", REDIRECT_URI),
    ];
    let (status, _, body) = token_with(&app, &code, &[]).await;
    assert_invalid_proof(status, &body, "code grant without a proof");
    let (status, _, body) = token_with(&app, &code, &[&key.token_proof(&app)]).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "the refusal used nothing up: {body}"
    );
    assert_eq!(body["token_type"], "DPoP");
}
