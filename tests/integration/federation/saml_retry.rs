//! A user never loses a SAML sign-in to our failure: when the store fails while the ACS links
//! the user (DynamoDB through a fault proxy), the ACS answers 503 and the browser's re-post of
//! the same form signs in; the pending request and the assertion are used only by the attempt
//! that finished.

use std::sync::Arc;

use reqwest::StatusCode;
use token_store::dynamodb::DynamoStore;

use super::fixture::DOMAIN;
use super::saml_fixture::saml_federated_on;
use crate::authorize::flow::Session;
use crate::support::app::Backend;
use crate::support::ddb_proxy::{DdbProxy, Fault};
use crate::support::dynamodb::unique_table_name;

#[tokio::test]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn a_re_posted_response_after_a_store_failure_signs_in() {
    let Some(proxy) = DdbProxy::start().await else {
        return;
    };
    let store = DynamoStore::connect(&unique_table_name(), Some(proxy.url())).await;
    store.create_table_if_missing().await.expect("a test table");
    let f = saml_federated_on(Backend::DynamoDb, Some(Arc::new(store)))
        .await
        .expect("the app");
    let login = format!("rae@{DOMAIN}");
    let mut session = Session::new(&f.app);
    let sso = f.leave_for_idp(&mut session, &login).await;
    let post = f.idp.login(&sso, &login, false).await;

    // Every attempt to write the link fails (the SDK's retries too): ours, a 503.
    proxy.inject(
        Fault::InternalServerError
            .only_for("TransactWriteItems")
            .touching("FEDLINK#"),
    );
    let failed = f.post_acs(&post).await;
    assert_eq!(failed.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(f.linked_user(&login).await, None);
    proxy.clear_fault();

    // The browser posts the same form again: signed in, the authorization continues.
    let again = f.come_back(&mut session, &post).await;
    let status = again.status();
    let html = again.text().await.unwrap();
    assert_eq!(status, StatusCode::OK, "{:?} {html}", f.refusals().await);
    assert!(html.contains("would like to"), "the consent page: {html}");
    assert!(f.linked_user(&login).await.is_some());
    // Used now: a third post is refused.
    let third = f.post_acs(&post).await;
    assert_eq!(third.status(), StatusCode::BAD_REQUEST);
}
