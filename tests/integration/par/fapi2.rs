//! The FAPI 2.0 Security Profile per client (`--profile fapi2`): requests only through PAR
//! (175), PKCE `S256` (60), `response_type=code` only (60), `private_key_jwt` only (63), a DPoP
//! proof on every token request (150), codes valid 60 seconds, refresh tokens kept rather than
//! rotated; `clients set-profile default` lifts it.

use super::*;
use crate::authorize::flow::{query, Session, LOGIN, PASSWORD, VERIFIER};
use crate::dpop::{token_with, DpopKey};
use token_core::admin;
use token_core::auth::client_assertion::ASSERTION_TYPE;
use token_core::flows::authorize::s256_challenge;
use token_domain::secrets::TokenHash;
use token_domain::{ClientId, ClientProfile, GrantType};
use uuid::Uuid;

crate::on_both_stores!(
    a_fapi2_client_runs_the_whole_profile,
    a_fapi2_client_is_refused_what_the_profile_forbids,
);

async fn fapi2_client(app: &TestApp, key: &ClientKey) -> TestClient {
    let mut new = NewClient::named("Bank", Scopes::parse("openid read").unwrap());
    new.grants = [GrantType::AuthorizationCode, GrantType::RefreshToken].into();
    new.redirect_uris = vec![REDIRECT_URI.to_owned()];
    new.jwks = Some(PublicJwkSet::parse(jwk_set(&[key])).unwrap());
    new.profile = ClientProfile::Fapi2;
    app.create_client_with(new).await
}

/// A fresh assertion by `client`: `aud` the issuer, as a string, the only audience a FAPI 2.0
/// client's assertion may name (`_path` is the endpoint it is sent to, which it may not name).
fn assertion(app: &TestApp, key: &ClientKey, client: &TestClient, _path: &str) -> String {
    assertion_for(app, key, client, &json!(app.geolocation().as_str()))
}

fn assertion_for(app: &TestApp, key: &ClientKey, client: &TestClient, aud: &Value) -> String {
    let now = app.clock.now();
    key.sign(&json!({
        "iss": client.id, "sub": client.id, "aud": aud,
        "iat": now, "exp": now + 60, "jti": Uuid::new_v4().to_string(),
    }))
}

async fn push_signed(
    app: &TestApp,
    key: &ClientKey,
    client: &TestClient,
    extra: &[(&str, &str)],
) -> Answer {
    let assertion = assertion(app, key, client, PAR);
    let mut form = vec![
        ("client_assertion_type", ASSERTION_TYPE),
        ("client_assertion", assertion.as_str()),
    ];
    form.extend(parameters(extra));
    json_of(app.post_form(PAR, &form).await).await
}

async fn a_fapi2_client_runs_the_whole_profile(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let key = ClientKey::es256("bank");
    let client = fapi2_client(&app, &key).await;
    let challenge = s256_challenge(VERIFIER);
    let pkce = [
        ("code_challenge", challenge.as_str()),
        ("code_challenge_method", "S256"),
    ];
    let (status, body) = push_signed(&app, &key, &client, &pkce).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let request_uri = body["request_uri"].as_str().unwrap();
    let redirect = Session::new(&app)
        .decide(&by_reference(&client, request_uri), "approve")
        .await;
    assert_eq!(redirect["iss"], app.geolocation().as_str());
    let code = redirect["code"].clone();
    let stored = app
        .store
        .authorization_codes()
        .get_authorization_code(&TokenHash::of(&code), app.clock.now())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.expires_at - stored.issued_at, 60, "codes live 60 s");

    let token_assertion = assertion(&app, &key, &client, "/oauth2/v0/token");
    let form = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", REDIRECT_URI),
        ("code_verifier", VERIFIER),
        ("client_assertion_type", ASSERTION_TYPE),
        ("client_assertion", token_assertion.as_str()),
    ];
    let (status, _, body) = token_with(&app, &form, &[]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["code"], 150, "no DPoP proof: {body}");
    let dpop = DpopKey::generate();
    let token_assertion = assertion(&app, &key, &client, "/oauth2/v0/token");
    let form = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", REDIRECT_URI),
        ("code_verifier", VERIFIER),
        ("client_assertion_type", ASSERTION_TYPE),
        ("client_assertion", token_assertion.as_str()),
    ];
    let (status, _, tokens) = token_with(&app, &form, &[&dpop.token_proof(&app)]).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    assert_eq!(tokens["token_type"], "DPoP");
    let refresh_token = tokens["refresh_token"].as_str().unwrap().to_owned();

    // The refresh token is kept (sliding), not rotated.
    let refresh_assertion = assertion(&app, &key, &client, "/oauth2/v0/token");
    let form = [
        ("grant_type", "refresh_token"),
        ("refresh_token", refresh_token.as_str()),
        ("client_assertion_type", ASSERTION_TYPE),
        ("client_assertion", refresh_assertion.as_str()),
    ];
    let (status, _, refreshed) = token_with(&app, &form, &[&dpop.token_proof(&app)]).await;
    assert_eq!(status, StatusCode::OK, "{refreshed}");
    assert_eq!(
        refreshed["refresh_token"],
        refresh_token.as_str(),
        "{refreshed}"
    );
}

async fn a_fapi2_client_is_refused_what_the_profile_forbids(app: TestApp) {
    let key = ClientKey::es256("bank");
    let client = fapi2_client(&app, &key).await;
    let challenge = s256_challenge(VERIFIER);
    let pkce = [
        ("code_challenge", challenge.as_str()),
        ("code_challenge_method", "S256"),
    ];
    // Not pushed: 175, even with a signed request object.
    let response = Session::new(&app).open(&query(&client, &pkce)).await;
    let (status, headers) = (response.status(), response.headers().clone());
    assert_error_page(status, &headers, &response.text().await.unwrap(), "175");
    let object = key.sign(&object_claims(&app, &client));
    let by_value = [
        ("client_id", client.id.as_str()),
        ("request", object.as_str()),
    ];
    let response = Session::new(&app).open(&by_value).await;
    let (status, headers) = (response.status(), response.headers().clone());
    assert_error_page(status, &headers, &response.text().await.unwrap(), "175");
    // Without PKCE: 60.
    let answer = push_signed(&app, &key, &client, &[]).await;
    assert_refused(&answer, 400, "invalid_request", 60);
    // Another response_type than code: 60.
    let mut hybrid = pkce.to_vec();
    hybrid.extend([("response_type", "code id_token"), ("nonce", "n")]);
    let answer = push_signed(&app, &key, &client, &hybrid).await;
    assert_refused(&answer, 400, "unsupported_response_type", 60);
    // Authenticated by its secret, even the right one: 63.
    let answer = push(&app, &client, &parameters(&pkce)).await;
    assert_refused(&answer, 401, "invalid_client", 63);
    // An assertion naming an endpoint, or the issuer in an array: 63 (FAPI 2.0 §5.3.2.1).
    for aud in [
        json!(app.url(PAR)),
        json!(app.url("/oauth2/v0/token")),
        json!([app.geolocation().as_str()]),
    ] {
        let assertion = assertion_for(&app, &key, &client, &aud);
        let mut form = vec![
            ("client_assertion_type", ASSERTION_TYPE),
            ("client_assertion", assertion.as_str()),
        ];
        form.extend(parameters(&pkce));
        let answer = json_of(app.post_form(PAR, &form).await).await;
        assert_refused(&answer, 401, "invalid_client", 63);
    }

    // Back to the default profile: the same request needs no push.
    let id = ClientId::parse(&client.id).unwrap();
    admin::set_profile(app.ctx(), &id, ClientProfile::Default)
        .await
        .unwrap();
    let response = Session::new(&app).open(&query(&client, &pkce)).await;
    assert_eq!(response.status(), StatusCode::OK);
}
