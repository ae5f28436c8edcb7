//! The company password grant (`credtype=authtoken`) and its refusals, and the geolocation rule
//! (code 16) at another deployment.

use crate::support::app::{field, TestApp, TestClient};
use crate::support::assertions::assert_token_error as assert_error;
use reqwest::StatusCode;
use token_domain::clock::Clock;
use token_domain::secrets::TokenHash;
use token_domain::{AuthToken, ClientId, CompanyStatus, PrincipalId};

use super::PASSWORD;
use crate::authorize::flow::assert_id_token;

crate::on_both_stores!(
    company_password_grant_and_its_errors,
    geolocation_rule_changes_nothing_elsewhere,
);

async fn company_password_grant_and_its_errors(app: TestApp) {
    let app = &app;
    let client = app.create_client("read").await;
    let other = app.create_client("read").await;
    let company = app.create_company("Acme").await;
    let admin_user = app.create_company_admin("boss", PASSWORD, &company).await;
    let client_id = ClientId::parse(&client.id).unwrap();
    let now = app.clock.now();
    let auth_token = "auth-token-for-test-0123456789abcdef0123456789";
    app.store
        .auth_tokens()
        .put_auth_token(&AuthToken {
            token_hash: TokenHash::of(auth_token),
            company_id: company.id,
            client_id,
            issued_by: admin_user.id,
            issued_at: now,
            expires_at: now + 86_400,
        })
        .await
        .unwrap();
    let company_id = company.id.to_string();
    // Not enabled for the client yet.
    assert_error(
        &company_grant(app, &client, &company_id, auth_token).await,
        401,
        "invalid_client",
        53,
    );
    // The same refusal to a client that used HTTP Basic names the scheme (RFC 6749 §5.2).
    let with_basic = app
        .http
        .post(app.url("/v0/token"))
        .basic_auth(&client.id, Some(&client.secret))
        .form(&[
            ("grant_type", "password"),
            ("credtype", "authtoken"),
            ("username", company_id.as_str()),
            ("password", auth_token),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(with_basic.status(), StatusCode::UNAUTHORIZED);
    assert!(
        with_basic.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .starts_with("Basic "),
        "{:?}",
        with_basic.headers()
    );
    app.enable_company_for(&company, &client).await;

    let (status, body) = company_grant(app, &client, &company_id, auth_token).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["principal_type"], "company");
    assert_eq!(body["id"], company_id.as_str());
    let claims = assert_id_token(app, &body, &company_id, &client, "company").await;
    assert!(
        claims.get("nonce").is_none(),
        "no nonce was given: {claims}"
    );
    // Reusable within the window.
    let (status, _) = company_grant(app, &client, &company_id, auth_token).await;
    assert_eq!(status, StatusCode::OK);
    let (status, refreshed) = app.refresh(&client, field(&body, "refresh_token")).await;
    assert_eq!(status, StatusCode::OK, "{refreshed}");
    assert_id_token(app, &refreshed, &company_id, &client, "company").await;

    assert_error(
        &company_grant(app, &other, &company_id, auth_token).await,
        400,
        "invalid_grant",
        105,
    );
    assert_error(
        &company_grant(app, &client, &company_id, "wrong-token").await,
        400,
        "invalid_grant",
        19,
    );
    let elsewhere = PrincipalId::new(uuid::Uuid::new_v4()).to_string();
    assert_error(
        &company_grant(app, &client, &elsewhere, auth_token).await,
        400,
        "invalid_grant",
        19,
    );

    for (status, code) in [
        (CompanyStatus::Maintenance, 134),
        (CompanyStatus::Disabled, 123),
    ] {
        app.set_company_status(&company, status).await;
        assert_error(
            &company_grant(app, &client, &company_id, auth_token).await,
            400,
            "invalid_request",
            code,
        );
    }
    app.set_company_status(&company, CompanyStatus::Active)
        .await;

    app.clock.advance(86_400);
    assert_error(
        &company_grant(app, &client, &company_id, auth_token).await,
        400,
        "invalid_grant",
        19,
    );
}

/// `grant_type=password&credtype=authtoken` for `company` as `client`.
async fn company_grant(
    app: &TestApp,
    client: &TestClient,
    company: &str,
    auth_token: &str,
) -> (StatusCode, serde_json::Value) {
    app.password_grant(client, company, auth_token, &[("credtype", "authtoken")])
        .await
}

async fn geolocation_rule_changes_nothing_elsewhere(app: TestApp) {
    let client = app.create_client("read").await;
    app.create_user("mallory", PASSWORD).await;
    let other_region = app.spawn_other_region().await;

    // client_credentials works at any deployment.
    other_region.app_token(&client).await;

    let at_other = other_region
        .password_grant(&client, "mallory", PASSWORD, &[])
        .await;
    assert_error(&at_other, 400, "invalid_request", 16);
    assert_eq!(at_other.1["geolocation"], app.address.as_str());

    let home = app.user_tokens(&client, "mallory", PASSWORD).await;
    let rt = field(&home, "refresh_token");
    let refresh_elsewhere = other_region.refresh(&client, rt).await;
    assert_error(&refresh_elsewhere, 400, "invalid_request", 16);
    assert_eq!(refresh_elsewhere.1["geolocation"], app.address.as_str());
    // Nothing changed: the token still works at home.
    let (status, body) = app.refresh(&client, rt).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}
