//! The authorize endpoint with a `request_uri` (RFC 9126 §4): the pushed parameters replace the
//! query's; a `request_uri` is used once, by its own client, within 60 seconds, else the HTML
//! error page; a client that must push is refused without one (175). And the metadata.

use super::*;
use crate::authorize::flow::{exchange, query, Session, LOGIN, PASSWORD, VERIFIER};
use token_core::flows::authorize::s256_challenge;

crate::on_both_stores!(
    the_code_flow_runs_on_a_pushed_request,
    a_request_uri_is_used_once,
    a_request_uri_expires_after_60_seconds,
    another_clients_request_uri_is_refused_and_left_to_its_client,
    unknown_request_uris_are_refused,
    a_client_that_must_push_is_refused_without_a_request_uri,
    metadata_lists_par_and_request_objects,
    pushed_resources_are_the_tokens_audience,
);

mod registered {
    use super::*;

    crate::on_both_stores!(with crate::registration::open(); registration_may_require_pushed_requests);
}

const USED_OR_EXPIRED: &str = "expired or was already used";

async fn the_code_flow_runs_on_a_pushed_request(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = secret_client(&app).await;
    let challenge = s256_challenge(VERIFIER);
    let request_uri = pushed(
        &app,
        &client,
        &parameters(&[
            ("nonce", "pushed-nonce"),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
        ]),
    )
    .await;
    // The query's other parameters are ignored: the pushed ones are used.
    let mut authorize = by_reference(&client, &request_uri);
    authorize.extend([
        ("redirect_uri", "https://evil.example/callback"),
        ("state", "from-the-query"),
        ("scope", "openid admin"),
    ]);
    let redirect = Session::new(&app).decide(&authorize, "approve").await;
    assert_eq!(redirect["state"], STATE, "{redirect:?}");
    assert_eq!(redirect["iss"], app.geolocation().as_str());
    let (status, tokens) = exchange(&app, &client, &redirect["code"], &[]).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    assert_eq!(tokens["scope"], "openid read", "{tokens}");
    let (_, claims) =
        crate::authorize::flow::verify_with_jwks(&app, tokens["id_token"].as_str().unwrap()).await;
    assert_eq!(claims["nonce"], "pushed-nonce");
    // The PKCE challenge was pushed too: the code needs its verifier.
    let request_uri = pushed(
        &app,
        &client,
        &parameters(&[
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
        ]),
    )
    .await;
    let redirect = Session::new(&app)
        .decide(&by_reference(&client, &request_uri), "approve")
        .await;
    let (status, body) = exchange(
        &app,
        &client,
        &redirect["code"],
        &[(
            "code_verifier",
            "another-verifier-of-the-right-length-0123456789",
        )],
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}

async fn open_page(
    app: &TestApp,
    query: &[(&str, &str)],
) -> (StatusCode, header::HeaderMap, String) {
    let response = Session::new(app).open(query).await;
    let (status, headers) = (response.status(), response.headers().clone());
    (status, headers, response.text().await.unwrap())
}

async fn a_request_uri_is_used_once(app: TestApp) {
    let client = secret_client(&app).await;
    let request_uri = pushed(&app, &client, &parameters(&[])).await;
    let (status, _, html) = open_page(&app, &by_reference(&client, &request_uri)).await;
    assert_eq!(status, StatusCode::OK, "the sign-in page: {html}");
    let (status, headers, html) = open_page(&app, &by_reference(&client, &request_uri)).await;
    assert_error_page(status, &headers, &html, USED_OR_EXPIRED);
}

async fn a_request_uri_expires_after_60_seconds(app: TestApp) {
    let client = secret_client(&app).await;
    let fresh = pushed(&app, &client, &parameters(&[])).await;
    let stale = pushed(&app, &client, &parameters(&[])).await;
    app.clock.advance(59);
    let (status, _, html) = open_page(&app, &by_reference(&client, &fresh)).await;
    assert_eq!(status, StatusCode::OK, "valid for 59 seconds: {html}");
    app.clock.advance(1);
    let (status, headers, html) = open_page(&app, &by_reference(&client, &stale)).await;
    assert_error_page(status, &headers, &html, USED_OR_EXPIRED);
}

async fn another_clients_request_uri_is_refused_and_left_to_its_client(app: TestApp) {
    let client = secret_client(&app).await;
    let other = secret_client(&app).await;
    let request_uri = pushed(&app, &client, &parameters(&[])).await;
    let (status, headers, html) = open_page(&app, &by_reference(&other, &request_uri)).await;
    assert_error_page(status, &headers, &html, USED_OR_EXPIRED);
    let (status, _, html) = open_page(&app, &by_reference(&client, &request_uri)).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "its own client may still use it: {html}"
    );
}

async fn unknown_request_uris_are_refused(app: TestApp) {
    let client = secret_client(&app).await;
    for request_uri in [
        "urn:ietf:params:oauth:request_uri:never-issued",
        "urn:ietf:params:oauth:request_uri:",
        "https://app.example.com/request.jwt",
    ] {
        let (status, headers, html) = open_page(&app, &by_reference(&client, request_uri)).await;
        assert_error_page(status, &headers, &html, USED_OR_EXPIRED);
    }
    // Without client_id, as any authorize request.
    let request_uri = pushed(&app, &client, &parameters(&[])).await;
    let (status, headers, html) = open_page(&app, &[("request_uri", &request_uri)]).await;
    assert_error_page(status, &headers, &html, "names no application");
}

async fn a_client_that_must_push_is_refused_without_a_request_uri(app: TestApp) {
    let mut new = NewClient::named("Bank", Scopes::parse("openid read").unwrap());
    new.redirect_uris = vec![REDIRECT_URI.to_owned()];
    new.require_par = true;
    let client = app.create_client_with(new).await;
    let (status, headers, html) = open_page(&app, &query(&client, &[])).await;
    assert_error_page(status, &headers, &html, "175");
    let request_uri = pushed(&app, &client, &parameters(&[])).await;
    let (status, _, html) = open_page(&app, &by_reference(&client, &request_uri)).await;
    assert_eq!(status, StatusCode::OK, "{html}");
    let id = token_domain::ClientId::parse(&client.id).unwrap();
    let stored = app.store.clients().get_client(&id).await.unwrap().unwrap();
    assert!(stored.require_par, "kept in the store");
}

async fn registration_may_require_pushed_requests(app: TestApp) {
    let (status, answer) = crate::registration::register(
        &app,
        &json!({
            "redirect_uris": [REDIRECT_URI],
            "grant_types": ["authorization_code"],
            "require_pushed_authorization_requests": true,
        }),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    assert_eq!(answer["require_pushed_authorization_requests"], true);
    let client = TestClient {
        id: answer["client_id"].as_str().unwrap().to_owned(),
        secret: answer["client_secret"].as_str().unwrap().to_owned(),
    };
    let (status, headers, html) =
        open_page(&app, &query(&client, &[("scope", "openid profile")])).await;
    assert_error_page(status, &headers, &html, "175");
    let request_uri = pushed(&app, &client, &parameters(&[("scope", "openid profile")])).await;
    let (status, _, html) = open_page(&app, &by_reference(&client, &request_uri)).await;
    assert_eq!(status, StatusCode::OK, "{html}");
}

async fn metadata_lists_par_and_request_objects(app: TestApp) {
    for path in [
        "/.well-known/openid-configuration",
        "/.well-known/oauth-authorization-server",
    ] {
        let metadata: Value = app.get_json(path).await;
        assert_eq!(
            metadata["pushed_authorization_request_endpoint"],
            app.url(PAR),
            "{metadata}"
        );
        assert_eq!(metadata["require_pushed_authorization_requests"], false);
        assert_eq!(metadata["request_parameter_supported"], true);
        assert_eq!(
            metadata["request_object_signing_alg_values_supported"],
            json!(["ES256", "PS256", "EdDSA"])
        );
    }
}

/// Resource indicators (RFC 8707) travel with the pushed request: every `resource` pushed is
/// the code's, so the token's `aud`; one not allowed is refused at the push, as JSON with 160.
async fn pushed_resources_are_the_tokens_audience(app: TestApp) {
    const API: &str = "https://api.example.com/mcp";
    const FILES: &str = "https://files.example.com/";
    app.create_user(LOGIN, PASSWORD).await;
    let client = secret_client(&app).await;
    let challenge = s256_challenge(VERIFIER);
    let mut form = parameters(&[
        ("code_challenge", &challenge),
        ("code_challenge_method", "S256"),
    ]);
    form.extend([("resource", API), ("resource", FILES)]);
    let request_uri = pushed(&app, &client, &form).await;
    let redirect = Session::new(&app)
        .decide(&by_reference(&client, &request_uri), "approve")
        .await;
    let (status, tokens) = exchange(&app, &client, &redirect["code"], &[]).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    let claims = app
        .claims_of(tokens["access_token"].as_str().unwrap())
        .await;
    assert_eq!(
        serde_json::to_value(&claims.aud).unwrap(),
        serde_json::json!([API, FILES]),
        "both pushed resources"
    );

    let mut form = parameters(&[]);
    form.push(("resource", "https://api.example.com/mcp#fragment"));
    let (status, refused) = push(&app, &client, &form).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert_eq!(refused["error"], "invalid_target", "{refused}");
    assert_eq!(refused["code"], 160, "{refused}");
}
