//! Security hardening (issue 12, contract part 11) at the administration API, on SQLite and
//! DynamoDB Local. The other rules are tested where they live: the decoy hash
//! (`secrets.rs`), the log ceilings (`telemetry.rs`), the import's skip reasons (`import.rs`),
//! the IAM conditions (`infra/check-iam.py`, run by `infra/lint-template.sh`).

use integration_tests::app::TestApp;
use token_service::admin::{self, AdminError, NewClient};
use token_service::domain::Scopes;

fn client_with_connect_url(url: &str) -> NewClient {
    NewClient {
        connect_url: Some(url.to_owned()),
        ..NewClient::named("partner app", Scopes::parse("read").unwrap())
    }
}

/// The company auth-token endpoint redirects to the Connect URL with the auth token in the
/// query, so a plain-http URL would send that token in clear.
async fn plain_http_connect_urls_are_refused(app: TestApp) {
    for url in [
        "http://crm.example.com/connect?tenant=1",
        "http://203.0.113.7:8080/connect",
        "http://[2001:db8::1]/connect",
        "http://localhost.example.com/connect",
    ] {
        match admin::create_client(app.ctx(), client_with_connect_url(url)).await {
            Err(AdminError::Invalid(message)) => {
                assert!(message.contains("must use https"), "{url}: {message}");
                assert!(message.contains("loopback"), "{url}: {message}");
            }
            other => panic!("{url}: expected Invalid, got {other:?}"),
        }
    }
}

/// Local development keeps working: loopback hosts never put the token on a network.
async fn loopback_and_https_connect_urls_are_stored(app: TestApp) {
    for url in [
        "https://crm.example.com/connect?tenant=1",
        "http://localhost:3000/connect",
        "http://127.0.0.1:8080/connect",
        "http://[::1]:8080/connect",
    ] {
        let created = admin::create_client(app.ctx(), client_with_connect_url(url))
            .await
            .unwrap_or_else(|e| panic!("{url}: {e}"));
        let stored = app
            .ctx()
            .store
            .get_client(&created.client.id)
            .await
            .unwrap()
            .expect("the client is stored");
        assert_eq!(stored.connect_url.as_deref(), Some(url));
    }
}

integration_tests::on_both_stores!(
    plain_http_connect_urls_are_refused,
    loopback_and_https_connect_urls_are_stored,
);
