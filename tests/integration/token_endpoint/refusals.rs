//! Refusals of the token endpoint, each with its catalogue code: the request, the client, the
//! password grant (without revealing logins; lockout), the user's state, the refresh grant, and an
//! unreachable store.

use crate::support::app::{field, json_of, AppOptions, Backend, TestApp};
use crate::support::assertions::assert_token_error as assert_error;
use reqwest::StatusCode;
use token_core::admin::{self, NewClient};
use token_domain::{ClientId, GrantType, Scopes, UserStatus};

use super::{client_form, PASSWORD};

crate::on_both_stores!(
    request_errors_are_catalogued,
    client_errors_are_catalogued,
    password_errors_do_not_reveal_logins,
    lockout_after_repeated_failures,
    user_states_are_enforced,
    refresh_errors_are_catalogued,
);

async fn request_errors_are_catalogued(app: TestApp) {
    let client = app.create_client("read").await;
    assert_error(
        &app.token(&client_form(&client, &[])).await,
        400,
        "invalid_request",
        65,
    );
    assert_error(
        &app.token(&client_form(
            &client,
            // authorization_code and the device grant are served; this grant never is.
            &[(
                "grant_type",
                "urn:ietf:params:oauth:grant-type:saml2-bearer",
            )],
        ))
        .await,
        400,
        "invalid_grant",
        60,
    );

    let unsupported = app
        .http
        .post(app.url("/v0/token"))
        .header("content-type", "text/plain")
        .body("grant_type=client_credentials")
        .send()
        .await
        .unwrap();
    assert_error(&json_of(unsupported).await, 400, "invalid_request", 135);

    let huge = "x".repeat(17 * 1024);
    let too_large = app
        .post_form(
            "/v0/token",
            &[("grant_type", "client_credentials"), ("pad", &huge)],
        )
        .await;
    assert_eq!(too_large.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(too_large.headers()["cache-control"], "no-store");

    let unknown = app.http.post(app.url("/v0/nothing")).send().await.unwrap();
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
    assert_eq!(json_of(unknown).await.1["error"], "not_found");

    let scope = app
        .token(&client_form(
            &client,
            &[
                ("grant_type", "client_credentials"),
                ("scope", "read admin"),
            ],
        ))
        .await;
    assert_error(&scope, 400, "invalid_scope", 54);

    // The correlation id is echoed, or generated.
    let echoed = app
        .http
        .post(app.url("/v0/token"))
        .header("x-correlation-id", "abc-123")
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .unwrap();
    assert_eq!(echoed.headers()["x-correlation-id"], "abc-123");
    let generated = app.post_form("/v0/token", &[]).await;
    assert!(!generated.headers()["x-correlation-id"].is_empty());
}

async fn client_errors_are_catalogued(app: TestApp) {
    let client = app.create_client("read").await;
    let cc = [("grant_type", "client_credentials")];
    assert_error(&app.token(&cc).await, 400, "invalid_request", 62);
    assert_error(
        &app.token(&[cc[0], ("client_id", &client.id)]).await,
        400,
        "invalid_request",
        63,
    );
    let unknown = uuid::Uuid::new_v4().to_string();
    assert_error(
        &app.token(&[
            cc[0],
            ("client_id", &unknown),
            ("client_secret", &client.secret),
        ])
        .await,
        401,
        "invalid_client",
        61,
    );
    assert_error(
        &app.token(&[cc[0], ("client_id", "not-a-uuid"), ("client_secret", "x")])
            .await,
        401,
        "invalid_client",
        61,
    );
    assert_error(
        &app.token(&[cc[0], ("client_id", &client.id), ("client_secret", "wrong")])
            .await,
        401,
        "invalid_client",
        64,
    );
    // An empty half of HTTP Basic is a missing one, as an empty field is.
    for (id, secret, code) in [
        (client.id.as_str(), "", 63),
        ("", client.secret.as_str(), 62),
    ] {
        let answer = app
            .http
            .post(app.url("/v0/token"))
            .basic_auth(id, Some(secret))
            .form(&cc)
            .send()
            .await
            .unwrap();
        assert_error(&json_of(answer).await, 400, "invalid_request", code);
    }

    // A grant's own parameters are only looked at once the client is authenticated and allowed
    // the grant: no client and no username is the client's 62, a wrong secret its 64.
    let password = [("grant_type", "password")];
    assert_error(&app.token(&password).await, 400, "invalid_request", 62);
    assert_error(
        &app.token(&[
            password[0],
            ("client_id", &client.id),
            ("client_secret", "wrong"),
        ])
        .await,
        401,
        "invalid_client",
        64,
    );
    assert_error(
        &app.token(&client_form(&client, &password)).await,
        400,
        "invalid_request",
        51,
    );

    let mut restricted = NewClient::named("cc only", Scopes::parse("read").unwrap());
    restricted.grants = [GrantType::ClientCredentials].into_iter().collect();
    let restricted = app.create_client_with(restricted).await;
    app.create_user("frank", PASSWORD).await;
    assert_error(
        &app.password_grant(&restricted, "frank", PASSWORD, &[])
            .await,
        400,
        "invalid_grant",
        60,
    );
    // The grant's permission (60) before its parameters (51).
    assert_error(
        &app.token(&client_form(&restricted, &password)).await,
        400,
        "invalid_grant",
        60,
    );

    admin::disable_client(app.ctx(), &ClientId::parse(&client.id).unwrap())
        .await
        .unwrap();
    assert_error(
        &app.token(&client_form(&client, &cc)).await,
        403,
        "access_denied",
        59,
    );
}

async fn password_errors_do_not_reveal_logins(app: TestApp) {
    let app = &app;
    let client = app.create_client("read").await;
    app.create_user("grace", PASSWORD).await;
    let grant = |username: &'static str, password: &'static str| {
        let mut form = client_form(&client, &[("grant_type", "password")]);
        if !username.is_empty() {
            form.push(("username", username));
        }
        if !password.is_empty() {
            form.push(("password", password));
        }
        async move { app.token(&form).await }
    };
    assert_error(&grant("", PASSWORD).await, 400, "invalid_request", 51);
    assert_error(&grant("grace", "").await, 400, "invalid_request", 52);
    let wrong_password = grant("grace", "nope").await;
    let unknown_login = grant("nobody", "nope").await;
    assert_error(&wrong_password, 400, "invalid_grant", 5);
    assert_eq!(wrong_password, unknown_login, "indistinguishable");

    let bad_credtype = app
        .password_grant(&client, "grace", PASSWORD, &[("credtype", "otp")])
        .await;
    assert_error(&bad_credtype, 400, "invalid_request", 120);
}

async fn lockout_after_repeated_failures(app: TestApp) {
    let app = &app;
    let client = app.create_client("read").await;
    app.create_user("heidi", PASSWORD).await;
    let attempt = |login: &'static str, password: &'static str| {
        app.password_grant(&client, login, password, &[])
    };
    for _ in 0..5 {
        assert_error(&attempt("heidi", "wrong").await, 400, "invalid_grant", 5);
    }
    // Locked even with the right password, and an unknown login locks the same way.
    assert_error(&attempt("heidi", PASSWORD).await, 400, "invalid_grant", 14);
    for _ in 0..5 {
        assert_error(
            &attempt("nobody-at-all", "wrong").await,
            400,
            "invalid_grant",
            5,
        );
    }
    assert_error(
        &attempt("nobody-at-all", PASSWORD).await,
        400,
        "invalid_grant",
        14,
    );
    // The window is 15 minutes.
    app.clock.advance(15 * 60 + 1);
    let (status, body) = attempt("heidi", PASSWORD).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

async fn user_states_are_enforced(app: TestApp) {
    let app = &app;
    let client = app.create_client("read").await;
    app.create_user_with("ivan", PASSWORD, |u| u.status = UserStatus::Disabled)
        .await;
    app.create_user_with("judy", PASSWORD, |u| u.status = UserStatus::LogonDenied)
        .await;
    let grant = |login: &'static str| app.password_grant(&client, login, PASSWORD, &[]);
    assert_error(&grant("ivan").await, 400, "invalid_grant", 10);
    assert_error(&grant("judy").await, 400, "invalid_grant", 12);
    // A state only shows to those who know the password.
    let wrong = app.password_grant(&client, "ivan", "x", &[]).await;
    assert_error(&wrong, 400, "invalid_grant", 5);

    // A user disabled after sign-in can no longer refresh.
    let kim = app.create_user("kim", PASSWORD).await;
    let tokens = app.user_tokens(&client, "kim", PASSWORD).await;
    let mut disabled = kim.clone();
    disabled.status = UserStatus::Disabled;
    app.store.principals().put_user(&disabled).await.unwrap();
    let refresh = app.refresh(&client, field(&tokens, "refresh_token")).await;
    assert_error(&refresh, 400, "invalid_request", 123);
}

async fn refresh_errors_are_catalogued(app: TestApp) {
    let client = app.create_client("read").await;
    let other = app.create_client("read").await;
    app.create_user("leo", PASSWORD).await;
    let tokens = app.user_tokens(&client, "leo", PASSWORD).await;
    let rt = field(&tokens, "refresh_token");

    assert_error(
        &app.token(&client_form(&client, &[("grant_type", "refresh_token")]))
            .await,
        400,
        "invalid_request",
        106,
    );
    assert_error(
        &app.refresh(&client, "not-a-token").await,
        400,
        "invalid_grant",
        108,
    );
    assert_error(&app.refresh(&other, rt).await, 400, "invalid_grant", 105);
    // Another client's attempt changed nothing.
    let (status, _) = app.refresh(&client, rt).await;
    assert_eq!(status, StatusCode::OK);

    let mut no_refresh = NewClient::named("no refresh", Scopes::parse("read").unwrap());
    no_refresh.refresh_allowed = false;
    let no_refresh = app.create_client_with(no_refresh).await;
    let tokens = app.user_tokens(&no_refresh, "leo", PASSWORD).await;
    assert_error(
        &app.refresh(&no_refresh, field(&tokens, "refresh_token"))
            .await,
        400,
        "invalid_request",
        107,
    );
    // Refresh's missing token (106) comes before its permission (107).
    assert_error(
        &app.token(&client_form(
            &no_refresh,
            &[("grant_type", "refresh_token")],
        ))
        .await,
        400,
        "invalid_request",
        106,
    );
}

/// A store that cannot be reached gives 503 with a message, not a hang or a 500.
#[tokio::test]
async fn unreachable_store_answers_503() {
    // A real DynamoDB client pointed at a held loopback port that refuses connections: the
    // fault is real, not mocked.
    let refusing = crate::support::ports::RefusingPort::bind();
    let store =
        token_store::dynamodb::DynamoStore::connect("tokens", Some(&refusing.url("http"))).await;
    let app = TestApp::with_store(
        std::sync::Arc::new(store),
        Backend::DynamoDb,
        AppOptions::default(),
    )
    .await;
    let (status, body) = app
        .token(&[
            ("grant_type", "client_credentials"),
            ("client_id", &uuid::Uuid::new_v4().to_string()),
            ("client_secret", "x"),
        ])
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"], "temporarily_unavailable");
    assert!(!body["message"].as_str().unwrap().is_empty());
}
