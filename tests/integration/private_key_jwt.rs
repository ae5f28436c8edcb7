//! `private_key_jwt` client authentication (RFC 7523, OpenID Connect Core §9) on both stores:
//! ES256, PS256 and EdDSA assertions made with `jsonwebtoken` authenticate at every endpoint
//! that authenticates clients; every bad assertion is 401 `invalid_client` code 63 and marks
//! nothing used; a replayed or concurrently reused assertion authenticates once. Registration
//! refuses private keys. authlib's `PrivateKeyJWT` is in `interop`.

mod grants;
mod interop;
pub(crate) mod keys;
mod refusals;

use crate::support::app::{json_of, TestApp, TestClient};
use crate::support::assertions::assert_token_error;
use keys::{jwk_set, ClientKey};
use reqwest::StatusCode;
use serde_json::{json, Value};
use token_core::admin::{self, NewClient};
use token_core::auth::client_assertion::{ASSERTION_TYPE, REPLAY_KIND};
use token_domain::clock::Clock;
use token_domain::jose::PublicJwkSet;
use token_domain::{GrantType, Scopes};
use token_store::ReplayKey;
use uuid::Uuid;

crate::on_both_stores!(
    each_algorithm_authenticates,
    assertions_authenticate_at_every_endpoint,
    a_replayed_assertion_is_refused,
    parallel_uses_of_one_assertion_have_one_winner,
    the_secret_keeps_working_beside_the_keys,
    a_client_pinned_to_one_method_refuses_the_other,
);

const PASSWORD: &str = "private key jwt password";

/// A client allowed every grant, registered with these public keys.
pub(crate) async fn client_with_keys(app: &TestApp, keys: &[&ClientKey]) -> TestClient {
    let mut new = NewClient::named("signing app", Scopes::parse("read").unwrap());
    new.grants = GrantType::ALL.into_iter().collect();
    new.jwks = Some(PublicJwkSet::parse(jwk_set(keys)).unwrap());
    app.create_client_with(new).await
}

/// Claims of a fresh assertion by `client` for the token endpoint, valid a minute.
pub(crate) fn claims(app: &TestApp, client: &TestClient) -> Value {
    let now = app.clock.now();
    json!({
        "iss": client.id,
        "sub": client.id,
        "aud": app.url("/oauth2/v0/token"),
        "iat": now,
        "exp": now + 60,
        "jti": Uuid::new_v4().to_string(),
    })
}

fn with(mut claims: Value, name: &str, value: Value) -> Value {
    claims[name] = value;
    claims
}

/// The form fields that authenticate with `assertion`.
fn assertion_fields(assertion: &str) -> Vec<(&'static str, String)> {
    vec![
        ("client_assertion_type", ASSERTION_TYPE.to_owned()),
        ("client_assertion", assertion.to_owned()),
    ]
}

async fn post(app: &TestApp, path: &str, fields: &[(&str, String)]) -> (StatusCode, Value) {
    let form: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
    json_of(app.post_form(path, &form).await).await
}

/// client_credentials with this assertion.
pub(crate) async fn app_token(app: &TestApp, assertion: &str) -> (StatusCode, Value) {
    let mut fields = vec![("grant_type", "client_credentials".to_owned())];
    fields.extend(assertion_fields(assertion));
    post(app, "/oauth2/v0/token", &fields).await
}

/// Whether the store holds `jti` as used by `client` (it marks it, if not: call last).
async fn marked_used(app: &TestApp, client: &str, jti: &str) -> bool {
    let now = app.clock.now();
    let key = ReplayKey::new(REPLAY_KIND, client, jti);
    !app.store
        .replays()
        .first_use(&key, now + 60, now)
        .await
        .unwrap()
}

fn jti(claims: &Value) -> &str {
    claims["jti"].as_str().unwrap()
}

fn access_token_client(body: &Value) -> String {
    let token = body["access_token"].as_str().expect("an access token");
    let payload = token.split('.').nth(1).unwrap();
    let payload: Value = serde_json::from_slice(
        &base64::Engine::decode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, payload)
            .unwrap(),
    )
    .unwrap();
    payload["client_id"].as_str().unwrap().to_owned()
}

async fn each_algorithm_authenticates(app: TestApp) {
    let (ec, rsa, ed) = (
        ClientKey::es256("ec"),
        ClientKey::ps256("rsa"),
        ClientKey::eddsa("ed"),
    );
    let client = client_with_keys(&app, &[&ec, &rsa, &ed]).await;
    for key in [&ec, &rsa, &ed] {
        let claims = claims(&app, &client);
        let (status, body) = app_token(&app, &key.sign(&claims)).await;
        assert_eq!(status, StatusCode::OK, "{}: {body}", key.kid);
        assert_eq!(body["principal_type"], "application");
        assert_eq!(access_token_client(&body), client.id);
        assert!(marked_used(&app, &client.id, jti(&claims)).await);

        let unnamed = key.sign_without_kid(&self::claims(&app, &client));
        let (status, body) = app_token(&app, &unnamed).await;
        assert_eq!(status, StatusCode::OK, "{} without kid: {body}", key.kid);
    }
    // `aud` may be the issuer, or the token endpoint, alone or as a list of one.
    for aud in [
        json!(app.address),
        json!([app.url("/oauth2/v0/token")]),
        json!(app.url("/v0/token")),
    ] {
        let assertion = ec.sign(&with(claims(&app, &client), "aud", aud.clone()));
        let (status, body) = app_token(&app, &assertion).await;
        assert_eq!(status, StatusCode::OK, "aud {aud}: {body}");
    }
    // A list naming another server beside us is refused (audience injection).
    let aud = json!(["https://elsewhere.example", app.url("/oauth2/v0/token")]);
    let assertion = ec.sign(&with(claims(&app, &client), "aud", aud.clone()));
    let (status, body) = app_token(&app, &assertion).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "aud {aud}: {body}");
    assert_eq!(body["code"], 63, "{body}");
    // `client_id` may be sent too, when it names the same client; and `exp` may be 5 minutes
    // ahead.
    let claims = with(claims(&app, &client), "exp", json!(app.clock.now() + 300));
    let mut fields = vec![
        ("grant_type", "client_credentials".to_owned()),
        ("client_id", client.id.clone()),
    ];
    fields.extend(assertion_fields(&ec.sign(&claims)));
    let (status, body) = post(&app, "/oauth2/v0/token", &fields).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

async fn assertions_authenticate_at_every_endpoint(app: TestApp) {
    let key = ClientKey::eddsa("k");
    let client = client_with_keys(&app, &[&key]).await;
    let login = format!("pkjwt-{}@example.com", Uuid::new_v4().simple());
    app.create_user(&login, PASSWORD).await;
    let fresh = |path: &str| key.sign(&with(claims(&app, &client), "aud", json!(app.url(path))));

    let mut fields = vec![
        ("grant_type", "password".to_owned()),
        ("username", login.clone()),
        ("password", PASSWORD.to_owned()),
    ];
    fields.extend(assertion_fields(&fresh("/oauth2/v0/token")));
    let (status, tokens) = post(&app, "/oauth2/v0/token", &fields).await;
    assert_eq!(status, StatusCode::OK, "password grant: {tokens}");
    let refresh_token = tokens["refresh_token"].as_str().unwrap().to_owned();

    let mut fields = vec![
        ("grant_type", "refresh_token".to_owned()),
        ("refresh_token", refresh_token),
    ];
    fields.extend(assertion_fields(&fresh("/v0/token")));
    let (status, refreshed) = post(&app, "/v0/token", &fields).await;
    assert_eq!(status, StatusCode::OK, "refresh grant: {refreshed}");
    let access = refreshed["access_token"].as_str().unwrap().to_owned();

    let mut fields = vec![("token", access.clone())];
    fields.extend(assertion_fields(&fresh("/oauth2/v0/introspect")));
    let (status, introspected) = post(&app, "/oauth2/v0/introspect", &fields).await;
    assert_eq!(status, StatusCode::OK, "{introspected}");
    assert_eq!(introspected["active"], true, "{introspected}");
    assert_eq!(introspected["client_id"], client.id.as_str());

    let mut fields = vec![("token", access.clone())];
    fields.extend(assertion_fields(&fresh("/oauth2/v0/revoke")));
    let response = app
        .http
        .post(app.url("/oauth2/v0/revoke"))
        .form(&fields)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);

    let mut fields = vec![("token", access)];
    fields.extend(assertion_fields(&fresh("/oauth2/v0/introspect")));
    let (_, introspected) = post(&app, "/oauth2/v0/introspect", &fields).await;
    assert_eq!(introspected["active"], false, "revoked: {introspected}");

    // The one-time-password request authenticates the client first: with a good assertion it
    // goes on to its own checks (57, no channel_type); with another key's, 63.
    let answer = post(
        &app,
        "/oauth2/v0/otp",
        &assertion_fields(&fresh("/oauth2/v0/otp")),
    )
    .await;
    assert_token_error(&answer, 400, "invalid_request", 57);
    let stranger = ClientKey::eddsa("k");
    let forged = stranger.sign(&with(
        claims(&app, &client),
        "aud",
        json!(app.url("/oauth2/v0/otp")),
    ));
    let answer = post(&app, "/oauth2/v0/otp", &assertion_fields(&forged)).await;
    assert_token_error(&answer, 401, "invalid_client", 63);

    // Beside HTTP Basic an assertion is refused at every endpoint that authenticates clients,
    // with the Basic challenge (RFC 6749 §5.2), not only at the token endpoint.
    let mut fields = vec![("token", "anything".to_owned())];
    fields.extend(assertion_fields(&fresh("/oauth2/v0/introspect")));
    let response = app
        .http
        .post(app.url("/oauth2/v0/introspect"))
        .basic_auth(&client.id, Some("a secret as well"))
        .form(&fields)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert!(
        response.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .starts_with("Basic "),
        "{:?}",
        response.headers()
    );
}

async fn a_replayed_assertion_is_refused(app: TestApp) {
    let key = ClientKey::es256("k");
    let client = client_with_keys(&app, &[&key]).await;
    let assertion = key.sign(&claims(&app, &client));
    let (status, body) = app_token(&app, &assertion).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    for _ in 0..2 {
        assert_token_error(
            &app_token(&app, &assertion).await,
            401,
            "invalid_client",
            63,
        );
    }
    // Another assertion with another jti is fine.
    let (status, body) = app_token(&app, &key.sign(&claims(&app, &client))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

async fn parallel_uses_of_one_assertion_have_one_winner(app: TestApp) {
    let key = ClientKey::es256("k");
    let client = client_with_keys(&app, &[&key]).await;
    let assertion = key.sign(&claims(&app, &client));
    let answers = futures::future::join_all((0..8).map(|_| app_token(&app, &assertion))).await;
    let winners = answers
        .iter()
        .filter(|(status, _)| *status == StatusCode::OK)
        .count();
    assert_eq!(winners, 1, "{answers:?}");
    for answer in answers
        .iter()
        .filter(|(status, _)| *status != StatusCode::OK)
    {
        assert_token_error(answer, 401, "invalid_client", 63);
    }
}

async fn the_secret_keeps_working_beside_the_keys(app: TestApp) {
    let key = ClientKey::es256("k");
    let client = client_with_keys(&app, &[&key]).await;
    app.app_token(&client).await;
    // Keys registered later, as `tokenctl clients set-jwks` does, replace the earlier ones.
    let other = ClientKey::eddsa("other");
    let id = token_domain::ClientId::parse(&client.id).unwrap();
    let set = PublicJwkSet::parse(jwk_set(&[&other])).unwrap();
    admin::set_client_jwks(app.ctx(), &id, set).await.unwrap();
    let (status, body) = app_token(&app, &other.sign(&claims(&app, &client))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_token_error(
        &app_token(&app, &key.sign(&claims(&app, &client))).await,
        401,
        "invalid_client",
        63,
    );
    app.app_token(&client).await;
}

/// `clients set-auth-method`: a client pinned to `private_key_jwt` is refused with its secret,
/// even a right one (answered as a wrong one, 64); pinned to its secret, assertions are refused; `any`
/// takes both again.
async fn a_client_pinned_to_one_method_refuses_the_other(app: TestApp) {
    use token_domain::ClientAuthMethod;
    let key = ClientKey::es256("k");
    let client = client_with_keys(&app, &[&key]).await;
    let id = token_domain::ClientId::parse(&client.id).unwrap();
    let secret_form = [
        ("grant_type", "client_credentials"),
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
    ];

    admin::set_auth_method(app.ctx(), &id, Some(ClientAuthMethod::PrivateKeyJwt))
        .await
        .unwrap();
    let (status, body) = app_token(&app, &key.sign(&claims(&app, &client))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_token_error(&app.token(&secret_form).await, 401, "invalid_client", 64);

    admin::set_auth_method(app.ctx(), &id, Some(ClientAuthMethod::ClientSecret))
        .await
        .unwrap();
    assert_token_error(
        &app_token(&app, &key.sign(&claims(&app, &client))).await,
        401,
        "invalid_client",
        63,
    );
    let (status, body) = app.token(&secret_form).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    admin::set_auth_method(app.ctx(), &id, None).await.unwrap();
    let (status, body) = app_token(&app, &key.sign(&claims(&app, &client))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = app.token(&secret_form).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // Pinning to private_key_jwt needs keys.
    let keyless = app.create_client("read").await;
    let keyless = token_domain::ClientId::parse(&keyless.id).unwrap();
    let refused =
        admin::set_auth_method(app.ctx(), &keyless, Some(ClientAuthMethod::PrivateKeyJwt))
            .await
            .unwrap_err();
    assert!(refused.to_string().contains("no JWK Set"), "{refused}");
}
