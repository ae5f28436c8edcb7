//! The authorization endpoint's OpenID Connect side: `iss` on every response (RFC 9207),
//! `max_age`/`prompt=login` with `auth_time`, `login_hint`, `id_token_hint`, request objects.

use std::collections::HashMap;

use crate::support::app::TestApp;
use reqwest::{header, StatusCode};
use token_domain::clock::Clock;

use super::*;
use crate::authorize::flow::{csrf, redirect_query, verify_with_jwks, STATE};

crate::on_both_stores!(
    every_authorization_response_names_its_issuer,
    max_age_signs_in_afresh_and_reports_auth_time,
    login_hint_prefills_the_login,
    id_token_hint_names_the_expected_user,
    unsigned_request_objects_and_foreign_request_uris_are_refused,
    an_authorization_request_may_be_posted,
);

async fn redirect_of(app: &TestApp, query: &[(&str, &str)]) -> HashMap<String, String> {
    redirect_query(&Session::new(app).open(query).await)
}

async fn every_authorization_response_names_its_issuer(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = oidc_client(&app, "relying party").await;
    let issuer = app.address.as_str();
    let approved = Session::new(&app)
        .decide(&query(&client, &[]), "approve")
        .await;
    assert_eq!(approved["iss"], issuer);
    assert!(approved.contains_key("code"));
    // Asked again (the approval above is remembered), so that the user may deny.
    let denied = Session::new(&app)
        .decide(&query(&client, &[("prompt", "consent")]), "deny")
        .await;
    assert_eq!(
        (denied["error"].as_str(), denied["iss"].as_str()),
        ("access_denied", issuer)
    );
    for extra in [
        ("display", "bogus"),
        ("prompt", "none"),
        ("scope", "openid admin"),
    ] {
        let refused = redirect_of(&app, &query(&client, &[extra])).await;
        assert_eq!(refused["iss"], issuer, "{extra:?}");
        assert_eq!(refused["state"], STATE, "{extra:?}");
    }
}

async fn max_age_signs_in_afresh_and_reports_auth_time(app: TestApp) {
    let user = app.create_user(LOGIN, PASSWORD).await;
    let client = oidc_client(&app, "relying party").await;
    for extra in [("max_age", "0"), ("prompt", "login")] {
        let mut session = Session::new(&app);
        let query = query(&client, &[extra]);
        let signed_in_at = app.clock.now();
        let answer = session.sign_in_answer(&query, PASSWORD).await;
        app.clock.advance(30);
        // The first round's approval is remembered: the second signs in straight to a code.
        let answer = if answer.status() == StatusCode::OK {
            let consent = answer.text().await.unwrap();
            session
                .post(&[("csrf_token", &csrf(&consent)), ("decision", "approve")])
                .await
        } else {
            answer
        };
        let code = redirect_query(&answer)["code"].clone();
        app.clock.advance(30);
        let (status, tokens) = exchange(&app, &client, &code, &[("code_verifier", "")]).await;
        assert_eq!(status, StatusCode::OK, "{tokens}");
        let (_, claims) = verify_with_jwks(&app, tokens["id_token"].as_str().unwrap()).await;
        assert_eq!(claims["sub"], user.id.to_string());
        assert_eq!(
            claims["auth_time"], signed_in_at,
            "{extra:?}: the sign-in's time"
        );
        assert_eq!(claims["iat"], signed_in_at + 60);
        // OpenID Connect Core 12.2: a refreshed ID token keeps the original sign-in's time, as
        // relying parties that sent `max_age` check it on refresh too.
        app.clock.advance(600);
        let (status, refreshed) = app
            .refresh(&client, tokens["refresh_token"].as_str().unwrap())
            .await;
        assert_eq!(status, StatusCode::OK, "{refreshed}");
        let (_, claims) = verify_with_jwks(&app, refreshed["id_token"].as_str().unwrap()).await;
        assert_eq!(
            claims["auth_time"], signed_in_at,
            "{extra:?}: after a refresh"
        );
        assert_eq!(claims["iat"], signed_in_at + 660);
    }
    let refused = redirect_of(&app, &query(&client, &[("max_age", "soon")])).await;
    assert_eq!(refused["error"], "invalid_request");
}

async fn login_hint_prefills_the_login(app: TestApp) {
    let client = oidc_client(&app, "relying party").await;
    let page = Session::new(&app)
        .open(&query(&client, &[("login_hint", "ann@example.com")]))
        .await;
    assert_eq!(page.status(), StatusCode::OK);
    let html = page.text().await.unwrap();
    assert!(
        html.contains(r#"name="login" value="ann@example.com""#),
        "{html}"
    );
}

async fn id_token_hint_names_the_expected_user(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    app.create_user("bob@example.com", PASSWORD).await;
    let client = oidc_client(&app, "relying party").await;
    let other = oidc_client(&app, "another party").await;
    let hint = password_tokens(&app, &client, "openid read").await["id_token"]
        .as_str()
        .unwrap()
        .to_owned();

    // prompt=none: nobody is signed in without a page, whoever the hint names.
    let silent = redirect_of(
        &app,
        &query(&client, &[("prompt", "none"), ("id_token_hint", &hint)]),
    )
    .await;
    assert_eq!(silent["error"], "login_required");

    // A hint that does not verify is refused, and the answer does not say why.
    let others_hint = password_tokens(&app, &other, "openid read").await["id_token"]
        .as_str()
        .unwrap()
        .to_owned();
    let access_token = password_tokens(&app, &client, "openid read").await["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut tampered: Vec<String> = hint.split('.').map(str::to_owned).collect();
    tampered[2] = tampered[2].chars().rev().collect();
    let tampered = tampered.join(".");
    let mut descriptions = Vec::new();
    for bad in [&others_hint, &access_token, &tampered, "not.a.jwt"] {
        let refused = redirect_of(&app, &query(&client, &[("id_token_hint", bad)])).await;
        assert_eq!(refused["error"], "invalid_request");
        descriptions.push(refused["error_description"].clone());
    }
    descriptions.dedup();
    assert_eq!(descriptions, ["id_token_hint is not valid"]);

    // A valid hint: only that user may sign in.
    let query = query(&client, &[("id_token_hint", &hint)]);
    let mut session = Session::new(&app);
    let page = session.open(&query).await;
    let html = page.text().await.unwrap();
    let wrong = session
        .post(&[
            ("csrf_token", &csrf(&html)),
            ("login", "bob@example.com"),
            ("password", PASSWORD),
        ])
        .await;
    assert_eq!(wrong.status(), StatusCode::OK);
    let html = wrong.text().await.unwrap();
    assert!(html.contains("asked for another account"), "{html}");
    assert!(!html.contains(r#"name="decision""#), "no consent for bob");
    let right = session
        .post(&[
            ("csrf_token", &csrf(&html)),
            ("login", LOGIN),
            ("password", PASSWORD),
        ])
        .await;
    assert_eq!(right.status(), StatusCode::OK);
    assert!(right.text().await.unwrap().contains(r#"name="decision""#));
}

async fn unsigned_request_objects_and_foreign_request_uris_are_refused(app: TestApp) {
    let client = oidc_client(&app, "relying party").await;
    // RFC 9101: an unsigned object never verifies (`invalid_request_object`, 177), answered at
    // the query's registered address.
    let answer = Session::new(&app)
        .open(&query(&client, &[("request", "eyJhbGciOiJub25lIn0.e30.")]))
        .await;
    let refused = redirect_query(&answer);
    assert_eq!(refused["error"], "invalid_request_object");
    assert_eq!(refused["error_code"], "177");
    assert_eq!(refused["iss"], app.address);
    // A request_uri the PAR endpoint did not issue: the error page, nothing fetched.
    let answer = Session::new(&app)
        .open(&query(
            &client,
            &[("request_uri", "https://rp.example/request.jwt")],
        ))
        .await;
    assert_eq!(answer.status(), StatusCode::BAD_REQUEST);
    assert!(!answer.headers().contains_key(header::LOCATION));
}

/// OpenID Connect Core 3.1.2.1: the authorization endpoint takes the request's parameters as a
/// form POST as well as a query, with the same answers.
async fn an_authorization_request_may_be_posted(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = oidc_client(&app, "relying party").await;
    let mut session = Session::new(&app);
    let page = session.post(&query(&client, &[])).await;
    assert_eq!(page.status(), StatusCode::OK);
    assert!(session.cookie.is_some(), "the pending request's cookie");
    let html = page.text().await.unwrap();
    let consent = session
        .post(&[
            ("csrf_token", &csrf(&html)),
            ("login", LOGIN),
            ("password", PASSWORD),
        ])
        .await;
    assert_eq!(consent.status(), StatusCode::OK);
    let consent = consent.text().await.unwrap();
    let answer = session
        .post(&[("csrf_token", &csrf(&consent)), ("decision", "approve")])
        .await;
    let approved = redirect_query(&answer);
    assert_eq!(approved["state"], STATE);
    assert_eq!(approved["iss"], app.address.as_str());
    let (status, tokens) =
        exchange(&app, &client, &approved["code"], &[("code_verifier", "")]).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");

    // Its errors redirect as a query's do; an unknown client is the error page.
    let refused = redirect_query(
        &Session::new(&app)
            .post(&query(&client, &[("prompt", "none")]))
            .await,
    );
    assert_eq!(refused["error"], "login_required");
    assert_eq!(refused["iss"], app.address.as_str());
    let unknown = Session::new(&app)
        .post(&[("client_id", "not-a-client"), ("response_type", "code")])
        .await;
    assert_eq!(unknown.status(), StatusCode::BAD_REQUEST);
}
