//! The legacy exchange's events: `family.started` (`grant: legacy_exchange`) for the family it
//! creates, and, when the same old token is exchanged again, `family.revoked` (`reason:
//! exchanged_again`) for the family the previous exchange created, naming that family's own
//! principal (the company of a `returnType=companyToken` exchange), written with the new family.

use crate::support::app::{answer_of, TestApp};
use reqwest::StatusCode;
use serde_json::Value;
use token_domain::PrincipalId;
use uuid::Uuid;

use super::{
    assert_no_secret_recorded, assert_recorded, client_subject, events_of, family_of_refresh_token,
    family_subject, names, principal_subject, traced, Expected,
};
use crate::exchange::Migration;

crate::on_both_stores!(
    an_exchange_records_its_family_and_the_revocation_of_the_previous_one,
    a_company_family_revoked_by_an_exchange_of_its_administrator_names_the_company,
);

/// Exchanges `old` (with `query`, empty or `?returnType=...`), traced: the tokens and the
/// family id.
async fn exchanged(
    app: &TestApp,
    m: &Migration,
    query: &str,
    old: &str,
    correlation_id: &str,
) -> (Value, String) {
    let request = app
        .exchange_request(&m.consumer_key, query)
        .header("authorization", m.bearer())
        .form(&[("token", old), ("secret", m.client.secret.as_str())]);
    let (status, body) = answer_of(traced(request, correlation_id)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let refresh = body["refreshToken"].as_str().expect("a refresh token");
    let family_id = family_of_refresh_token(app, refresh).await;
    (body, family_id)
}

fn correlation_id() -> String {
    format!("audit-exchange-{}", Uuid::new_v4())
}

fn tokens(body: &Value) -> [&str; 2] {
    [
        body["accessToken"].as_str().unwrap(),
        body["refreshToken"].as_str().unwrap(),
    ]
}

async fn an_exchange_records_its_family_and_the_revocation_of_the_previous_one(app: TestApp) {
    let m = Migration::new(&app, "read").await;
    let login = format!("exchanged-{}", Uuid::new_v4().simple());
    let (user, old) = m.user_with_old_token(&app, &login).await;
    let expected = |event, family_id, correlation_id| Expected {
        event,
        client_id: &m.client.id,
        principal_type: "user",
        principal_id: user.to_string(),
        family_id,
        correlation_id,
    };

    let first_request = correlation_id();
    let (first, first_family) = exchanged(&app, &m, "", &old, &first_request).await;
    let started = assert_recorded(
        &app,
        &expected("family.started", &first_family, &first_request),
    )
    .await;
    assert_eq!(started["grant"], "legacy_exchange");

    // The same old token again (a retry after a lost answer): a new family, and the first one
    // revoked, each recorded with the request that did it.
    app.clock.advance(5);
    let second_request = correlation_id();
    let (second, second_family) = exchanged(&app, &m, "", &old, &second_request).await;
    let started = assert_recorded(
        &app,
        &expected("family.started", &second_family, &second_request),
    )
    .await;
    assert_eq!(started["grant"], "legacy_exchange");
    let revoked = assert_recorded(
        &app,
        &expected("family.revoked", &first_family, &second_request),
    )
    .await;
    assert_eq!(revoked["reason"], "exchanged_again");
    assert_eq!(
        names(&events_of(&app, family_subject(&first_family)).await),
        ["family.revoked", "family.started"]
    );

    // The first family's refresh token is refused, and nothing more is recorded: its
    // revocation was recorded once, by the exchange that made it.
    let (status, _) = app.refresh(&m.client, tokens(&first)[1]).await;
    assert_ne!(status, StatusCode::OK);
    assert_eq!(
        names(&events_of(&app, family_subject(&first_family)).await),
        ["family.revoked", "family.started"]
    );

    let [first_access, first_refresh] = tokens(&first);
    let [second_access, second_refresh] = tokens(&second);
    assert_no_secret_recorded(
        &app,
        &[client_subject(&m.client.id), principal_subject(user)],
        &[
            &old,
            &m.client.secret,
            &m.app_token,
            first_access,
            first_refresh,
            second_access,
            second_refresh,
        ],
    )
    .await;
}

async fn a_company_family_revoked_by_an_exchange_of_its_administrator_names_the_company(
    app: TestApp,
) {
    let m = Migration::new(&app, "read").await;
    let company = app.create_company("Exchanged").await;
    let login = format!("wsadmin-{}", Uuid::new_v4().simple());
    let (admin, wsadmin) = m
        .admin_with_wsadmin_token(&app, &login, &company, &["read"])
        .await;
    app.enable_company_for(&company, &m.client).await;

    let first_request = correlation_id();
    let (company_tokens, company_family) = exchanged(
        &app,
        &m,
        "?returnType=companyToken",
        &wsadmin,
        &first_request,
    )
    .await;
    let company_id: PrincipalId = company.id;
    let started = assert_recorded(
        &app,
        &Expected {
            event: "family.started",
            client_id: &m.client.id,
            principal_type: "company",
            principal_id: company_id.to_string(),
            family_id: &company_family,
            correlation_id: &first_request,
        },
    )
    .await;
    assert_eq!(started["grant"], "legacy_exchange");

    // The administrator's own family now: the company's family is revoked, under the company.
    app.clock.advance(5);
    let second_request = correlation_id();
    let (admin_tokens, admin_family) = exchanged(&app, &m, "", &wsadmin, &second_request).await;
    let revoked = assert_recorded(
        &app,
        &Expected {
            event: "family.revoked",
            client_id: &m.client.id,
            principal_type: "company",
            principal_id: company_id.to_string(),
            family_id: &company_family,
            correlation_id: &second_request,
        },
    )
    .await;
    assert_eq!(revoked["reason"], "exchanged_again");
    let started = assert_recorded(
        &app,
        &Expected {
            event: "family.started",
            client_id: &m.client.id,
            principal_type: "user",
            principal_id: admin.id.to_string(),
            family_id: &admin_family,
            correlation_id: &second_request,
        },
    )
    .await;
    assert_eq!(started["grant"], "legacy_exchange");
    let of_admin = events_of(&app, principal_subject(admin.id)).await;
    assert!(
        of_admin
            .iter()
            .all(|event| event.family_id.map(|id| id.to_string()) != Some(company_family.clone())),
        "the company's family is not filed under its administrator: {of_admin:?}"
    );
    let [company_access, company_refresh] = tokens(&company_tokens);
    let [admin_access, admin_refresh] = tokens(&admin_tokens);
    assert_no_secret_recorded(
        &app,
        &[principal_subject(company_id), principal_subject(admin.id)],
        &[
            &wsadmin,
            &m.client.secret,
            &m.app_token,
            company_access,
            company_refresh,
            admin_access,
            admin_refresh,
        ],
    )
    .await;
}
