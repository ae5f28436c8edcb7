//! The PAR endpoint: every client authentication the token endpoint accepts (HTTP Basic,
//! `private_key_jwt`, a public client's `client_id`), only a digest of the `request_uri` stored,
//! and the authorize endpoint's refusals as JSON with their codes.

use super::*;
use crate::private_key_jwt::keys::ClientKey;
use token_core::auth::client_assertion::ASSERTION_TYPE;
use token_domain::secrets::TokenHash;
use token_domain::ClientId;
use uuid::Uuid;

crate::on_both_stores!(
    a_secret_client_pushes_with_http_basic,
    a_private_key_jwt_client_pushes_with_an_assertion,
    each_authorize_refusal_is_json_with_its_code,
    client_authentication_failures_are_401,
);

mod public {
    use super::*;

    crate::on_both_stores!(with crate::registration::open(); a_public_client_pushes_with_its_client_id);
}

async fn a_secret_client_pushes_with_http_basic(app: TestApp) {
    let client = secret_client(&app).await;
    let form = parameters(&[]);
    let response = app
        .http
        .post(app.url(PAR))
        .basic_auth(&client.id, Some(&client.secret))
        .form(&form)
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.headers()[header::CACHE_CONTROL],
        "no-store",
        "a request_uri is not cached"
    );
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["expires_in"], 60);
    let request_uri = body["request_uri"].as_str().unwrap();
    let random = request_uri.strip_prefix(REQUEST_URI_PREFIX).unwrap();
    assert!(random.len() >= 32, "{request_uri}");
    // Stored under the digest of its random part, for this client only.
    let now = app.clock.now();
    let id = ClientId::parse(&client.id).unwrap();
    let pushed = app.store.pushed_authorizations();
    let other = ClientId::new(Uuid::new_v4());
    assert!(pushed
        .take_pushed_authorization(&TokenHash::of(request_uri), &id, now)
        .await
        .unwrap()
        .is_none());
    assert!(pushed
        .take_pushed_authorization(&TokenHash::of(random), &other, now)
        .await
        .unwrap()
        .is_none());
    let record = pushed
        .take_pushed_authorization(&TokenHash::of(random), &id, now)
        .await
        .unwrap()
        .expect("the pushed request, by the digest of its random part");
    assert_eq!(record.parameters["redirect_uri"], REDIRECT_URI);
    assert_eq!(record.parameters["state"], STATE);
    assert!(
        !record.parameters.contains_key("client_secret"),
        "credentials are not kept"
    );
    assert_eq!(record.expires_at, now + 60);
}

async fn a_private_key_jwt_client_pushes_with_an_assertion(app: TestApp) {
    let key = ClientKey::es256("par-key");
    let client = client_with_key(&app, &key).await;
    let now = app.clock.now();
    let assertion = key.sign(&json!({
        "iss": client.id, "sub": client.id, "aud": app.url(PAR),
        "iat": now, "exp": now + 60, "jti": Uuid::new_v4().to_string(),
    }));
    let mut form = vec![
        ("client_assertion_type", ASSERTION_TYPE),
        ("client_assertion", assertion.as_str()),
    ];
    form.extend(parameters(&[]));
    let (status, body) = json_of(app.post_form(PAR, &form).await).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    // The assertion's jti is used once, here too.
    let (status, body) = json_of(app.post_form(PAR, &form).await).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_eq!(body["code"], 63, "{body}");
}

async fn a_public_client_pushes_with_its_client_id(app: TestApp) {
    let (status, answer) = crate::registration::register(
        &app,
        &json!({
            "redirect_uris": [REDIRECT_URI],
            "grant_types": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_method": "none",
        }),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    let id = answer["client_id"].as_str().unwrap().to_owned();
    let challenge = token_core::flows::authorize::s256_challenge(crate::authorize::flow::VERIFIER);
    let with_pkce = parameters(&[
        ("scope", "openid profile"),
        ("code_challenge", &challenge),
        ("code_challenge_method", "S256"),
    ]);
    let mut form = vec![("client_id", id.as_str())];
    form.extend(with_pkce);
    let (status, body) = json_of(app.post_form(PAR, &form).await).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    // Without PKCE, as the authorize endpoint would redirect: code 60.
    let mut form = vec![("client_id", id.as_str())];
    form.extend(parameters(&[("scope", "openid profile")]));
    let answer = json_of(app.post_form(PAR, &form).await).await;
    assert_refused(&answer, 400, "invalid_request", 60);
}

/// A pushed request's parameters.
type Form<'a> = Vec<(&'a str, &'a str)>;

async fn each_authorize_refusal_is_json_with_its_code(app: TestApp) {
    let client = secret_client(&app).await;
    let cases: Vec<(Form, &str, u64)> = vec![
        (
            parameters(&[("response_type", "token")]),
            "unsupported_response_type",
            60,
        ),
        (
            parameters(&[("scope", "openid admin")]),
            "invalid_scope",
            54,
        ),
        (parameters(&[("display", "bogus")]), "invalid_request", 118),
        (
            parameters(&[("prompt", "sometimes")]),
            "invalid_request",
            119,
        ),
        (
            parameters(&[("scope", "openid offline_access")]),
            "invalid_request",
            119,
        ),
        (
            parameters(&[("response_type", "code id_token")]),
            "invalid_request",
            117,
        ),
        (
            parameters(&[
                ("code_challenge", "abc"),
                ("code_challenge_method", "plain"),
            ]),
            "invalid_request",
            60,
        ),
        (
            parameters(&[])
                .into_iter()
                .filter(|(n, _)| *n != "redirect_uri")
                .collect(),
            "invalid_request",
            102,
        ),
        (
            parameters(&[("redirect_uri", "https://evil.example/callback")]),
            "invalid_request",
            400,
        ),
        (
            parameters(&[("request_uri", "urn:ietf:params:oauth:request_uri:x")]),
            "invalid_request",
            400,
        ),
    ];
    for (form, error, code) in cases {
        let answer = push(&app, &client, &form).await;
        assert_refused(&answer, 400, error, code);
    }
}

async fn client_authentication_failures_are_401(app: TestApp) {
    let client = secret_client(&app).await;
    let response = app
        .http
        .post(app.url(PAR))
        .basic_auth(&client.id, Some("wrong"))
        .form(&parameters(&[]))
        .send()
        .await
        .unwrap();
    assert!(response.headers().contains_key(header::WWW_AUTHENTICATE));
    let answer = json_of(response).await;
    assert_refused(&answer, 401, "invalid_client", 64);
    let unknown = TestClient {
        id: Uuid::new_v4().to_string(),
        secret: client.secret.clone(),
    };
    assert_refused(
        &push(&app, &unknown, &parameters(&[])).await,
        401,
        "invalid_client",
        61,
    );
    // A confidential client without its secret: 63, as at the token endpoint.
    let mut form = vec![("client_id", client.id.as_str())];
    form.extend(parameters(&[]));
    let answer = json_of(app.post_form(PAR, &form).await).await;
    assert_refused(&answer, 400, "invalid_request", 63);
}
