//! Refusals once the caller is the administrator: the company's state, the `client_id`, the
//! body, and the auth token's binding to its app and company at the password grant.

use super::*;
use crate::support::app::{answer_of, json_of, TestApp};
use crate::support::assertions::{
    assert_company_error as assert_fail, assert_token_error as assert_error,
};
use reqwest::StatusCode;
use token_core::admin::{self, NewClient};
use token_domain::{ClientId, CompanyStatus, PrincipalId, Scopes};

crate::on_both_stores!(
    disabled_and_maintenance_companies,
    client_id_problems,
    auth_token_bound_to_its_app_and_company,
    auth_tokens_stop_with_their_administrator,
);

/// A change to a user.
type Change = fn(&mut token_domain::User);

/// An auth token is the administrator's act: once the administrator is disabled, demoted or
/// denied logon, it mints no company family (19), however long it has left.
async fn auth_tokens_stop_with_their_administrator(app: TestApp) {
    let w = World::new(app).await;
    let company = w.company_id();
    let changes: [(&str, Change); 3] = [
        ("disabled", |u| {
            u.status = token_domain::UserStatus::Disabled
        }),
        ("demoted", |u| u.is_admin = false),
        ("denied logon", |u| {
            u.status = token_domain::UserStatus::LogonDenied
        }),
    ];
    for (what, change) in changes {
        let auth_token = w.auth_token(&w.crm).await;
        let first = w.company_grant(&w.crm, &company, &auth_token).await;
        assert_eq!(first.0, StatusCode::OK, "{what}: {}", first.1);
        let mut admin = w
            .app
            .store
            .principals()
            .get_user(&w.admin.id)
            .await
            .unwrap()
            .unwrap();
        let before = admin.clone();
        change(&mut admin);
        w.app.store.principals().put_user(&admin).await.unwrap();
        assert_error(
            &w.company_grant(&w.crm, &company, &auth_token).await,
            400,
            "invalid_grant",
            19,
        );
        w.app.store.principals().put_user(&before).await.unwrap();
    }
}

/// A disabled company (123) and one under maintenance (134), when the auth token is issued and
/// when it is exchanged.
async fn disabled_and_maintenance_companies(app: TestApp) {
    let w = World::new(app).await;
    let auth_token = w.auth_token(&w.crm).await;

    w.set_company_status(CompanyStatus::Disabled).await;
    assert_fail(&w.issue(&w.crm).await, 400, "invalid_request", 123);
    let grant = w.company_grant(&w.crm, &w.company_id(), &auth_token).await;
    assert_error(&grant, 400, "invalid_request", 123);

    w.set_company_status(CompanyStatus::Maintenance).await;
    let answer = w.issue(&w.crm).await;
    assert_fail(&answer, 400, "invalid_request", 134);
    assert_eq!(
        answer.1["errormsg"],
        "Company undergoing scheduled maintenance."
    );
    let grant = w.company_grant(&w.crm, &w.company_id(), &auth_token).await;
    assert_error(&grant, 400, "invalid_request", 134);

    // Back in service, the token issued before still works within its window.
    w.set_company_status(CompanyStatus::Active).await;
    let (status, body) = w.company_grant(&w.crm, &w.company_id(), &auth_token).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["id"], w.company_id());
}

/// `client_id` missing (62), malformed or unknown (61), disabled (59), not enabled for the
/// company (53); `redirect=true` for an app without a Connect URL.
async fn client_id_problems(app: TestApp) {
    let w = World::new(app).await;

    assert_fail(
        &answer_of(w.as_admin(&[])).await,
        400,
        "invalid_request",
        62,
    );

    for unknown in [uuid::Uuid::new_v4().to_string(), "crm".to_owned()] {
        let answer = answer_of(w.as_admin(&[("client_id", &unknown)])).await;
        assert_fail(&answer, 400, "invalid_client", 61);
    }

    // An app the company was never enabled for.
    let stranger = w
        .app
        .create_client_with(NewClient {
            connect_url: Some("https://stranger.example.com/c".into()),
            ..NewClient::named("stranger", Scopes::parse("read").unwrap())
        })
        .await;
    let answer = w.issue(&stranger).await;
    assert_fail(&answer, 400, "invalid_client", 53);
    assert_eq!(
        answer.1["errormsg"],
        "company is not enabled for this client"
    );

    // An app without a Connect URL: fine for JSON, refused for the redirect.
    let headless = w.app.create_client("read").await;
    w.app.enable_company_for(&w.company, &headless).await;
    let response = w
        .as_admin(&[("redirect", "true"), ("client_id", &headless.id)])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert!(response.headers().get("location").is_none());
    assert_fail(&json_of(response).await, 400, "invalid_request", 400);
    assert_pass(&w.issue(&headless).await);

    // Bodies the endpoint cannot read, and a redirect flag that is neither true nor false.
    assert_fail(
        &answer_of(
            w.as_admin(&[])
                .header("content-type", "text/plain")
                .body(format!("client_id={}", w.crm.id)),
        )
        .await,
        400,
        "invalid_request",
        135,
    );
    assert_fail(
        &answer_of(w.as_admin(&[]).form(&[
            ("client_id", w.crm.id.as_str()),
            ("pad", &"x".repeat(17 * 1024)),
        ]))
        .await,
        413,
        "invalid_request",
        413,
    );
    assert_fail(
        &answer_of(w.as_admin(&[("redirect", "maybe"), ("client_id", &w.crm.id)])).await,
        400,
        "invalid_request",
        400,
    );

    // A disabled app.
    admin::disable_client(w.app.ctx(), &ClientId::parse(&headless.id).unwrap())
        .await
        .unwrap();
    assert_fail(&w.issue(&headless).await, 400, "access_denied", 59);
}

/// At the password grant: an auth token presented by another app (105), for another company or
/// unknown (19).
async fn auth_token_bound_to_its_app_and_company(app: TestApp) {
    let w = World::new(app).await;
    let other_app = w.app.create_client("read").await;
    w.app.enable_company_for(&w.company, &other_app).await;
    let auth_token = w.auth_token(&w.crm).await;

    let answer = w
        .company_grant(&other_app, &w.company_id(), &auth_token)
        .await;
    assert_error(&answer, 400, "invalid_grant", 105);

    let other_company = w.app.create_company("Globex").await;
    w.app.enable_company_for(&other_company, &w.crm).await;
    let answer = w
        .company_grant(&w.crm, &other_company.id.to_string(), &auth_token)
        .await;
    assert_error(&answer, 400, "invalid_grant", 19);

    let answer = w
        .company_grant(
            &w.crm,
            &w.company_id(),
            "0123456789abcdefghijklmnopqrstuvwxyzABCDEFG",
        )
        .await;
    assert_error(&answer, 400, "invalid_grant", 19);

    // None of this used the token up: its own app still gets the company's tokens.
    let (status, body) = w.company_grant(&w.crm, &w.company_id(), &auth_token).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["principal_type"], "company");
    assert_eq!(
        body["id"],
        PrincipalId::parse(&w.company_id()).unwrap().to_string()
    );
}
