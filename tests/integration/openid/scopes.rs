//! `openid` is an OpenID scope, not an API permission: a client that may sign users in asks for
//! it without having it registered; it is echoed and kept across refreshes.

use crate::support::app::TestApp;
use crate::support::assertions::assert_token_error;
use reqwest::StatusCode;
use token_core::admin::NewClient;
use token_domain::{GrantType, Scopes};

use super::*;

crate::on_both_stores!(
    sign_in_grants_may_ask_for_openid_unregistered,
    applications_get_no_openid,
);

async fn sign_in_grants_may_ask_for_openid_unregistered(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = oidc_client(&app, "relying party").await;

    let tokens = code_flow_tokens(&app, &client, &[("scope", "openid read")]).await;
    assert_eq!(tokens["scope"], "openid read");
    assert!(tokens["id_token"].is_string());

    let tokens = password_tokens(&app, &client, "openid read").await;
    assert_eq!(tokens["scope"], "openid read");
    let (status, refreshed) = refresh(&app, &client, &tokens).await;
    assert_eq!(status, StatusCode::OK, "{refreshed}");
    assert_eq!(refreshed["scope"], "openid read", "kept across refreshes");

    // Without `scope` the family gets the registered scopes, as before.
    let (status, plain) = app.password_grant(&client, LOGIN, PASSWORD, &[]).await;
    assert_eq!(status, StatusCode::OK, "{plain}");
    assert_eq!(plain["scope"], "email profile read");
    // Other unregistered scopes are still refused.
    let (status, body) = app
        .password_grant(&client, LOGIN, PASSWORD, &[("scope", "openid admin")])
        .await;
    assert_token_error(&(status, body), 400, "invalid_scope", 54);
}

async fn applications_get_no_openid(app: TestApp) {
    let client = oidc_client(&app, "relying party").await;
    let form = |client: &crate::support::app::TestClient| {
        vec![
            ("grant_type", "client_credentials".to_owned()),
            ("client_id", client.id.clone()),
            ("client_secret", client.secret.clone()),
            ("scope", "openid".to_owned()),
        ]
    };
    let sent = form(&client);
    let sent: Vec<(&str, &str)> = sent.iter().map(|(k, v)| (*k, v.as_str())).collect();
    assert_token_error(&app.token(&sent).await, 400, "invalid_scope", 54);

    let mut new = NewClient::named("service", Scopes::parse("read").unwrap());
    new.grants = [GrantType::ClientCredentials].into_iter().collect();
    let service = app.create_client_with(new).await;
    let sent = form(&service);
    let sent: Vec<(&str, &str)> = sent.iter().map(|(k, v)| (*k, v.as_str())).collect();
    assert_token_error(&app.token(&sent).await, 400, "invalid_scope", 54);
}
