//! Auth tokens issued: the end-to-end path from the administrator to the company's tokens,
//! and the JSON answer with every way of naming the app.

use super::*;
use crate::support::app::{answer_of, json_of, TestApp};
use crate::support::assertions::{
    assert_company_error as assert_fail, assert_token_error as assert_error,
};
use reqwest::StatusCode;
use serde_json::json;
use token_domain::clock::Clock;
use token_domain::{ClientId, AUTH_TOKEN_TTL_SECONDS};
use url::Url;

crate::on_both_stores!(
    administrator_to_company_tokens_end_to_end,
    json_answer_path_spellings_and_client_id_sources,
);

/// The "Done when": administrator → auth token → Connect redirect → the app's company
/// password grant → refresh → reuse within 24 h → refused after 24 h.
async fn administrator_to_company_tokens_end_to_end(app: TestApp) {
    let w = World::new(app).await;
    let issued_at = w.app.clock.now();

    let response = w
        .as_admin(&[("redirect", "true")])
        .form(&[("client_id", w.crm.id.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::MOVED_PERMANENTLY);
    assert_eq!(response.headers()["cache-control"], "no-store");
    let location = Url::parse(response.headers()["location"].to_str().unwrap()).unwrap();
    assert_eq!(
        (location.scheme(), location.host_str(), location.path()),
        ("https", Some("crm.example.com"), "/connect")
    );
    let query: Vec<(String, String)> = location.query_pairs().into_owned().collect();
    let names: Vec<&str> = query.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(names, ["tenant", "lang", "id", "requestToken", "userID"]);
    let param = |name: &str| query.iter().find(|(k, _)| k == name).unwrap().1.clone();
    assert_eq!(
        param("tenant"),
        "acme",
        "the Connect URL's own parameters survive"
    );
    assert_eq!(param("lang"), "en US");
    assert_eq!(param("id"), w.company_id());
    assert_eq!(param("userID"), w.admin.id.to_string());
    let request_token = param("requestToken");
    assert_eq!(request_token.len(), 43);

    // Stored only as its hash, bound to the company, the app and the administrator, for 24 h.
    let record = stored(&w.app, &request_token)
        .await
        .expect("auth token stored");
    assert!(
        !w.app.data.contains(&request_token).await,
        "the auth token is stored in clear"
    );
    assert!(
        w.app.data.contains(&w.company.name).await,
        "the check sees stored text"
    );
    assert_eq!(record.company_id, w.company.id);
    assert_eq!(record.client_id, ClientId::parse(&w.crm.id).unwrap());
    assert_eq!(record.issued_by, w.admin.id);
    assert_eq!(record.issued_at, issued_at);
    assert_eq!(record.expires_at, issued_at + AUTH_TOKEN_TTL_SECONDS);

    // The app exchanges it for the company's tokens.
    let (status, company_tokens) = w
        .company_grant(&w.crm, &w.company_id(), &request_token)
        .await;
    assert_eq!(status, StatusCode::OK, "company grant: {company_tokens}");
    assert_eq!(company_tokens["principal_type"], "company");
    assert_eq!(company_tokens["id"], w.company_id());
    assert_eq!(company_tokens["token_type"], "Bearer");
    assert_eq!(company_tokens["expires_in"], 3600);
    let refresh_token = company_tokens["refresh_token"].as_str().unwrap();

    // The company's family refreshes like any other.
    let (status, refreshed) = w.app.refresh(&w.crm, refresh_token).await;
    assert_eq!(status, StatusCode::OK, "refresh: {refreshed}");
    assert_eq!(refreshed["principal_type"], "company");
    assert_eq!(refreshed["id"], w.company_id());
    assert_ne!(refreshed["refresh_token"], company_tokens["refresh_token"]);

    // Reusable within the window (a retry after a network failure), up to its last second.
    let (status, again) = w
        .company_grant(&w.crm, &w.company_id(), &request_token)
        .await;
    assert_eq!(status, StatusCode::OK, "second use: {again}");
    assert_eq!(again["id"], w.company_id());
    assert_ne!(again["refresh_token"], company_tokens["refresh_token"]);
    w.app.clock.advance(AUTH_TOKEN_TTL_SECONDS - 1);
    let (status, body) = w
        .company_grant(&w.crm, &w.company_id(), &request_token)
        .await;
    assert_eq!(status, StatusCode::OK, "last second: {body}");

    // After 24 hours it is refused, and the store no longer returns it.
    w.app.clock.advance(1);
    let expired = w
        .company_grant(&w.crm, &w.company_id(), &request_token)
        .await;
    assert_error(&expired, 400, "invalid_grant", 19);
    assert!(stored(&w.app, &request_token).await.is_none());
}

/// The JSON answer; both path spellings; `client_id` in the query, a form body or a JSON body,
/// with an empty body of any content type.
async fn json_answer_path_spellings_and_client_id_sources(app: TestApp) {
    let w = World::new(app).await;

    let response = w
        .as_admin(&[])
        .form(&[("client_id", w.crm.id.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["cache-control"], "no-store");
    assert_eq!(response.headers()["content-type"], "application/json");
    let first = assert_pass(&json_of(response).await);

    let no_slash = w.app.url(path(&w.company_id()).trim_end_matches('/'));
    let second = assert_pass(
        &answer_of(
            w.app
                .http
                .post(no_slash)
                .bearer_auth(&w.admin_token)
                .query(&[("client_id", w.crm.id.as_str())]),
        )
        .await,
    );

    let third =
        assert_pass(&answer_of(w.as_admin(&[]).json(&json!({"client_id": w.crm.id}))).await);

    // An empty body, even one declared as JSON, carries nothing.
    let fourth = assert_pass(
        &answer_of(
            w.as_admin(&[("client_id", &w.crm.id)])
                .header("content-type", "application/json"),
        )
        .await,
    );

    // Same value in both places is fine; different values are not.
    let fifth = assert_pass(
        &answer_of(
            w.as_admin(&[("client_id", &w.crm.id)])
                .form(&[("client_id", w.crm.id.as_str())]),
        )
        .await,
    );
    let other = uuid::Uuid::new_v4().to_string();
    assert_fail(
        &answer_of(
            w.as_admin(&[("client_id", &w.crm.id)])
                .form(&[("client_id", other.as_str())]),
        )
        .await,
        400,
        "invalid_request",
        400,
    );

    // Every answer is a new token, each stored and each usable.
    let tokens = [first, second, third, fourth, fifth];
    for (i, token) in tokens.iter().enumerate() {
        assert!(!tokens[..i].contains(token), "tokens are distinct");
        assert!(stored(&w.app, token).await.is_some());
        let (status, body) = w.company_grant(&w.crm, &w.company_id(), token).await;
        assert_eq!(status, StatusCode::OK, "token {i}: {body}");
    }
}
