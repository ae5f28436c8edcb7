//! A client known by its metadata document runs the code flow: PKCE required of a public one,
//! the consent page the first time (not verified, with the redirect's host) and then remembered
//! (`prompt=none` answers with a code), its URL as `client_id`
//! in the access token, the ID token's `aud`, introspection and after a refresh, one fetch for
//! all of it; `private_key_jwt` with keys at a `jwks_uri`; the cache per `Cache-Control`,
//! clamped between five minutes and a day; the switch off.

use super::*;
use crate::authorize::flow::{exchange, redirect_query, LOGIN, PASSWORD, VERIFIER};
use crate::private_key_jwt::keys::{jwk_set, ClientKey};
use crate::support::app::{json_of, jti_of};
use token_core::auth::client_assertion::ASSERTION_TYPE;
use token_core::flows::authorize::s256_challenge;
use token_domain::clock::Clock;
use token_domain::ClientId;

crate::on_both_stores!(using super::documents;
    a_public_document_client_runs_the_code_flow_and_refreshes,
    a_private_key_jwt_client_signs_with_the_keys_at_its_jwks_uri,
    a_document_is_kept_per_cache_control_between_five_minutes_and_a_day,
    metadata_says_documents_are_supported,
);

mod off {
    use super::*;

    crate::on_both_stores!(using super::super::switched_off;
        switched_off_a_url_is_an_unknown_client_and_nothing_is_fetched,
    );
}

/// The claims of a JWT, unverified (the tests that verify signatures are elsewhere).
fn claims(jwt: &str) -> Value {
    use base64::Engine;
    let payload = jwt.split('.').nth(1).expect("a JWT");
    serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(payload)
            .unwrap(),
    )
    .unwrap()
}

/// The authorize query with PKCE for `client`.
fn pkce_query(client: &TestClient) -> Vec<(&str, String)> {
    query(client, &[("scope", "openid profile")])
        .into_iter()
        .map(|(name, value)| (name, value.to_owned()))
        .chain([
            ("code_challenge", s256_challenge(VERIFIER)),
            ("code_challenge_method", "S256".to_owned()),
            ("nonce", "n-0S6_WzA2Mj".to_owned()),
        ])
        .collect()
}

fn borrowed<'a>(pairs: &'a [(&'a str, String)]) -> Vec<(&'a str, &'a str)> {
    pairs.iter().map(|(n, v)| (*n, v.as_str())).collect()
}

async fn introspect(app: &TestApp, client: &TestClient, token: &str) -> Value {
    let (status, body) = json_of(
        app.post_form(
            "/oauth2/v0/introspect",
            &[("client_id", &client.id), ("token", token)],
        )
        .await,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "introspection: {body}");
    body
}

async fn a_public_document_client_runs_the_code_flow_and_refreshes(documents: Documents) {
    let Documents { app, server, .. } = &documents;
    app.create_user(LOGIN, PASSWORD).await;
    let client = documents.public_client(Some(3600));
    let path = url::Url::parse(&client.id).unwrap().path().to_owned();

    // Without PKCE: an error redirect with code 60, as for every public client.
    let refused = Session::new(app)
        .open(&query(&client, &[("scope", "openid profile")]))
        .await;
    assert_eq!(redirect_query(&refused)["error_code"], "60");

    // The consent page, marked not verified, with the redirect's host.
    let pkce = pkce_query(&client);
    let consent = Session::new(app).sign_in(&borrowed(&pkce), PASSWORD).await;
    assert!(consent.contains("Docs Agent"), "{consent}");
    assert!(consent.contains("not verified"), "{consent}");
    assert!(consent.contains("app.example.com"), "{consent}");

    let approved = Session::new(app).decide(&borrowed(&pkce), "approve").await;
    let (status, tokens) = exchange(app, &client, &approved["code"], &[]).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    let access_token = tokens["access_token"].as_str().unwrap();
    let access = claims(access_token);
    assert_eq!(access["client_id"], client.id, "{access}");
    let id_token = claims(tokens["id_token"].as_str().expect("an ID token"));
    assert_eq!(id_token["aud"], client.id, "{id_token}");
    // Inside, the client is the UUID derived from its URL.
    let stored = app
        .stored_access_token(&jti_of(access_token))
        .await
        .expect("the access token is stored");
    assert_eq!(stored.client_id, ClientId::of_document_url(&client.id));
    assert_eq!(stored.client_url.as_deref(), Some(client.id.as_str()));

    let active = introspect(app, &client, access_token).await;
    assert_eq!(active["active"], true, "{active}");
    assert_eq!(active["client_id"], client.id, "{active}");

    let refresh_token = tokens["refresh_token"].as_str().expect("a refresh token");
    let (status, refreshed) = app.refresh(&client, refresh_token).await;
    assert_eq!(status, StatusCode::OK, "{refreshed}");
    let renewed = refreshed["access_token"].as_str().unwrap();
    assert_eq!(claims(renewed)["client_id"], client.id);
    let successor = refreshed["refresh_token"].as_str().unwrap();
    let active = introspect(app, &client, successor).await;
    assert_eq!(active["client_id"], client.id, "{active}");

    // Approved once, the consent is remembered as any client's: a new sign-in skips the
    // page, and `prompt=none` in that browser answers with a code.
    let mut browser = Session::new(app);
    let again = browser.sign_in_answer(&borrowed(&pkce), PASSWORD).await;
    assert_eq!(again.status(), StatusCode::FOUND, "no consent page again");
    let silent: Vec<(&str, String)> = pkce
        .iter()
        .cloned()
        .chain([("prompt", "none".to_owned())])
        .collect();
    let answered = redirect_query(&browser.open(&borrowed(&silent)).await);
    assert!(answered.contains_key("code"), "{answered:?}");

    // Only the code flow and refresh: another grant is one the client may not use.
    let refused = app
        .token(&[
            ("grant_type", "client_credentials"),
            ("client_id", client.id.as_str()),
        ])
        .await;
    crate::support::assertions::assert_token_error(&refused, 400, "invalid_grant", 60);

    // One fetch answered every page, the token endpoint, introspection and the refresh.
    assert_eq!(server.hits(&path), 1, "fetched once, then kept");
}

async fn a_private_key_jwt_client_signs_with_the_keys_at_its_jwks_uri(documents: Documents) {
    let Documents { app, server, .. } = &documents;
    app.create_user(LOGIN, PASSWORD).await;
    let key = ClientKey::es256("agent-key-1");
    let keys_path = fresh_path("jwks.json");
    server.serve(&keys_path, Served::json(&jwk_set(&[&key]), None));
    let path = fresh_path("client.json");
    let url = documents.url(&path);
    let mut document = public_document(&url);
    document["token_endpoint_auth_method"] = json!("private_key_jwt");
    document["jwks_uri"] = json!(documents.url(&keys_path));
    server.serve(&path, Served::json(&document, Some(600)));
    let client = TestClient {
        id: url.clone(),
        secret: String::new(),
    };

    // A confidential client: PKCE is not required of it.
    let plain = query(&client, &[("scope", "openid profile")]);
    let approved = Session::new(app).decide(&plain, "approve").await;
    let now = app.clock.now();
    let assertion = key.sign(&json!({
        "iss": url, "sub": url, "aud": app.url("/oauth2/v0/token"),
        "iat": now, "exp": now + 60, "jti": Uuid::new_v4().to_string(),
    }));
    let form = [
        ("grant_type", "authorization_code"),
        ("code", approved["code"].as_str()),
        ("redirect_uri", REDIRECT_URI),
        ("client_assertion_type", ASSERTION_TYPE),
        ("client_assertion", assertion.as_str()),
    ];
    let (status, tokens) = app.token(&form).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    assert_eq!(
        claims(tokens["access_token"].as_str().unwrap())["client_id"],
        url
    );

    // Its client_id alone does not authenticate it: it is missing its credential (63), as a
    // registered confidential client would be.
    let (status, refused) = app
        .token(&[
            ("grant_type", "refresh_token"),
            ("client_id", url.as_str()),
            ("refresh_token", tokens["refresh_token"].as_str().unwrap()),
        ])
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert_eq!(refused["code"], 63, "{refused}");
    assert_eq!((server.hits(&path), server.hits(&keys_path)), (1, 1));
}

async fn a_document_is_kept_per_cache_control_between_five_minutes_and_a_day(documents: Documents) {
    let Documents { app, server, .. } = &documents;
    let path = fresh_path("client.json");
    let url = documents.url(&path);
    let serve =
        |max_age: Option<u64>| server.serve(&path, Served::json(&public_document(&url), max_age));
    let authorize = || async {
        let page = open_authorize(app, &url).await;
        assert_eq!(page.status(), StatusCode::OK, "the sign-in page");
    };

    // max-age=600: kept ten minutes.
    serve(Some(600));
    authorize().await;
    authorize().await;
    assert_eq!(server.hits(&path), 1, "kept: not fetched again");
    app.clock.advance(599);
    authorize().await;
    assert_eq!(server.hits(&path), 1, "still fresh after 599 s");
    app.clock.advance(1);
    authorize().await;
    assert_eq!(server.hits(&path), 2, "fetched again at 600 s");

    // max-age=10 is raised to five minutes.
    serve(Some(10));
    app.clock.advance(600);
    authorize().await;
    assert_eq!(server.hits(&path), 3);
    app.clock.advance(11);
    authorize().await;
    assert_eq!(server.hits(&path), 3, "not fetched again after 11 s");
    app.clock.advance(288);
    authorize().await;
    assert_eq!(server.hits(&path), 3, "still kept at 299 s");
    app.clock.advance(1);
    authorize().await;
    assert_eq!(server.hits(&path), 4, "fetched again at 300 s");

    // A year's max-age is cut to a day.
    serve(Some(365 * 86_400));
    app.clock.advance(300);
    authorize().await;
    assert_eq!(server.hits(&path), 5);
    app.clock.advance(86_399);
    authorize().await;
    assert_eq!(server.hits(&path), 5, "kept for a day less a second");
    app.clock.advance(1);
    authorize().await;
    assert_eq!(server.hits(&path), 6, "fetched again after a day");

    // No Cache-Control: five minutes; no-store: five minutes too.
    for cache_control in [None, Some("no-store")] {
        let mut served = Served::json(&public_document(&url), None);
        if let Some(value) = cache_control {
            served.headers.push(("cache-control", value.to_owned()));
        }
        server.serve(&path, served);
        app.clock.advance(86_400);
        authorize().await;
        let fetched = server.hits(&path);
        app.clock.advance(299);
        authorize().await;
        assert_eq!(server.hits(&path), fetched, "{cache_control:?}: kept 299 s");
        app.clock.advance(1);
        authorize().await;
        assert_eq!(server.hits(&path), fetched + 1, "{cache_control:?}: 300 s");
    }
}

async fn metadata_says_documents_are_supported(documents: Documents) {
    let metadata = documents
        .app
        .get_json("/.well-known/oauth-authorization-server")
        .await;
    assert_eq!(metadata["client_id_metadata_document_supported"], true);
    let openid = documents
        .app
        .get_json("/.well-known/openid-configuration")
        .await;
    assert_eq!(openid["client_id_metadata_document_supported"], true);
}

async fn switched_off_a_url_is_an_unknown_client_and_nothing_is_fetched(documents: Documents) {
    let Documents { app, server, .. } = &documents;
    let client = documents.public_client(Some(600));
    let response = open_authorize(app, &client.id).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let page = response.text().await.unwrap();
    assert!(page.contains("not known"), "{page}");
    let (status, body) = app
        .token(&[
            ("grant_type", "authorization_code"),
            ("client_id", client.id.as_str()),
            ("code", "whatever"),
            ("redirect_uri", REDIRECT_URI),
            ("code_verifier", VERIFIER),
        ])
        .await;
    // As for any client_id that names no client and comes without a secret.
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["code"], 63, "{body}");
    assert_eq!(server.all_hits(), 0, "nothing is fetched while off");
    let metadata = app
        .get_json("/.well-known/oauth-authorization-server")
        .await;
    assert_eq!(metadata["client_id_metadata_document_supported"], false);
}
