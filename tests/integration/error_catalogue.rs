//! The token endpoint's error catalogue pinned to the specification (its "Token endpoint error
//! codes" table), row by row, and the cache headers every error response carries.

use std::collections::BTreeSet;

use crate::support::app::{Backend, TestApp};
use crate::support::assertions::assert_not_cached;
use crate::support::error_table::{spec_rows, SERVICE_ROWS};
use token_core::errors::ErrorCode;

#[test]
fn every_spec_row_is_in_the_catalogue() {
    let spec = spec_rows();
    assert_eq!(spec.len(), 49, "the specification's table has 49 rows");
    let codes: BTreeSet<u16> = spec.iter().map(|row| row.0).collect();
    assert_eq!(codes.len(), 48, "for 48 codes");
    let catalogue: BTreeSet<(u16, &str, &str)> = ErrorCode::ALL
        .iter()
        .map(|entry| (entry.code(), entry.error().as_str(), entry.description()))
        .collect();
    for row in &spec {
        assert!(
            catalogue.contains(row),
            "spec row {row:?} missing or misspelt in the catalogue"
        );
    }
    let spec: BTreeSet<(u16, &str, &str)> = spec.into_iter().collect();
    for entry in &catalogue {
        assert!(
            spec.contains(entry) || SERVICE_ROWS.contains(entry),
            "catalogue entry {entry:?} is neither the specification's nor a pinned service row"
        );
    }
    for row in SERVICE_ROWS {
        assert!(
            catalogue.contains(row),
            "service row {row:?} missing or reworded in the catalogue"
        );
    }
    assert_eq!(
        ErrorCode::ALL.len(),
        catalogue.len(),
        "no entry listed twice"
    );
}

/// Error answers are as uncacheable as token answers, on every endpoint and for every kind of
/// refusal (catalogue, 404, 405, 413).
#[tokio::test]
async fn error_responses_are_not_cached() {
    let app = TestApp::spawn(Backend::Sqlite).await.unwrap();
    let refused_token = app.post_form("/v0/token", &[]).await;
    let too_large = app
        .post_form("/v0/token", &[("pad", &"x".repeat(17 * 1024))])
        .await;
    let unknown_path = app.http.post(app.url("/v0/nothing")).send().await.unwrap();
    let wrong_method = app.http.get(app.url("/v0/token")).send().await.unwrap();
    let exchange = app
        .exchange_request("never-linked", "")
        .send()
        .await
        .unwrap();
    let company = app
        .company_auth_token_request(&uuid::Uuid::new_v4().to_string(), None, &[])
        .send()
        .await
        .unwrap();
    for (what, response) in [
        ("token 400", refused_token),
        ("token 413", too_large),
        ("404", unknown_path),
        ("405", wrong_method),
        ("exchange", exchange),
        ("company", company),
    ] {
        assert!(
            response.status().is_client_error(),
            "{what}: {}",
            response.status()
        );
        assert_not_cached(response.headers());
    }
}
