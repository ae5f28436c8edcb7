//! A user never loses provisioning to our failure, and a leaver never keeps access to it: with
//! DynamoDB behind the fault proxy, a deprovisioning whose family revocation fails answers 503
//! (the user already disabled, so nothing live can be used) and its retry finishes; a create
//! whose answer was lost answers, when retried, a 409 naming the user it made.

use std::sync::Arc;

use reqwest::StatusCode;
use serde_json::json;
use token_store::dynamodb::DynamoStore;

use super::{provisioning_token, scim, user_body, PASSWORD};
use crate::support::app::{json_of, AppOptions, Backend, TestApp};
use crate::support::ddb_proxy::{DdbProxy, Fault};
use crate::support::dynamodb::unique_table_name;

async fn app_behind(proxy: &DdbProxy) -> TestApp {
    let store = DynamoStore::connect(&unique_table_name(), Some(proxy.url())).await;
    store.create_table_if_missing().await.expect("a test table");
    TestApp::with_store(Arc::new(store), Backend::DynamoDb, AppOptions::default()).await
}

#[tokio::test]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn a_deprovisioning_that_failed_midway_finishes_when_retried() {
    let Some(proxy) = DdbProxy::start().await else {
        return;
    };
    let app = app_behind(&proxy).await;
    let company = app.create_company("Acme").await;
    let token = provisioning_token(&app, &company).await;
    let client = app.create_client("read").await;
    let (status, created) = json_of(
        scim(&app, reqwest::Method::POST, "/Users", &token)
            .json(&user_body("leaver@acme.example"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let id = created["id"].as_str().unwrap().to_owned();
    let (status, tokens) = app
        .password_grant(&client, "leaver@acme.example", PASSWORD, &[])
        .await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    let refresh_token = tokens["refresh_token"].as_str().unwrap().to_owned();
    let deactivate = json!({
        "schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        "Operations": [{"op": "replace", "value": {"active": false}}],
    });

    // The family's revocation fails, every attempt: ours, a 503.
    proxy.inject(
        Fault::InternalServerError
            .only_for("TransactWriteItems")
            .touching("FAMILY#"),
    );
    let response = scim(
        &app,
        reqwest::Method::PATCH,
        &format!("/Users/{id}"),
        &token,
    )
    .json(&deactivate)
    .send()
    .await
    .unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(response.headers().contains_key("retry-after"));
    // Already disabled: the password grant refuses, and the family that is still to be
    // revoked cannot be refreshed.
    let (_, refused) = app
        .password_grant(&client, "leaver@acme.example", PASSWORD, &[])
        .await;
    assert_eq!(refused["code"], 10, "{refused}");
    let (status, _) = app.refresh(&client, &refresh_token).await;
    assert_ne!(status, StatusCode::OK);
    proxy.clear_fault();

    // The provisioning client sends the same request again: it finishes.
    let (status, again) = json_of(
        scim(
            &app,
            reqwest::Method::PATCH,
            &format!("/Users/{id}"),
            &token,
        )
        .json(&deactivate)
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(again["active"], false);
    let (_, refused) = app.refresh(&client, &refresh_token).await;
    assert_eq!(refused["code"], 108, "the family is revoked now: {refused}");
}

#[tokio::test]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn a_create_retried_after_a_lost_answer_finds_the_user_it_made() {
    let Some(proxy) = DdbProxy::start().await else {
        return;
    };
    let app = app_behind(&proxy).await;
    let company = app.create_company("Acme").await;
    let token = provisioning_token(&app, &company).await;
    // The user's transaction commits, and its every answer is lost.
    proxy.inject(
        Fault::DropResponse
            .only_for("TransactWriteItems")
            .touching("USER#"),
    );
    let body = user_body("new@acme.example");
    let response = scim(&app, reqwest::Method::POST, "/Users", &token)
        .json(&body)
        .send()
        .await
        .unwrap();
    let first = response.status();
    proxy.clear_fault();
    let (status, retried) = json_of(
        scim(&app, reqwest::Method::POST, "/Users", &token)
            .json(&body)
            .send()
            .await
            .unwrap(),
    )
    .await;
    let (_, listed) = json_of(
        scim(&app, reqwest::Method::GET, "/Users", &token)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(listed["totalResults"], 1, "never a duplicate: {listed}");
    let made = listed["Resources"][0]["id"].as_str().unwrap();
    if first == StatusCode::CREATED {
        // The SDK's own resend of the same transaction committed it once.
        assert_eq!(status, StatusCode::CONFLICT, "{retried}");
    } else {
        assert_eq!(first, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(status, StatusCode::CONFLICT, "{retried}");
    }
    assert_eq!(retried["scimType"], "uniqueness");
    assert!(
        retried["detail"].as_str().unwrap().contains(made),
        "the 409 names the user made: {retried}"
    );
}
