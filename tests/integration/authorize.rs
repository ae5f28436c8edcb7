//! The authorization code flow over real HTTP, on both stores (contract part 8): the authorize
//! endpoint's pages and redirects, every error of part 8, the `authorization_code` grant with
//! PKCE, reuse revoking the family, and ID tokens verified against the JWK Set.

pub(crate) mod flow;
mod in_browser;

use flow::*;
use integration_tests::app::TestApp;
use integration_tests::assertions::assert_token_error as assert_error;
use reqwest::{header, StatusCode};
use token_service::admin::{self, NewClient};
use token_service::clock::Clock;
use token_service::domain::{ClientId, GrantType, Scopes, UserStatus};
use token_service::secrets::TokenHash;

integration_tests::on_both_stores!(
    approved_code_exchanges_for_tokens_and_an_id_token,
    id_tokens_accompany_every_user_or_company_family,
    untrusted_client_or_address_is_a_page_never_a_redirect,
    request_errors_redirect_with_catalogue_codes,
    token_request_errors_are_catalogued,
    reused_code_is_refused_and_revokes_the_family,
    sign_in_refusals_are_sentences_and_deny_redirects,
    forms_need_their_csrf_token_and_cookie,
);

async fn approved_code_exchanges_for_tokens_and_an_id_token(app: TestApp) {
    let user = app.create_user(LOGIN, PASSWORD).await;
    let client = code_client(&app).await;
    let challenge = token_service::authorize::s256_challenge(VERIFIER);
    let query = query(
        &client,
        &[
            ("nonce", "n-0S6_WzA2Mj"),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
        ],
    );
    let mut session = Session::new(&app);
    let page = session.open(&query).await;
    assert_eq!(page.status(), StatusCode::OK);
    let headers = page.headers().clone();
    assert_eq!(headers[header::X_FRAME_OPTIONS], "DENY");
    assert_eq!(headers[header::CACHE_CONTROL], "no-store");
    let csp = headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
    assert!(
        csp.contains("form-action 'self' https://app.example.com"),
        "{csp}"
    );
    let set_cookie = headers[header::SET_COOKIE].to_str().unwrap();
    assert!(set_cookie.contains("HttpOnly") && set_cookie.contains("SameSite=Lax"));
    assert!(page.text().await.unwrap().contains(APP_NAME));

    let consent = session.sign_in(&query, PASSWORD).await;
    assert!(consent.contains(APP_NAME), "{consent}");
    assert!(consent.contains("Confirm who you are when you sign in"));
    let answer = session
        .post(&[("csrf_token", &csrf(&consent)), ("decision", "approve")])
        .await;
    let cleared = answer.headers()[header::SET_COOKIE].to_str().unwrap();
    assert!(cleared.contains("Max-Age=0"), "{cleared}");
    let redirect = redirect_query(&answer);
    assert_eq!(redirect["state"], STATE);
    assert_eq!(redirect["geolocation"], app.geolocation().as_str());
    let code = &redirect["code"];
    assert_eq!(code.len(), 43, "256 bits, base64url");

    let stored = app
        .store
        .get_authorization_code(&TokenHash::of(code), app.clock.now())
        .await
        .unwrap()
        .expect("the code is stored under its hash");
    assert!(stored.redeemed_at.is_none());
    assert!(
        !app.data.contains(code).await,
        "the code is never stored in clear"
    );

    let (status, body) = exchange(&app, &client, code, &[]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["principal_type"], "user");
    assert_eq!(body["id"], user.id.to_string());
    assert_eq!(body["scope"], "openid read");
    assert!(body["refresh_token"].is_string());
    let access_token = body["access_token"].as_str().unwrap();
    let (header, claims) = verify_with_jwks(&app, body["id_token"].as_str().unwrap()).await;
    assert_ne!(
        header["typ"], "at+jwt",
        "an ID token is not an access token"
    );
    assert_eq!(claims["iss"], app.geolocation().as_str());
    assert_eq!(claims["sub"], user.id.to_string());
    assert_eq!(claims["aud"], client.id);
    assert_eq!(claims["nonce"], "n-0S6_WzA2Mj");
    assert_eq!(claims["principal_type"], "user");
    assert_eq!(claims["at_hash"], at_hash(access_token));
    assert_eq!(claims["nbf"], claims["iat"]);
    assert_eq!(
        claims["exp"].as_i64().unwrap() - claims["iat"].as_i64().unwrap(),
        3600
    );
}

async fn id_tokens_accompany_every_user_or_company_family(app: TestApp) {
    let user = app.create_user(LOGIN, PASSWORD).await;
    let client = app.create_client("openid read").await;
    let tokens = app.user_tokens(&client, LOGIN, PASSWORD).await;
    let (_, claims) = verify_with_jwks(&app, tokens["id_token"].as_str().unwrap()).await;
    assert_eq!(claims["sub"], user.id.to_string());
    assert!(claims.get("nonce").is_none(), "no nonce was given");
    assert_eq!(
        claims["at_hash"],
        at_hash(tokens["access_token"].as_str().unwrap())
    );

    let (status, refreshed) = app
        .token(&[
            ("grant_type", "refresh_token"),
            ("client_id", &client.id),
            ("client_secret", &client.secret),
            ("refresh_token", tokens["refresh_token"].as_str().unwrap()),
        ])
        .await;
    assert_eq!(status, StatusCode::OK, "{refreshed}");
    let (_, claims) = verify_with_jwks(&app, refreshed["id_token"].as_str().unwrap()).await;
    assert_eq!(
        claims["at_hash"],
        at_hash(refreshed["access_token"].as_str().unwrap())
    );

    let (status, application) = app
        .token(&[
            ("grant_type", "client_credentials"),
            ("client_id", &client.id),
            ("client_secret", &client.secret),
        ])
        .await;
    assert_eq!(status, StatusCode::OK);
    assert!(application.get("id_token").is_none(), "{application}");
}

#[track_caller]
fn assert_refused_page(
    status: StatusCode,
    headers: &reqwest::header::HeaderMap,
    html: &str,
    says: &str,
) {
    assert_eq!(status, StatusCode::BAD_REQUEST, "{html}");
    assert!(headers.get(header::LOCATION).is_none(), "never redirected");
    assert!(headers[header::CONTENT_TYPE]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    assert_eq!(headers[header::X_FRAME_OPTIONS], "DENY");
    assert!(html.contains(says), "{html}");
}

async fn untrusted_client_or_address_is_a_page_never_a_redirect(app: TestApp) {
    let client = code_client(&app).await;
    let unknown = ClientId::new(uuid::Uuid::new_v4()).to_string();
    let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (
            query(&client, &[])
                .into_iter()
                .filter(|(n, _)| *n != "client_id")
                .collect(),
            "names no application",
        ),
        (query(&client, &[("client_id", &unknown)]), "is not known"),
        (
            query(&client, &[])
                .into_iter()
                .filter(|(n, _)| *n != "redirect_uri")
                .collect(),
            "does not say where to return",
        ),
        (
            // Every other parameter wrong too: the unregistered address still wins.
            query(
                &client,
                &[
                    ("redirect_uri", "https://evil.example/callback"),
                    ("display", "bogus"),
                ],
            ),
            "not registered for this application",
        ),
    ];
    for (query, says) in cases {
        let response = Session::new(&app).open(&query).await;
        let (status, headers) = (response.status(), response.headers().clone());
        let html = response.text().await.unwrap();
        assert_refused_page(status, &headers, &html, says);
        assert!(!html.contains("evil.example"));
    }
}

/// Extra authorize parameters, and the redirect's `error_code`, `error`, `error_description`.
type RedirectCase<'a> = (Vec<(&'a str, &'a str)>, &'a str, &'a str, &'a str);

async fn request_errors_redirect_with_catalogue_codes(app: TestApp) {
    let client = code_client(&app).await;
    let cases: Vec<RedirectCase> = vec![
        (
            vec![("response_type", "code id_token")],
            "117",
            "invalid_request",
            "nonce is mandatory for this response_type",
        ),
        (
            vec![("display", "desktop")],
            "118",
            "invalid_request",
            "display is invalid",
        ),
        (
            vec![("prompt", "select_account")],
            "119",
            "invalid_request",
            "prompt is invalid",
        ),
        (
            vec![("scope", "openid offline_access")],
            "119",
            "invalid_request",
            "prompt must be set to consent for offline_access",
        ),
        (
            vec![("scope", "openid admin")],
            "54",
            "invalid_scope",
            "requested scope exceeds granted scope",
        ),
        (
            vec![
                (
                    "code_challenge",
                    "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
                ),
                ("code_challenge_method", "plain"),
            ],
            "60",
            "invalid_grant",
            "these are not the grants you are looking for",
        ),
        (
            vec![("prompt", "none")],
            "119",
            "login_required",
            "prompt=none cannot be honoured: no sign-in session is kept",
        ),
    ];
    for (extra, code, error, description) in cases {
        let response = Session::new(&app).open(&query(&client, &extra)).await;
        let redirect = redirect_query(&response);
        assert_eq!(redirect["error_code"], code, "{extra:?}");
        assert_eq!(redirect["error"], error, "{extra:?}");
        assert_eq!(redirect["error_description"], description, "{extra:?}");
        assert_eq!(redirect["state"], STATE);
        assert!(!redirect.contains_key("code"));
    }
    // offline_access with prompt=consent is fine.
    let response = Session::new(&app)
        .open(&query(
            &client,
            &[("scope", "openid offline_access"), ("prompt", "consent")],
        ))
        .await;
    assert_eq!(response.status(), StatusCode::OK);

    // A client without the grant (60), a disabled client (59).
    let mut new = NewClient::named("no code flow", Scopes::parse("openid read").unwrap());
    new.redirect_uris = vec![REDIRECT_URI.to_owned()];
    new.grants.remove(&GrantType::AuthorizationCode);
    let without = app.create_client_with(new).await;
    let redirect = redirect_query(&Session::new(&app).open(&query(&without, &[])).await);
    assert_eq!(redirect["error_code"], "60");
    admin::disable_client(app.ctx(), &ClientId::parse(&client.id).unwrap())
        .await
        .unwrap();
    let redirect = redirect_query(&Session::new(&app).open(&query(&client, &[])).await);
    assert_eq!(redirect["error_code"], "59");
    assert_eq!(redirect["error"], "access_denied");
}

async fn token_request_errors_are_catalogued(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = code_client(&app).await;
    let other = code_client(&app).await;
    let code = approved_code(&app, &client).await;

    assert_error(
        &exchange(&app, &client, &code, &[("code", "")]).await,
        400,
        "invalid_request",
        101,
    );
    assert_error(
        &exchange(&app, &client, &code, &[("redirect_uri", "")]).await,
        400,
        "invalid_request",
        102,
    );
    assert_error(
        &exchange(&app, &client, "not-a-code", &[]).await,
        400,
        "invalid_request",
        103,
    );
    assert_error(
        &exchange(
            &app,
            &client,
            &code,
            &[("redirect_uri", "https://app.example.com/other")],
        )
        .await,
        400,
        "invalid_grant",
        104,
    );
    assert_error(
        &exchange(&app, &other, &code, &[]).await,
        400,
        "invalid_grant",
        105,
    );
    // PKCE: a wrong verifier, or none, is 103; the code is still good afterwards.
    let wrong = "wrong-verifier-wrong-verifier-wrong-verifier-0";
    assert_error(
        &exchange(&app, &client, &code, &[("code_verifier", wrong)]).await,
        400,
        "invalid_request",
        103,
    );
    assert_error(
        &exchange(&app, &client, &code, &[("code_verifier", "")]).await,
        400,
        "invalid_request",
        103,
    );
    // A client that may not use the grant: 60 before anything about the code.
    let mut new = NewClient::named("no code flow", Scopes::parse("openid").unwrap());
    new.grants.remove(&GrantType::AuthorizationCode);
    let without = app.create_client_with(new).await;
    assert_error(
        &exchange(&app, &without, &code, &[]).await,
        400,
        "invalid_grant",
        60,
    );

    // Five minutes later the code has expired.
    app.clock.advance(300);
    assert_error(
        &exchange(&app, &client, &code, &[]).await,
        400,
        "invalid_request",
        103,
    );
}

async fn reused_code_is_refused_and_revokes_the_family(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = code_client(&app).await;
    let code = approved_code(&app, &client).await;
    let (status, first) = exchange(&app, &client, &code, &[]).await;
    assert_eq!(status, StatusCode::OK, "{first}");

    assert_error(
        &exchange(&app, &client, &code, &[]).await,
        400,
        "invalid_request",
        103,
    );
    // The family the first use created is revoked: its refresh token no longer works.
    let (status, body) = app
        .token(&[
            ("grant_type", "refresh_token"),
            ("client_id", &client.id),
            ("client_secret", &client.secret),
            ("refresh_token", first["refresh_token"].as_str().unwrap()),
        ])
        .await;
    assert_error(&(status, body), 400, "invalid_grant", 108);
}

async fn sign_in_refusals_are_sentences_and_deny_redirects(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    app.create_user_with("dora@example.com", PASSWORD, |u| {
        u.status = UserStatus::Disabled
    })
    .await;
    let client = code_client(&app).await;
    let query = query(&client, &[]);

    let page = Session::new(&app).sign_in(&query, "wrong password").await;
    assert!(
        page.contains("The login or password is not correct."),
        "{page}"
    );
    assert!(
        page.contains(r#"value="ann@example.com""#),
        "the login is kept"
    );
    assert!(!page.contains("invalid_grant") && !page.contains("Allow access"));

    let mut session = Session::new(&app);
    let html = session.open(&query).await.text().await.unwrap();
    let answer = session
        .post(&[
            ("csrf_token", &csrf(&html)),
            ("login", "dora@example.com"),
            ("password", PASSWORD),
        ])
        .await;
    let page = answer.text().await.unwrap();
    assert!(page.contains("This account is disabled."), "{page}");

    let redirect = Session::new(&app).decide(&query, "deny").await;
    assert_eq!(redirect["error"], "access_denied");
    assert_eq!(redirect["error_code"], "12");
    assert_eq!(redirect["state"], STATE);
    assert!(!redirect.contains_key("code"));
}

async fn forms_need_their_csrf_token_and_cookie(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = code_client(&app).await;
    let query = query(&client, &[]);
    let mut session = Session::new(&app);
    let html = session.open(&query).await.text().await.unwrap();
    let token = csrf(&html);
    // The sign-in token does not answer the consent form, and a forged one nothing.
    for form in [
        vec![("csrf_token", token.as_str()), ("decision", "approve")],
        vec![
            ("csrf_token", "forged"),
            ("login", LOGIN),
            ("password", PASSWORD),
        ],
    ] {
        let response = session.post(&form).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
        assert!(response.headers().get(header::LOCATION).is_none());
    }
    // Without the cookie the form means nothing either.
    let response = Session::new(&app)
        .post(&[
            ("csrf_token", token.as_str()),
            ("login", LOGIN),
            ("password", PASSWORD),
        ])
        .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
}
