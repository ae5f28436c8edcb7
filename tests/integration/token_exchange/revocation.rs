//! Revoking the subject access token (RFC 7009) ends the tokens exchanged from it, as revoking
//! its family does, whether or not it belongs to a family, and along a chain of exchanges:
//! introspection and userinfo then read them inactive.

use super::*;

crate::on_both_stores!(
    revoking_the_subject_access_token_ends_what_was_exchanged_from_it,
    revoking_an_application_token_ends_what_was_exchanged_from_it,
    revoking_a_link_of_a_chain_ends_the_links_after_it,
    a_chain_of_exchanges_is_kept_short,
);

async fn revoke(app: &TestApp, client: &TestClient, token: &str) {
    let revoked = app
        .post_form(
            "/oauth2/v0/revoke",
            &[
                ("token", token),
                ("token_type_hint", "access_token"),
                ("client_id", &client.id),
                ("client_secret", &client.secret),
            ],
        )
        .await;
    assert_eq!(revoked.status(), StatusCode::OK);
}

/// `subject` exchanged by `client` for a token of the same audience; the new access token.
async fn exchange_ok(app: &TestApp, client: &TestClient, subject: &str) -> String {
    let (status, body) = exchange(app, client, subject, &[]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["access_token"].as_str().unwrap().to_owned()
}

async fn assert_inactive(app: &TestApp, client: &TestClient, token: &str, what: &str) {
    assert_eq!(
        introspect(app, client, token).await,
        json!({"active": false}),
        "{what}"
    );
}

async fn revoking_the_subject_access_token_ends_what_was_exchanged_from_it(app: TestApp) {
    app.create_user_with(LOGIN, PASSWORD, |user| {
        user.email = Some("ann@example.com".into());
    })
    .await;
    let agent = app
        .create_client_with(NewClient::named(
            "agent",
            Scopes::parse("email read").unwrap(),
        ))
        .await;
    let tokens = user_token(&app, &agent, &[("scope", "openid email read")]).await;
    let subject = tokens["access_token"].as_str().unwrap();
    let exchanged = exchange_ok(&app, &agent, subject).await;
    assert_eq!(introspect(&app, &agent, &exchanged).await["active"], true);
    assert_eq!(userinfo_status(&app, &exchanged).await, StatusCode::OK);

    revoke(&app, &agent, subject).await;
    assert_inactive(&app, &agent, subject, "the subject").await;
    assert_inactive(&app, &agent, &exchanged, "exchanged from the subject").await;
    assert_eq!(
        userinfo_status(&app, &exchanged).await,
        StatusCode::UNAUTHORIZED
    );
    // Nor is it exchanged again.
    let refused = exchange(&app, &agent, &exchanged, &[]).await;
    assert_token_error(&refused, 400, "invalid_grant", 165);
    // The family stays live: one access token was revoked, not the family.
    let (status, body) = app
        .refresh(&agent, tokens["refresh_token"].as_str().unwrap())
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let fresh = body["access_token"].as_str().unwrap();
    assert_eq!(introspect(&app, &agent, fresh).await["active"], true);
}

async fn revoking_an_application_token_ends_what_was_exchanged_from_it(app: TestApp) {
    let agent = client_with(&app, "agent", &[]).await;
    let own = app.app_token(&agent).await;
    let exchanged = exchange_ok(&app, &agent, &own).await;
    let other = app.app_token(&agent).await;
    let from_other = exchange_ok(&app, &agent, &other).await;
    assert_eq!(introspect(&app, &agent, &exchanged).await["active"], true);

    revoke(&app, &agent, &own).await;
    assert_inactive(&app, &agent, &exchanged, "exchanged from the app token").await;
    // What was exchanged from another token is untouched.
    assert_eq!(introspect(&app, &agent, &from_other).await["active"], true);
}

async fn revoking_a_link_of_a_chain_ends_the_links_after_it(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let agent = client_with(&app, "agent", &[]).await;
    // From the root: each link exchanged from the one before.
    let root = user_token(&app, &agent, &[]).await;
    let root = root["access_token"].as_str().unwrap().to_owned();
    let mut chain = vec![root];
    for _ in 0..3 {
        let next = exchange_ok(&app, &agent, chain.last().unwrap()).await;
        chain.push(next);
    }
    revoke(&app, &agent, &chain[0]).await;
    for (depth, link) in chain.iter().enumerate() {
        assert_inactive(&app, &agent, link, &format!("link {depth}")).await;
    }

    // From the middle: the links after it end, those before it stay.
    let root = user_token(&app, &agent, &[]).await;
    let root = root["access_token"].as_str().unwrap().to_owned();
    let mut chain = vec![root];
    for _ in 0..3 {
        let next = exchange_ok(&app, &agent, chain.last().unwrap()).await;
        chain.push(next);
    }
    revoke(&app, &agent, &chain[1]).await;
    for (depth, link) in chain.iter().enumerate() {
        let active = introspect(&app, &agent, link).await["active"] == true;
        assert_eq!(active, depth == 0, "link {depth}");
    }
}

/// Reading a token reads each token before it in its chain: a token exchanged from four others
/// is not exchanged again (165, not exchangeable).
async fn a_chain_of_exchanges_is_kept_short(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let agent = client_with(&app, "agent", &[]).await;
    let root = user_token(&app, &agent, &[]).await;
    let mut last = root["access_token"].as_str().unwrap().to_owned();
    for _ in 0..4 {
        last = exchange_ok(&app, &agent, &last).await;
    }
    assert_eq!(introspect(&app, &agent, &last).await["active"], true);
    let refused = exchange(&app, &agent, &last, &[]).await;
    assert_token_error(&refused, 400, "invalid_grant", 165);
}
