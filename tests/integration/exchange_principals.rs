//! The old-token exchange applies the refresh grant's principal checks (docs/decisions.md,
//! Old-token exchange), on both stores: every principal that the first refresh would refuse is
//! refused at the exchange with `INVALIDTOKEN`, nothing is linked, and the old token stays
//! exchangeable once the principal may sign in again.

use crate::support::app::TestApp;
use crate::support::assertions::assert_exchange_error;
use token_domain::{CompanyStatus, PrincipalId, UserStatus};
use uuid::Uuid;

use crate::exchange::{
    assert_ok, company_line, import, import_known_and_unknown, is_linked, old_token, user_line,
    Migration,
};

crate::on_both_stores!(
    users_who_may_not_sign_in_are_refused,
    companies_that_may_not_sign_in_to_the_app_are_refused,
    company_tokens_of_wsadmin_tokens_get_the_company_checks,
);

/// Refused with `INVALIDTOKEN`, and the old token is not linked to any family.
async fn assert_refused(app: &TestApp, m: &Migration, query: &str, token: &str) {
    let refused = m.exchange_with(app, query, token).await;
    assert_exchange_error(&refused, 400, "INVALIDTOKEN", "invalid_grant");
    assert!(
        !is_linked(app, token).await,
        "a refused exchange links nothing"
    );
}

async fn users_who_may_not_sign_in_are_refused(app: TestApp) {
    let m = Migration::new(&app, "read").await;
    let denied = app
        .create_user_with("denied@old", "pw", |u| u.status = UserStatus::LogonDenied)
        .await;
    let disabled = app
        .create_user_with("disabled@old", "pw", |u| u.status = UserStatus::Disabled)
        .await;
    let unknown = PrincipalId::new(Uuid::new_v4());
    let tokens = [old_token(), old_token(), old_token()];
    import(
        &app,
        &[
            user_line(&tokens[0], &m.consumer_key, &denied.id, &["read"]),
            user_line(&tokens[1], &m.consumer_key, &disabled.id, &["read"]),
            user_line(&tokens[2], &m.consumer_key, &unknown, &["read"]),
        ],
    )
    .await;
    for token in &tokens {
        assert_refused(&app, &m, "", token).await;
    }

    // Logon allowed again: the same old token is exchanged.
    let mut allowed = denied.clone();
    allowed.status = UserStatus::Active;
    app.store.principals().put_user(&allowed).await.unwrap();
    assert_eq!(
        assert_ok(&m.exchange(&app, &tokens[0]).await)["id"],
        denied.id.to_string()
    );
}

async fn companies_that_may_not_sign_in_to_the_app_are_refused(app: TestApp) {
    let m = Migration::new(&app, "read").await;
    let company = app.create_company("Old Co").await;
    let (token, unknown_token) =
        import_known_and_unknown(&app, &m, company_line, &company.id).await;
    assert_refused(&app, &m, "", &unknown_token).await;

    // Not enabled for the app (53 at a refresh).
    assert_refused(&app, &m, "", &token).await;
    app.enable_company_for(&company, &m.client).await;
    // Under maintenance (134) or disabled (123).
    for status in [CompanyStatus::Maintenance, CompanyStatus::Disabled] {
        app.set_company_status(&company, status).await;
        assert_refused(&app, &m, "", &token).await;
    }
    app.set_company_status(&company, CompanyStatus::Active)
        .await;
    let exchanged = m.exchange(&app, &token).await;
    assert_eq!(assert_ok(&exchanged)["principalType"], "company");
    assert_eq!(exchanged.1["id"], company.id.to_string());
}

async fn company_tokens_of_wsadmin_tokens_get_the_company_checks(app: TestApp) {
    let m = Migration::new(&app, "read").await;
    let company = app.create_company("Admin Co").await;
    app.enable_company_for(&company, &m.client).await;
    let (_, wsadmin) = m
        .admin_with_wsadmin_token(&app, "admin@old-co", &company, &["read"])
        .await;

    app.set_company_status(&company, CompanyStatus::Maintenance)
        .await;
    assert_refused(&app, &m, "?returnType=companyToken", &wsadmin).await;
    app.set_company_status(&company, CompanyStatus::Active)
        .await;
    let exchanged = m
        .exchange_with(&app, "?returnType=companyToken", &wsadmin)
        .await;
    assert_eq!(assert_ok(&exchanged)["principalType"], "company");
}
