//! Old tokens exchanged for new families: the answer's fields, form and JSON bodies, WSAdmin
//! tokens (the administrator's family or, with `returnType=companyToken`, the company's), and
//! the family's home deployment.

use crate::on_both_stores;
use crate::support::app::{json_of, RequestBody, TestApp};
use crate::support::assertions::{
    assert_exchange_error, assert_token_error as assert_error, assert_uncached_json,
};
use reqwest::StatusCode;
use serde_json::json;
use token_domain::clock::Clock;
use token_domain::{Geolocation, Scopes};

use super::*;

on_both_stores!(
    user_token_is_exchanged_and_the_new_refresh_token_works,
    form_and_json_bodies_are_accepted,
    wsadmin_token_yields_the_admin_family_or_the_company_family,
    company_token_needs_a_wsadmin_token,
    family_lives_at_the_principals_home,
);

async fn user_token_is_exchanged_and_the_new_refresh_token_works(app: TestApp) {
    let m = Migration::new(&app, "read write profile").await;
    let user = user_id(&app, "alice").await;
    let old = old_token();
    import(
        &app,
        &[user_line(&old, &m.consumer_key, &user, &["read", "write"])],
    )
    .await;

    let response = app
        .exchange_request(&m.consumer_key, "")
        .bearer_auth(&m.app_token)
        .form(&[("token", old.as_str()), ("secret", &m.client.secret)])
        .send()
        .await
        .unwrap();
    let headers = response.headers().clone();
    assert_uncached_json(&headers);
    let answer = json_of(response).await;
    let body = assert_ok(&answer);
    assert_eq!(body["principalType"], "user");
    assert_eq!(body["id"], user.to_string());
    assert_eq!(body["scope"], "read write");
    assert_eq!(body["expiresIn"], 3600);
    // Unix times, as in Concur's exchange response (docs/decisions.md, Token formats).
    let now = app.clock.now();
    assert_eq!(body["refreshExpiresIn"], now + 180 * 86_400);
    assert_eq!(body["token"], body["refreshToken"]);
    assert_eq!(body["created"], now * 1000);
    assert_eq!(body["expired"], (now + 180 * 86_400) * 1000);
    assert_eq!(body["scopes"], serde_json::json!(["read", "write"]));
    assert_eq!(body["geolocation"], app.address);
    let keys: Vec<&String> = body.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 13, "exactly the documented fields: {keys:?}");

    // The access token is one of ours, for the user, issued to the new app.
    let access = body["accessToken"].as_str().unwrap();
    let claims = app.claims_of(access).await;
    assert_eq!(claims.sub, user.to_string());
    assert_eq!(claims.client_id, m.client.id);
    assert_eq!(claims.scope, "read write");

    // The old token now points at the family the new refresh token belongs to.
    let refresh_token = body["refreshToken"].as_str().unwrap().to_owned();
    let record = app.stored_refresh_token(&refresh_token).await;
    let link = app
        .stored_legacy_link(&old)
        .await
        .expect("old token linked");
    assert_eq!(link.family_id, record.family_id);
    let family = app.stored_family(&record.family_id).await;
    assert_eq!(family.principal_id, user);
    assert_eq!(family.client_id.to_string(), m.client.id);
    assert_eq!(family.scopes, Scopes::parse("read write").unwrap());

    // The new app refreshes with it at the token endpoint.
    let refreshed = app.refresh(&m.client, &refresh_token).await;
    assert_eq!(refreshed.0, StatusCode::OK, "{}", refreshed.1);
    assert_eq!(refreshed.1["principal_type"], "user");
    assert_eq!(refreshed.1["id"], user.to_string());
    assert_eq!(refreshed.1["scope"], "read write");
    assert_ne!(refreshed.1["refresh_token"], refresh_token.as_str());
}

async fn form_and_json_bodies_are_accepted(app: TestApp) {
    let m = Migration::new(&app, "read").await;
    let user = user_id(&app, "bob").await;
    let (form_token, json_token) = (old_token(), old_token());
    import(
        &app,
        &[
            user_line(&form_token, &m.consumer_key, &user, &["read"]),
            user_line(&json_token, &m.consumer_key, &user, &["read"]),
        ],
    )
    .await;
    let bearer = m.bearer();

    let by_form = app
        .exchange(
            &m.consumer_key,
            "",
            Some(&bearer),
            RequestBody::Form(&[("token", &form_token), ("secret", &m.client.secret)]),
        )
        .await;
    assert_eq!(assert_ok(&by_form)["id"], user.to_string());

    let by_json = app
        .exchange(
            &m.consumer_key,
            "",
            Some(&bearer),
            RequestBody::Json(json!({"token": json_token, "secret": m.client.secret})),
        )
        .await;
    assert_eq!(assert_ok(&by_json)["id"], user.to_string());

    // The scheme is case-insensitive (RFC 9110 §11.1).
    let lower = app
        .exchange(
            &m.consumer_key,
            "",
            Some(&format!("bearer {}", m.app_token)),
            RequestBody::Json(json!({"token": json_token, "secret": m.client.secret})),
        )
        .await;
    assert_ok(&lower);
}

async fn wsadmin_token_yields_the_admin_family_or_the_company_family(app: TestApp) {
    let m = Migration::new(&app, "read admin").await;
    let company = app.create_company("Acme").await;
    let (admin_user, wsadmin) = m
        .admin_with_wsadmin_token(&app, "admin@acme", &company, &["admin", "read"])
        .await;

    // Without returnType: the administrator's own family.
    let as_user = m.exchange(&app, &wsadmin).await;
    let user_body = assert_ok(&as_user).clone();
    assert_eq!(user_body["principalType"], "user");
    assert_eq!(user_body["id"], admin_user.id.to_string());
    assert_eq!(user_body["scope"], "admin read");
    let refreshed = app
        .refresh(&m.client, user_body["refreshToken"].as_str().unwrap())
        .await;
    assert_eq!(refreshed.0, StatusCode::OK, "{}", refreshed.1);
    assert_eq!(refreshed.1["principal_type"], "user");

    // With returnType=companyToken: refused while the company is not enabled for the app (the first
    // refresh would refuse the family with 53; docs/decisions.md, Old-token exchange).
    let not_enabled = m
        .exchange_with(&app, "?returnType=companyToken", &wsadmin)
        .await;
    assert_exchange_error(&not_enabled, 400, "INVALIDTOKEN", "invalid_grant");
    app.enable_company_for(&company, &m.client).await;

    // Once enabled: the company's family. Same old token, so this replaces the administrator's
    // family (one live family per old token).
    let as_company = m
        .exchange_with(&app, "?returnType=companyToken", &wsadmin)
        .await;
    let company_body = assert_ok(&as_company).clone();
    assert_eq!(company_body["principalType"], "company");
    assert_eq!(company_body["id"], company.id.to_string());
    assert_eq!(company_body["geolocation"], company.geolocation.as_str());
    let claims = app
        .claims_of(company_body["accessToken"].as_str().unwrap())
        .await;
    assert_eq!(claims.sub, company.id.to_string());
    assert_eq!(claims.principal_type.as_str(), "company");
    let replaced = app
        .refresh(&m.client, refreshed.1["refresh_token"].as_str().unwrap())
        .await;
    assert_error(&replaced, 400, "invalid_grant", 108);

    // A company family refreshes like one from the company password grant.
    let company_refresh = company_body["refreshToken"].as_str().unwrap();
    let refreshed = app.refresh(&m.client, company_refresh).await;
    assert_eq!(refreshed.0, StatusCode::OK, "{}", refreshed.1);
    assert_eq!(refreshed.1["principal_type"], "company");
    assert_eq!(refreshed.1["id"], company.id.to_string());
}

async fn company_token_needs_a_wsadmin_token(app: TestApp) {
    let m = Migration::new(&app, "read").await;
    let (_, plain) = m.user_with_old_token(&app, "carol").await;
    let refused = m
        .exchange_with(&app, "?returnType=companyToken", &plain)
        .await;
    assert_exchange_error(&refused, 400, "INVALIDTOKEN", "invalid_grant");
    assert_eq!(refused.1["error_description"], "Bad or expired token");
    // Nothing was linked: the token is still exchangeable for the user.
    assert!(!is_linked(&app, &plain).await);
    assert_ok(&m.exchange(&app, &plain).await);
}

async fn family_lives_at_the_principals_home(app: TestApp) {
    let m = Migration::new(&app, "read").await;
    let elsewhere = Geolocation::parse("https://eu.api.example.com").unwrap();
    let abroad = app
        .create_user_with("dave", "pw", |u| u.geolocation = elsewhere.clone())
        .await;
    let (abroad_token, stranger_token) =
        import_known_and_unknown(&app, &m, user_line, &abroad.id).await;

    let home = m.exchange(&app, &abroad_token).await;
    assert_eq!(assert_ok(&home)["geolocation"], elsewhere.as_str());
    // Refreshing here sends the app to the user's home deployment (code 16).
    let refreshed = app
        .refresh(&m.client, home.1["refreshToken"].as_str().unwrap())
        .await;
    assert_error(&refreshed, 400, "invalid_request", 16);
    assert_eq!(refreshed.1["geolocation"], elsewhere.as_str());

    // A principal this store does not know is refused (docs/decisions.md, Old-token exchange): its
    // family could never be refreshed.
    let unknown = m.exchange(&app, &stranger_token).await;
    assert_exchange_error(&unknown, 400, "INVALIDTOKEN", "invalid_grant");
}
