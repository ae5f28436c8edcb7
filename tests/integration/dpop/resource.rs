//! Bound access tokens at this service's own resource endpoints (RFC 9449 §7): userinfo and
//! `DELETE /app-mgmt/v0/connections` take `Authorization: DPoP` with a proof carrying the
//! token's `ath`; a bound token presented as a bearer token is refused; refusals answer 401 with
//! a `DPoP` challenge.

use crate::support::app::{json_of, TestApp};
use reqwest::{header, StatusCode};
use serde_json::Value;
use token_core::admin::NewClient;
use token_domain::Scopes;

use super::*;

crate::on_both_stores!(
    userinfo_takes_a_bound_token_with_its_proof,
    the_connections_endpoint_takes_a_bound_token_with_its_proof,
    a_client_that_requires_dpop_manages_its_secrets_with_bound_tokens,
);

const USERINFO: &str = "/oauth2/v0/userinfo";
const CONNECTIONS: &str = "/app-mgmt/v0/connections";
const LOGIN: &str = "dpop-reader@example.com";
const PASSWORD: &str = "correct horse battery staple";

/// A bound user token with `openid`, and the key it is bound to.
async fn bound_user_token(app: &TestApp) -> (TestClient, DpopKey, String) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = app.create_client("read").await;
    let key = DpopKey::generate();
    let extra = [("scope", "openid read")];
    let body = bound_password_grant(app, &client, (LOGIN, PASSWORD), &extra, &key).await;
    let token = body["access_token"].as_str().unwrap().to_owned();
    (client, key, token)
}

/// A proof for `method` at `path` with the `ath` of `token`.
fn resource_proof(app: &TestApp, key: &DpopKey, method: &str, path: &str, token: &str) -> String {
    let mut proof = key.proof(app, method, path);
    proof.claims["ath"] = ath(token).into();
    key.sign(&proof)
}

async fn send(
    app: &TestApp,
    method: reqwest::Method,
    path: &str,
    authorization: &str,
    proof: Option<&str>,
) -> (StatusCode, Option<String>, Value) {
    let mut request = app
        .http
        .request(method, app.url(path))
        .header(header::AUTHORIZATION, authorization);
    if let Some(proof) = proof {
        request = request.header("DPoP", proof);
    }
    let response = request.send().await.unwrap();
    let challenge = response
        .headers()
        .get(header::WWW_AUTHENTICATE)
        .map(|v| v.to_str().unwrap().to_owned());
    let (status, body) = json_of(response).await;
    (status, challenge, body)
}

fn assert_dpop_refusal(answer: &(StatusCode, Option<String>, Value), error: &str, case: &str) {
    let (status, challenge, body) = answer;
    assert_eq!(*status, StatusCode::UNAUTHORIZED, "{case}: {body}");
    assert_eq!(body["error"], error, "{case}: {body}");
    let challenge = challenge.as_deref().unwrap_or_default();
    assert!(
        challenge.starts_with("DPoP ") && challenge.contains(&format!("error=\"{error}\"")),
        "{case}: {challenge}"
    );
}

async fn userinfo_takes_a_bound_token_with_its_proof(app: TestApp) {
    let (_, key, token) = bound_user_token(&app).await;
    let other = DpopKey::generate();
    let dpop = format!("DPoP {token}");
    let get = reqwest::Method::GET;

    let proof = resource_proof(&app, &key, "GET", USERINFO, &token);
    let (status, _, claims) = send(&app, get.clone(), USERINFO, &dpop, Some(&proof)).await;
    assert_eq!(status, StatusCode::OK, "{claims}");
    assert_eq!(claims["principal_type"], "user");
    // The same proof again: replayed.
    let replay = send(&app, get.clone(), USERINFO, &dpop, Some(&proof)).await;
    assert_dpop_refusal(&replay, "invalid_dpop_proof", "replayed proof");

    // As a bearer token: refused, whatever else comes with it.
    let (status, challenge, body) = send(
        &app,
        get.clone(),
        USERINFO,
        &format!("Bearer {token}"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_eq!(body["error"], "invalid_token");
    assert!(challenge.unwrap().starts_with("Bearer "));
    let response = app.post_form(USERINFO, &[("access_token", &token)]).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "form field");

    let no_ath = key.sign(&key.proof(&app, "GET", USERINFO));
    let wrong_ath = {
        let mut proof = key.proof(&app, "GET", USERINFO);
        proof.claims["ath"] = ath("another token").into();
        key.sign(&proof)
    };
    let cases = [
        ("no proof", None),
        ("no ath", Some(no_ath)),
        ("another token's ath", Some(wrong_ath)),
        (
            "another key",
            Some(resource_proof(&app, &other, "GET", USERINFO, &token)),
        ),
        (
            "POST proof on GET",
            Some(resource_proof(&app, &key, "POST", USERINFO, &token)),
        ),
        ("the token endpoint's proof", Some(key.token_proof(&app))),
    ];
    for (case, proof) in &cases {
        let answer = send(&app, get.clone(), USERINFO, &dpop, proof.as_deref()).await;
        assert_dpop_refusal(&answer, "invalid_dpop_proof", case);
    }

    // A bearer token with the DPoP scheme has no key to check against.
    let client = app.create_client("read").await;
    let bearer = app.user_tokens(&client, LOGIN, PASSWORD).await["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    let proof = resource_proof(&app, &key, "GET", USERINFO, &bearer);
    let answer = send(&app, get, USERINFO, &format!("DPoP {bearer}"), Some(&proof)).await;
    assert_dpop_refusal(
        &answer,
        "invalid_token",
        "unbound token with the DPoP scheme",
    );

    // A bound application token: 403 `insufficient_scope`, challenged in the DPoP scheme it
    // came with (RFC 9449 §7.1).
    let (status, _, body) = super::token_with(
        &app,
        &client_credentials(&client),
        &[&key.token_proof(&app)],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let app_token = body["access_token"].as_str().unwrap();
    let proof = resource_proof(&app, &key, "GET", USERINFO, app_token);
    let (status, challenge, body) = send(
        &app,
        reqwest::Method::GET,
        USERINFO,
        &format!("DPoP {app_token}"),
        Some(&proof),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"], "insufficient_scope");
    let challenge = challenge.unwrap_or_default();
    assert!(
        challenge.starts_with("DPoP ") && challenge.contains(r#"error="insufficient_scope""#),
        "{challenge}"
    );
}

async fn the_connections_endpoint_takes_a_bound_token_with_its_proof(app: TestApp) {
    let (client, key, token) = bound_user_token(&app).await;
    let delete = reqwest::Method::DELETE;
    let dpop = format!("DPoP {token}");

    let (status, _, body) = send(
        &app,
        delete.clone(),
        CONNECTIONS,
        &format!("Bearer {token}"),
        None,
    )
    .await;
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "as a bearer token: {body}"
    );
    let answer = send(&app, delete.clone(), CONNECTIONS, &dpop, None).await;
    assert_dpop_refusal(&answer, "invalid_dpop_proof", "no proof");
    // Nothing was revoked by the refusals.
    assert_eq!(introspect(&app, &client, &token).await["active"], true);

    let proof = resource_proof(&app, &key, "DELETE", CONNECTIONS, &token);
    let response = app
        .http
        .delete(app.url(CONNECTIONS))
        .header(header::AUTHORIZATION, &dpop)
        .header("DPoP", proof)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(introspect(&app, &client, &token).await["active"], false);
}

/// The client secrets API takes an application token of the app; a client registered with
/// `--require-dpop` only ever holds bound ones, so it presents them with `Authorization: DPoP`
/// and a proof, as at userinfo, and rotates its secrets without downtime.
async fn a_client_that_requires_dpop_manages_its_secrets_with_bound_tokens(app: TestApp) {
    let mut new = NewClient::named("sender-constrained", Scopes::parse("read").unwrap());
    new.require_dpop = true;
    let client = app.create_client_with(new).await;
    let key = DpopKey::generate();
    let mut form = client_credentials(&client).to_vec();
    form.push(("scope", "app-mgmt.secrets"));
    let (status, _, body) = super::token_with(&app, &form, &[&key.token_proof(&app)]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["token_type"], "DPoP");
    let token = body["access_token"].as_str().unwrap().to_owned();
    let dpop = format!("DPoP {token}");
    let secrets = format!("/app-mgmt/v4/apps/{}/secrets", client.id);

    let proof = resource_proof(&app, &key, "POST", &secrets, &token);
    let (status, _, added) = send(&app, reqwest::Method::POST, &secrets, &dpop, Some(&proof)).await;
    assert_eq!(status, StatusCode::CREATED, "{added}");
    let new_secret = added["client_secret"].as_str().unwrap();
    let proof = resource_proof(&app, &key, "GET", &secrets, &token);
    let (status, _, listed) = send(&app, reqwest::Method::GET, &secrets, &dpop, Some(&proof)).await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    assert_eq!(listed.as_array().unwrap().len(), 2, "{listed}");
    let old_id = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|secret| secret["secret_id"].as_str().unwrap().to_owned())
        .find(|id| *id != added["secret_id"])
        .unwrap();
    let one = format!("{secrets}/{old_id}");
    let proof = resource_proof(&app, &key, "DELETE", &one, &token);
    let response = app
        .http
        .delete(app.url(&one))
        .header(header::AUTHORIZATION, &dpop)
        .header("DPoP", proof)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    // Rotated: the new secret authenticates, the old one no longer does.
    let rotated = TestClient {
        id: client.id.clone(),
        secret: new_secret.to_owned(),
    };
    let (status, _, body) = super::token_with(
        &app,
        &client_credentials(&rotated),
        &[&key.token_proof(&app)],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, _, body) = super::token_with(
        &app,
        &client_credentials(&client),
        &[&key.token_proof(&app)],
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");

    // The bound token as a bearer token, without a proof, or with another key's: refused.
    let (status, challenge, body) = send(
        &app,
        reqwest::Method::GET,
        &secrets,
        &format!("Bearer {token}"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert!(challenge.unwrap().starts_with("Bearer "));
    let answer = send(&app, reqwest::Method::GET, &secrets, &dpop, None).await;
    assert_dpop_refusal(&answer, "invalid_dpop_proof", "no proof");
    let other = DpopKey::generate();
    let proof = resource_proof(&app, &other, "GET", &secrets, &token);
    let answer = send(&app, reqwest::Method::GET, &secrets, &dpop, Some(&proof)).await;
    assert_dpop_refusal(&answer, "invalid_dpop_proof", "another key");
}

/// With `DPOP_NONCE=on`, the resource endpoints too ask for the server's nonce (RFC 9449 §9): a
/// proof without it is 401 `use_dpop_nonce` with `DPoP-Nonce`, and the same request with it
/// passes.
mod nonces {
    use super::*;

    crate::on_both_stores!(with crate::support::app::AppOptions::dpop_nonces();
        userinfo_and_connections_ask_for_the_servers_nonce);

    /// A proof for `method` at `path` with the `ath` of `token` and `nonce`.
    fn proof_with(
        app: &TestApp,
        key: &DpopKey,
        (method, path): (&str, &str),
        token: &str,
        nonce: Option<&str>,
    ) -> String {
        let mut proof = key.proof(app, method, path);
        proof.claims["ath"] = ath(token).into();
        if let Some(nonce) = nonce {
            proof.claims["nonce"] = nonce.into();
        }
        key.sign(&proof)
    }

    /// `request` with `proof`: status, `WWW-Authenticate`, `DPoP-Nonce`.
    async fn sent(
        request: reqwest::RequestBuilder,
        proof: String,
    ) -> (StatusCode, String, Option<String>) {
        let response = request.header("DPoP", proof).send().await.unwrap();
        let header = |name| {
            response
                .headers()
                .get(name)
                .map(|v: &header::HeaderValue| v.to_str().unwrap().to_owned())
        };
        let challenge = header(header::WWW_AUTHENTICATE.as_str()).unwrap_or_default();
        (response.status(), challenge, header("dpop-nonce"))
    }

    async fn userinfo_and_connections_ask_for_the_servers_nonce(app: TestApp) {
        app.create_user(LOGIN, PASSWORD).await;
        let client = app.create_client("read").await;
        let key = DpopKey::generate();
        let form = crate::support::app::password_form(
            &client,
            LOGIN,
            PASSWORD,
            &[("scope", "openid read")],
        );
        let (_, headers, _) = token_with(&app, &form, &[&key.token_proof(&app)]).await;
        let nonce = headers["dpop-nonce"].to_str().unwrap().to_owned();
        let mut proof = key.proof(&app, "POST", TOKEN_PATH);
        proof.claims["nonce"] = nonce.clone().into();
        let (status, _, body) = token_with(&app, &form, &[&key.sign(&proof)]).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let token = body["access_token"].as_str().unwrap().to_owned();
        let dpop = format!("DPoP {token}");

        for (method, path) in [("GET", USERINFO), ("DELETE", CONNECTIONS)] {
            let request = || {
                app.http
                    .request(method.parse().unwrap(), app.url(path))
                    .header(header::AUTHORIZATION, &dpop)
            };
            let without = proof_with(&app, &key, (method, path), &token, None);
            let (status, challenge, fresh) = sent(request(), without).await;
            assert_eq!(status, StatusCode::UNAUTHORIZED, "{method} {path}");
            assert!(
                challenge.starts_with("DPoP ") && challenge.contains("error=\"use_dpop_nonce\""),
                "{method} {path}: {challenge}"
            );
            let fresh = fresh.unwrap_or_else(|| panic!("{method} {path}: no DPoP-Nonce"));
            let with = proof_with(&app, &key, (method, path), &token, Some(&fresh));
            let (status, challenge, _) = sent(request(), with).await;
            assert_eq!(status, StatusCode::OK, "{method} {path}: {challenge}");
        }
        assert_eq!(introspect(&app, &client, &token).await["active"], false);
    }
}
