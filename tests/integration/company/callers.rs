//! Who may call: no, bad or non-user bearer tokens (401), users who do not administer the
//! company (403), unknown companies (404) and disabled administrators.

use super::*;
use crate::support::app::{answer_of, json_of, TestApp};
use crate::support::assertions::{assert_company_error as assert_fail, assert_not_cached};
use reqwest::StatusCode;
use token_domain::UserStatus;

crate::on_both_stores!(
    unauthenticated_callers_get_401,
    non_administrators_get_403,
    unknown_company_404_and_disabled_administrator,
);

/// No, bad, expired or non-user bearer tokens: 401 with a Bearer challenge.
async fn unauthenticated_callers_get_401(app: TestApp) {
    let w = World::new(app).await;
    let company = w.company_id();
    let form = [("client_id", w.crm.id.as_str())];

    let response = w
        .post(&company, None, &[])
        .form(&form)
        .send()
        .await
        .unwrap();
    assert_not_cached(response.headers());
    assert_challenged(response).await;

    let response = w
        .post(&company, Some("not-a-jwt"), &[])
        .form(&form)
        .send()
        .await
        .unwrap();
    assert!(response.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .contains("error=\"invalid_token\""));
    assert_fail(&json_of(response).await, 401, "invalid_token", 401);

    // The admin's token with one character of its signature changed.
    let mut tampered = w.admin_token.clone().into_bytes();
    let i = tampered.len() - 10;
    tampered[i] = if tampered[i] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    assert_not_a_live_user_token(&w, &tampered).await;

    // Basic credentials are not a bearer token.
    let response = w
        .app
        .http
        .post(w.app.url(&path(&company)))
        .basic_auth(&w.crm.id, Some(&w.crm.secret))
        .form(&form)
        .send()
        .await
        .unwrap();
    assert_challenged(response).await;

    // An application token (client_credentials) is not a user's.
    let app_token = w.app.app_token(&w.crm).await;
    assert_not_a_live_user_token(&w, &app_token).await;

    // Nor is a company's own access token.
    let auth_token = w.auth_token(&w.crm).await;
    let (status, company_tokens) = w.company_grant(&w.crm, &company, &auth_token).await;
    assert_eq!(status, StatusCode::OK, "{company_tokens}");
    assert_not_a_live_user_token(&w, &access_token(&company_tokens)).await;

    // The administrator's own token, once its hour is over.
    w.app.clock.advance(3600);
    assert_not_a_live_user_token(&w, &w.admin_token).await;
}

/// 401 `invalid_token` with the endpoint's Bearer challenge.
async fn assert_challenged(response: reqwest::Response) {
    assert_eq!(
        response.headers()["www-authenticate"],
        "Bearer realm=\"company-authtoken\""
    );
    assert_fail(&json_of(response).await, 401, "invalid_token", 401);
}

/// The administrator's request for the app's auth token, with `bearer` in place of the
/// administrator's live access token: 401 `invalid_token`.
async fn assert_not_a_live_user_token(w: &World, bearer: &str) {
    let form = [("client_id", w.crm.id.as_str())];
    let request = w.post(&w.company_id(), Some(bearer), &[]).form(&form);
    assert_fail(&answer_of(request).await, 401, "invalid_token", 401);
}

/// A valid user who does not administer the company: 403.
async fn non_administrators_get_403(app: TestApp) {
    let w = World::new(app).await;
    let portal = w.app.create_first_party_client("profile").await;
    let form = [("client_id", w.crm.id.as_str())];

    // A member of the company who is not an administrator.
    w.app
        .create_user_with("member@acme.example", PASSWORD, |u| {
            u.company_id = Some(w.company.id)
        })
        .await;
    // The administrator of another company.
    let other = w.app.create_company("Globex").await;
    w.app
        .create_company_admin("admin@globex.example", PASSWORD, &other)
        .await;
    // A user of no company.
    w.app.create_user("loner@example.com", PASSWORD).await;

    for login in [
        "member@acme.example",
        "admin@globex.example",
        "loner@example.com",
    ] {
        let token = access_token(&w.app.user_tokens(&portal, login, PASSWORD).await);
        let answer = answer_of(w.post(&w.company_id(), Some(&token), &[]).form(&form)).await;
        assert_fail(&answer, 403, "access_denied", 403);
    }

    // The other company's administrator may use the endpoint for their own company.
    w.app.enable_company_for(&other, &w.crm).await;
    let token = access_token(
        &w.app
            .user_tokens(&portal, "admin@globex.example", PASSWORD)
            .await,
    );
    assert_pass(&answer_of(w.post(&other.id.to_string(), Some(&token), &[]).form(&form)).await);
}

/// Unknown company (or not a UUID): 404; a disabled administrator: 123.
async fn unknown_company_404_and_disabled_administrator(app: TestApp) {
    let w = World::new(app).await;
    let form = [("client_id", w.crm.id.as_str())];
    for company in [uuid::Uuid::new_v4().to_string(), "not-a-uuid".to_owned()] {
        assert_fail(
            &answer_of(w.post(&company, Some(&w.admin_token), &[]).form(&form)).await,
            404,
            "not_found",
            404,
        );
    }

    // An administrator disabled after signing in can no longer act for the company.
    let mut admin = w.admin.clone();
    admin.status = UserStatus::Disabled;
    w.app.store.principals().put_user(&admin).await.unwrap();
    assert_fail(&w.issue(&w.crm).await, 400, "invalid_request", 123);
}
