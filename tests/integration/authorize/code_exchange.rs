//! The `authorization_code` grant after an approved sign-in (RFC 6749 §4.1.3): tokens and an ID
//! token verified against the JWK Set, ID tokens on every user or company family, the grant's
//! catalogued refusals, and reuse revoking the family.

use crate::support::app::TestApp;
use crate::support::assertions::assert_token_error as assert_error;
use reqwest::{header, StatusCode};
use token_core::admin::NewClient;
use token_domain::clock::Clock;
use token_domain::secrets::TokenHash;
use token_domain::{GrantType, Scopes};

use super::flow::*;

crate::on_both_stores!(
    approved_code_exchanges_for_tokens_and_an_id_token,
    id_tokens_accompany_every_user_or_company_family,
    token_request_errors_are_catalogued,
    reused_code_is_refused_and_revokes_the_family,
);

async fn approved_code_exchanges_for_tokens_and_an_id_token(app: TestApp) {
    let user = app.create_user(LOGIN, PASSWORD).await;
    let client = code_client(&app).await;
    let challenge = token_core::flows::authorize::s256_challenge(VERIFIER);
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
        .authorization_codes()
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

    // None of the refusals spent the code: it still redeems, once.
    let (status, body) = exchange(&app, &client, &code, &[]).await;
    assert_eq!(status, StatusCode::OK, "after the refusals: {body}");

    // A code lives five minutes: a fresh one redeems at +299 s, another is refused at +300 s.
    let just_in_time = approved_code(&app, &client).await;
    let too_late = approved_code(&app, &client).await;
    app.clock.advance(299);
    let (status, body) = exchange(&app, &client, &just_in_time, &[]).await;
    assert_eq!(status, StatusCode::OK, "a code 299 s old: {body}");
    app.clock.advance(1);
    assert_error(
        &exchange(&app, &client, &too_late, &[]).await,
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
