//! `GET`/`POST /oauth2/v0/userinfo`: the claims the scopes allow, by header or form field, and
//! the RFC 6750 refusals with their `WWW-Authenticate` challenges.

use crate::support::app::{json_of, TestApp};
use reqwest::{header, StatusCode};
use serde_json::{json, Value};
use token_domain::clock::Clock;

use crate::authorize::flow::assert_id_token;

use super::*;

crate::on_both_stores!(
    userinfo_answers_the_claims_its_scopes_allow,
    userinfo_describes_a_company_and_auth_time_marks_sign_ins,
    userinfo_refuses_with_bearer_challenges,
);

const PATH: &str = "/oauth2/v0/userinfo";

async fn get(app: &TestApp, token: &str) -> (StatusCode, Value) {
    let request = app.http.get(app.url(PATH)).bearer_auth(token);
    json_of(request.send().await.unwrap()).await
}

async fn post_body(app: &TestApp, token: &str) -> (StatusCode, Value) {
    json_of(app.post_form(PATH, &[("access_token", token)]).await).await
}

async fn userinfo_answers_the_claims_its_scopes_allow(app: TestApp) {
    let company = app.create_company("Acme").await;
    let user = app
        .create_user_with(LOGIN, PASSWORD, |u| {
            u.email = Some("Ann@Example.com".into());
            u.company_id = Some(company.id);
        })
        .await;
    let client = oidc_client(&app, "relying party").await;
    let tokens = code_flow_tokens(&app, &client, &[("scope", "openid profile email")]).await;
    let token = tokens["access_token"].as_str().unwrap();
    let expected = json!({
        "sub": user.id.to_string(),
        "principal_type": "user",
        "preferred_username": LOGIN,
        "company_id": company.id.to_string(),
        "email": "Ann@Example.com",
        "email_verified": true,
    });
    let (status, claims) = get(&app, token).await;
    assert_eq!(status, StatusCode::OK, "{claims}");
    assert_eq!(claims, expected);
    let posted = app
        .http
        .post(app.url(PATH))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(json_of(posted).await, (StatusCode::OK, expected.clone()));
    assert_eq!(post_body(&app, token).await, (StatusCode::OK, expected));

    let only_openid = password_tokens(&app, &client, "openid read").await;
    let (status, claims) = get(&app, only_openid["access_token"].as_str().unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        claims,
        json!({"sub": user.id.to_string(), "principal_type": "user"}),
        "no profile, no email"
    );
}

/// A company family (the company password grant with an auth token) reads the company's name and
/// id with `profile`, nothing more without. Its ID token says when the company signed in
/// (`auth_time`, as for users' passwords), and a refreshed one keeps that time (OpenID Connect
/// Core 12.2).
async fn userinfo_describes_a_company_and_auth_time_marks_sign_ins(app: TestApp) {
    let company = app.create_company("Acme").await;
    let admin = app.create_company_admin("boss", PASSWORD, &company).await;
    let client = oidc_client(&app, "company app").await;
    app.enable_company_for(&company, &client).await;
    let now = app.clock.now();
    let auth_token = "auth-token-for-userinfo-0123456789abcdef012345";
    app.put_auth_token(auth_token, &company, &client, &admin)
        .await;
    let company_id = company.id.to_string();
    let grant = |scope: &'static str| {
        let (app, client, company_id) = (&app, &client, company_id.clone());
        async move {
            let (status, tokens) = app
                .password_grant(
                    client,
                    &company_id,
                    auth_token,
                    &[("credtype", "authtoken"), ("scope", scope)],
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{tokens}");
            tokens
        }
    };
    let tokens = grant("openid profile").await;
    let (status, claims) = get(&app, tokens["access_token"].as_str().unwrap()).await;
    assert_eq!(status, StatusCode::OK, "{claims}");
    assert_eq!(
        claims,
        json!({
            "sub": company_id,
            "principal_type": "company",
            "name": "Acme",
            "company_id": company_id,
        })
    );
    let id_token = assert_id_token(&app, &tokens, &company_id, &client, "company").await;
    assert_eq!(id_token["auth_time"], json!(now), "{id_token}");

    app.clock.advance(120);
    let (status, refreshed) = app
        .refresh(&client, tokens["refresh_token"].as_str().unwrap())
        .await;
    assert_eq!(status, StatusCode::OK, "{refreshed}");
    let id_token = assert_id_token(&app, &refreshed, &company_id, &client, "company").await;
    assert_eq!(
        id_token["auth_time"],
        json!(now),
        "the sign-in's: {id_token}"
    );
    assert_eq!(id_token["iat"], json!(now + 120), "{id_token}");

    let bare = grant("openid").await;
    let (status, claims) = get(&app, bare["access_token"].as_str().unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        claims,
        json!({"sub": company_id, "principal_type": "company"}),
        "no profile, no name"
    );
}

#[track_caller]
fn assert_challenge(answer: &reqwest::Response, status: u16, error: &str) {
    assert_eq!(answer.status().as_u16(), status);
    let challenge = answer.headers()[header::WWW_AUTHENTICATE].to_str().unwrap();
    assert!(challenge.starts_with("Bearer "), "{challenge}");
    assert!(
        challenge.contains(&format!("error=\"{error}\"")),
        "{challenge}"
    );
}

async fn refused(app: &TestApp, token: Option<&str>) -> reqwest::Response {
    let mut request = app.http.get(app.url(PATH));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    request.send().await.unwrap()
}

async fn userinfo_refuses_with_bearer_challenges(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = oidc_client(&app, "relying party").await;
    for token in [None, Some("not-a-token")] {
        let answer = refused(&app, token).await;
        assert_challenge(&answer, 401, "invalid_token");
        let (_, body) = json_of(answer).await;
        assert_eq!(body["error"], "invalid_token");
    }
    let answer = app.post_form(PATH, &[]).await;
    assert_challenge(&answer, 401, "invalid_token");

    // Revoked: the access token itself (RFC 7009).
    let tokens = password_tokens(&app, &client, "openid read").await;
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(get(&app, access).await.0, StatusCode::OK);
    let revoked = app
        .post_form(
            "/oauth2/v0/revoke",
            &[
                ("client_id", &client.id),
                ("client_secret", &client.secret),
                ("token", access),
            ],
        )
        .await;
    assert_eq!(revoked.status(), StatusCode::OK);
    assert_challenge(&refused(&app, Some(access)).await, 401, "invalid_token");

    // Expired.
    let tokens = password_tokens(&app, &client, "openid read").await;
    let access = tokens["access_token"].as_str().unwrap();
    app.clock.advance(3600);
    assert_challenge(&refused(&app, Some(access)).await, 401, "invalid_token");

    // No user behind it, or no `openid`: 403.
    let app_token = app.app_token(&client).await;
    let answer = refused(&app, Some(&app_token)).await;
    assert_challenge(&answer, 403, "insufficient_scope");
    assert_eq!(json_of(answer).await.1["error"], "insufficient_scope");
    let without_openid = password_tokens(&app, &client, "read").await;
    let access = without_openid["access_token"].as_str().unwrap();
    assert_challenge(
        &refused(&app, Some(access)).await,
        403,
        "insufficient_scope",
    );

    // One way at a time (RFC 6750 §2).
    let both = app
        .http
        .post(app.url(PATH))
        .bearer_auth(access)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("access_token={access}"))
        .send()
        .await
        .unwrap();
    assert_challenge(&both, 400, "invalid_request");
}
