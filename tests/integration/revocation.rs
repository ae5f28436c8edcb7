//! `POST /oauth2/v0/revoke` (RFC 7009) and `DELETE /app-mgmt/v0/connections` (docs/decisions.md,
//! "Revocation, introspection and connections"), on both stores; plus the `concur-api` crate's
//! `revoke_tokens` against the app.

use crate::support::app::{json_of, TestApp, TestClient};
use reqwest::StatusCode;
use serde_json::Value;

use crate::introspection::{assert_inactive, introspect};

const PASSWORD: &str = "revocation password 1";

crate::on_both_stores!(
    revoking_a_refresh_token_revokes_its_family,
    revoking_an_access_token_revokes_only_it,
    unknown_and_foreign_tokens_answer_200_and_change_nothing,
    deleting_connections_revokes_that_users_families_with_that_client_only,
    concur_api_revoke_tokens_signs_the_user_out,
    a_wrong_client_secret_revokes_and_reveals_nothing,
);

/// Revokes `token` as `client`; returns the status.
async fn revoke(app: &TestApp, client: &TestClient, token: &str) -> StatusCode {
    let response = app
        .post_form(
            "/oauth2/v0/revoke",
            &[
                ("client_id", &client.id),
                ("client_secret", &client.secret),
                ("token", token),
            ],
        )
        .await;
    let status = response.status();
    assert!(
        response.text().await.unwrap().is_empty(),
        "revocation answers an empty body"
    );
    status
}

async fn refresh(app: &TestApp, client: &TestClient, token: &str) -> (StatusCode, Value) {
    app.token(&[
        ("grant_type", "refresh_token"),
        ("client_id", &client.id),
        ("client_secret", &client.secret),
        ("refresh_token", token),
    ])
    .await
}

fn text<'a>(tokens: &'a Value, name: &str) -> &'a str {
    tokens[name].as_str().unwrap()
}

async fn revoking_a_refresh_token_revokes_its_family(app: TestApp) {
    let client = app.create_client("read").await;
    app.create_user("mara", PASSWORD).await;
    let tokens = app.user_tokens(&client, "mara", PASSWORD).await;
    let (status, rotated) = refresh(&app, &client, text(&tokens, "refresh_token")).await;
    assert_eq!(status, StatusCode::OK, "{rotated}");

    assert_eq!(
        revoke(&app, &client, text(&rotated, "refresh_token")).await,
        StatusCode::OK
    );
    for (what, token) in [
        ("the refresh token", text(&rotated, "refresh_token")),
        (
            "the family's latest access token",
            text(&rotated, "access_token"),
        ),
        (
            "the family's first access token",
            text(&tokens, "access_token"),
        ),
    ] {
        assert_inactive(&introspect(&app, &client, token).await, what);
    }
    let (status, body) = refresh(&app, &client, text(&rotated, "refresh_token")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["code"], 108);
    assert_eq!(
        revoke(&app, &client, text(&rotated, "refresh_token")).await,
        StatusCode::OK,
        "revoking again is fine"
    );
}

async fn revoking_an_access_token_revokes_only_it(app: TestApp) {
    let client = app.create_client("read").await;
    app.create_user("nils", PASSWORD).await;
    let tokens = app.user_tokens(&client, "nils", PASSWORD).await;
    let application = app.app_token(&client).await;

    let response = app
        .http
        .post(app.url("/oauth2/v0/revoke"))
        .basic_auth(&client.id, Some(&client.secret))
        .json(&serde_json::json!({
            "token": text(&tokens, "access_token"),
            "token_type_hint": "access_token",
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_inactive(
        &introspect(&app, &client, text(&tokens, "access_token")).await,
        "the revoked access token",
    );
    assert_eq!(
        introspect(&app, &client, text(&tokens, "refresh_token")).await["active"],
        true,
        "its family's refresh token stays active"
    );
    assert_eq!(
        introspect(&app, &client, &application).await["active"],
        true
    );
    let (status, body) = refresh(&app, &client, text(&tokens, "refresh_token")).await;
    assert_eq!(status, StatusCode::OK, "the family still refreshes: {body}");

    assert_eq!(revoke(&app, &client, &application).await, StatusCode::OK);
    assert_inactive(
        &introspect(&app, &client, &application).await,
        "a revoked application token",
    );
    // A revoked token no longer authenticates anywhere.
    let response = app
        .http
        .delete(app.url("/app-mgmt/v0/connections"))
        .bearer_auth(text(&tokens, "access_token"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
}

async fn unknown_and_foreign_tokens_answer_200_and_change_nothing(app: TestApp) {
    let owner = app.create_client("read").await;
    let other = app.create_client("read").await;
    app.create_user("olga", PASSWORD).await;
    let tokens = app.user_tokens(&owner, "olga", PASSWORD).await;

    for token in [
        "unknown",
        text(&tokens, "access_token"),
        text(&tokens, "refresh_token"),
    ] {
        assert_eq!(revoke(&app, &other, token).await, StatusCode::OK);
    }
    for name in ["access_token", "refresh_token"] {
        assert_eq!(
            introspect(&app, &owner, text(&tokens, name)).await["active"],
            true,
            "another client's revocation left the {name} active"
        );
    }
    let (status, body) = refresh(&app, &owner, text(&tokens, "refresh_token")).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // Client authentication is required, as at the token endpoint.
    let response = app
        .post_form(
            "/oauth2/v0/revoke",
            &[("client_id", &owner.id), ("token", "x")],
        )
        .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["code"], 63);
}

async fn deleting_connections_revokes_that_users_families_with_that_client_only(app: TestApp) {
    let client = app.create_client("read").await;
    let other_client = app.create_client("read").await;
    app.create_user("pia", PASSWORD).await;
    app.create_user("quinn", PASSWORD).await;
    let first = app.user_tokens(&client, "pia", PASSWORD).await;
    let second = app.user_tokens(&client, "pia", PASSWORD).await;
    let elsewhere = app.user_tokens(&other_client, "pia", PASSWORD).await;
    let bystander = app.user_tokens(&client, "quinn", PASSWORD).await;

    let response = app
        .http
        .delete(app.url("/app-mgmt/v0/connections"))
        .bearer_auth(text(&second, "access_token"))
        .header("concur-correlationid", "sign-out-1")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["concur-correlationid"], "sign-out-1");

    for tokens in [&first, &second] {
        for name in ["access_token", "refresh_token"] {
            assert_inactive(
                &introspect(&app, &client, text(tokens, name)).await,
                "a family of that user with that client",
            );
        }
    }
    for (owner, tokens) in [(&other_client, &elsewhere), (&client, &bystander)] {
        for name in ["access_token", "refresh_token"] {
            assert_eq!(
                introspect(&app, owner, text(tokens, name)).await["active"],
                true,
                "another client's or another user's {name} stays live"
            );
        }
    }

    // No token, or an application token: nothing to sign out.
    let response = app
        .http
        .delete(app.url("/app-mgmt/v0/connections"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert!(response.headers().contains_key("www-authenticate"));
    let application = app.app_token(&client).await;
    let response = app
        .http
        .delete(app.url("/app-mgmt/v0/connections"))
        .bearer_auth(&application)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
}

async fn concur_api_revoke_tokens_signs_the_user_out(app: TestApp) {
    let client = app.create_client("read").await;
    app.create_user("rosa", PASSWORD).await;
    let tokens = app.user_tokens(&client, "rosa", PASSWORD).await;
    let http = reqwest013::Client::new();
    concur_api::auth::revoke_tokens(&http, &app.address, text(&tokens, "access_token"))
        .await
        .expect("concur-api's revoke_tokens succeeds");
    assert_inactive(
        &introspect(&app, &client, text(&tokens, "refresh_token")).await,
        "the refresh token after concur-api's sign-out",
    );
    let error = concur_api::auth::revoke_tokens(&http, &app.address, text(&tokens, "access_token"))
        .await
        .expect_err("the revoked token no longer signs out");
    assert!(error.to_string().contains("Revoke failed"), "{error}");
}

/// With the right client id and a wrong secret, neither revocation nor introspection acts on a
/// real token of that client: 401 with code 64, no claims, and the token still works.
async fn a_wrong_client_secret_revokes_and_reveals_nothing(app: TestApp) {
    let client = app.create_client("read").await;
    app.create_user("wren", PASSWORD).await;
    let tokens = app.user_tokens(&client, "wren", PASSWORD).await;
    for name in ["refresh_token", "access_token"] {
        let token = text(&tokens, name);
        for path in ["/oauth2/v0/revoke", "/oauth2/v0/introspect"] {
            let form = [
                ("client_id", client.id.as_str()),
                ("client_secret", "not the secret"),
                ("token", token),
            ];
            let (status, body) = json_of(app.post_form(path, &form).await).await;
            assert_eq!(status, StatusCode::UNAUTHORIZED, "{path} {name}: {body}");
            assert_eq!(body["code"], 64, "{path} {name}: {body}");
            assert!(
                body.get("active").is_none() && body.get("sub").is_none(),
                "{body}"
            );
        }
        let still = introspect(&app, &client, token).await;
        assert_eq!(still["active"], true, "{name} is not revoked: {still}");
    }
}
