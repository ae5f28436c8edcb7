//! `POST /v0/token` over real HTTP, on both stores: every grant, rotation and reuse detection,
//! expiry by the manual clock, and the error catalogue of contract part 2.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use integration_tests::app::{json_of, AppOptions, Backend, TestApp, TestClient};
use integration_tests::assertions::assert_token_error as assert_error;
use reqwest::StatusCode;
use serde_json::Value;
use token_service::admin::{self, NewClient};
use token_service::clock::Clock;
use token_service::config::Policy;
use token_service::domain::{
    AuthToken, ClientId, CompanyStatus, GrantType, PrincipalId, Scopes, TokenId, UserStatus,
};
use token_service::secrets::TokenHash;

integration_tests::on_both_stores!(
    client_credentials_issues_an_application_token,
    basic_authentication_is_accepted_and_its_failures_challenge,
    json_bodies_and_the_oauth2_alias_path_work,
    password_grant_then_refresh_rotates,
    refresh_alias_and_scope_narrowing,
    replayed_refresh_token_revokes_the_family,
    expiries_follow_the_clock,
    request_errors_are_catalogued,
    client_errors_are_catalogued,
    password_errors_do_not_reveal_logins,
    lockout_after_repeated_failures,
    user_states_are_enforced,
    refresh_errors_are_catalogued,
    company_password_grant_and_its_errors,
    geolocation_rule_changes_nothing_elsewhere,
);

const PASSWORD: &str = "correct horse battery staple";

fn client_form<'a>(
    client: &'a TestClient,
    extra: &[(&'a str, &'a str)],
) -> Vec<(&'a str, &'a str)> {
    let mut form = vec![
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
    ];
    form.extend_from_slice(extra);
    form
}

fn refresh_form<'a>(client: &'a TestClient, refresh_token: &'a str) -> Vec<(&'a str, &'a str)> {
    client_form(
        client,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
        ],
    )
}

fn str_of<'a>(body: &'a Value, field: &str) -> &'a str {
    body[field]
        .as_str()
        .unwrap_or_else(|| panic!("{field} missing in {body}"))
}

/// The access token's `jti`, read from its (already verified elsewhere) payload.
fn jti_of(access_token: &str) -> TokenId {
    let payload = access_token.split('.').nth(1).unwrap();
    let claims: Value = serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(payload)
            .unwrap(),
    )
    .unwrap();
    TokenId::parse(claims["jti"].as_str().unwrap()).unwrap()
}

async fn client_credentials_issues_an_application_token(app: TestApp) {
    let client = app.create_client("read write").await;
    let response = app
        .post_form(
            "/v0/token",
            &client_form(
                &client,
                &[("grant_type", "client_credentials"), ("scope", "read")],
            ),
        )
        .await;
    let headers = response.headers().clone();
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(headers["cache-control"], "no-store");
    assert_eq!(headers["pragma"], "no-cache");
    assert!(headers["content-type"]
        .to_str()
        .unwrap()
        .starts_with("application/json"));
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["expires_in"], 3600);
    assert_eq!(body["scope"], "read");
    assert_eq!(body["principal_type"], "application");
    assert_eq!(body["id"], client.id.as_str());
    assert_eq!(body["geolocation"], app.address.as_str());
    assert!(
        body.get("refresh_token").is_none(),
        "no refresh token: {body}"
    );
    assert!(body.get("refresh_expires_in").is_none());

    let token = str_of(&body, "access_token");
    let claims = app.services.codec.decode(token, app.clock.now()).unwrap();
    assert_eq!(claims.sub, client.id);
    assert_eq!(claims.client_id, client.id);
    let stored = app
        .store
        .get_access_token(&jti_of(token), app.clock.now())
        .await
        .unwrap()
        .expect("the jti is persisted");
    assert_eq!(stored.expires_at, stored.issued_at + 3600);
    assert_eq!(stored.family_id, None);
    assert!(!stored.revoked);
}

async fn basic_authentication_is_accepted_and_its_failures_challenge(app: TestApp) {
    let client = app.create_client("read").await;
    let basic =
        |id: &str, secret: &str| format!("Basic {}", STANDARD.encode(format!("{id}:{secret}")));
    let send = |authorization: String, form: Vec<(&'static str, String)>| {
        app.http
            .post(app.url("/v0/token"))
            .header("authorization", authorization)
            .form(&form)
            .send()
    };

    let ok = send(
        basic(&client.id, &client.secret),
        vec![("grant_type", "client_credentials".into())],
    )
    .await
    .unwrap();
    let (status, body) = json_of(ok).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["principal_type"], "application");
    assert_eq!(body["id"], client.id.as_str());
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["scope"], "read");
    let claims = app
        .services
        .codec
        .decode(str_of(&body, "access_token"), app.clock.now())
        .expect("an access token this deployment signed");
    assert_eq!(claims.sub, client.id, "issued to the client named by Basic");

    let wrong = send(
        basic(&client.id, "wrong"),
        vec![("grant_type", "client_credentials".into())],
    )
    .await
    .unwrap();
    assert!(wrong.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .starts_with("Basic"));
    assert_error(&json_of(wrong).await, 401, "invalid_client", 64);

    // Body credentials that fail get no Basic challenge.
    let in_body = app
        .post_form(
            "/v0/token",
            &[
                ("grant_type", "client_credentials"),
                ("client_id", &client.id),
                ("client_secret", "wrong"),
            ],
        )
        .await;
    assert!(
        in_body.headers().get("www-authenticate").is_none(),
        "{:?}",
        in_body.headers()
    );
    assert_error(&json_of(in_body).await, 401, "invalid_client", 64);

    let conflicting = send(
        basic(&client.id, &client.secret),
        vec![
            ("grant_type", "client_credentials".into()),
            ("client_id", uuid::Uuid::new_v4().to_string()),
        ],
    )
    .await
    .unwrap();
    assert_error(&json_of(conflicting).await, 400, "invalid_request", 115);
}

async fn json_bodies_and_the_oauth2_alias_path_work(app: TestApp) {
    let client = app.create_client("read").await;
    let body = serde_json::json!({
        "grant_type": "client_credentials", "client_id": client.id, "client_secret": client.secret
    });
    let (status, json) = json_of(app.post_json("/v0/token", &body).await).await;
    assert_eq!(status, StatusCode::OK, "{json}");
    let (status, json) = json_of(app.post_json("/oauth2/v0/token", &body).await).await;
    assert_eq!(status, StatusCode::OK, "{json}");
    assert_eq!(json["principal_type"], "application");
}

async fn password_grant_then_refresh_rotates(app: TestApp) {
    let client = app.create_client("read write").await;
    let user = app.create_user("Alice@Example.com", PASSWORD).await;
    // Logins are case-insensitive.
    let first = app
        .user_tokens(&client, "alice@example.COM", PASSWORD)
        .await;
    assert_eq!(first["principal_type"], "user");
    assert_eq!(first["id"], user.id.to_string());
    assert_eq!(first["scope"], "read write");
    // A Unix time, as in Concur's responses (contract part 2).
    assert_eq!(first["refresh_expires_in"], app.clock.now() + 15_552_000);
    assert_eq!(first["geolocation"], app.address.as_str());
    let rt1 = str_of(&first, "refresh_token").to_owned();
    assert!(rt1.len() >= 43, "at least 256 bits");
    assert!(
        app.store
            .get_refresh_token(&TokenHash::of(&rt1), app.clock.now())
            .await
            .unwrap()
            .is_some(),
        "stored under its hash"
    );

    app.clock.advance(60);
    let (status, second) = app.token(&refresh_form(&client, &rt1)).await;
    assert_eq!(status, StatusCode::OK, "{second}");
    let rt2 = str_of(&second, "refresh_token");
    assert_ne!(rt2, rt1);
    assert_eq!(second["id"], user.id.to_string());
    assert_eq!(second["refresh_expires_in"], app.clock.now() + 15_552_000);
    let record = app
        .store
        .get_refresh_token(&TokenHash::of(rt2), app.clock.now())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(record.generation, 1);
    assert_eq!(
        record.expires_at,
        app.clock.now() + 15_552_000,
        "lifetime renewed"
    );
    let (status, third) = app.token(&refresh_form(&client, rt2)).await;
    assert_eq!(status, StatusCode::OK, "{third}");
}

async fn refresh_alias_and_scope_narrowing(app: TestApp) {
    let client = app.create_client("read write admin").await;
    app.create_user("bob", PASSWORD).await;
    let (status, first) = app
        .token(&client_form(
            &client,
            &[
                ("grant_type", "password"),
                ("username", "bob"),
                ("password", PASSWORD),
                ("scope", "read write"),
            ],
        ))
        .await;
    assert_eq!(status, StatusCode::OK, "{first}");
    assert_eq!(first["scope"], "read write");
    let rt = str_of(&first, "refresh_token");

    let (status, body) = app
        .token(&client_form(
            &client,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", rt),
                ("scope", "read admin"),
            ],
        ))
        .await;
    assert_error(&(status, body), 400, "invalid_scope", 54);

    let (status, narrowed) = app
        .token(&client_form(
            &client,
            &[
                ("grant_type", "refresh"),
                ("refresh_token", rt),
                ("scope", "read"),
            ],
        ))
        .await;
    assert_eq!(status, StatusCode::OK, "{narrowed}");
    assert_eq!(narrowed["scope"], "read");
    // The family keeps its scopes: the next refresh may ask for all of them again.
    let (status, again) = app
        .token(&refresh_form(&client, str_of(&narrowed, "refresh_token")))
        .await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(again["scope"], "read write");
}

async fn replayed_refresh_token_revokes_the_family(app: TestApp) {
    let client = app.create_client("read").await;
    app.create_user("carol", PASSWORD).await;
    let first = app.user_tokens(&client, "carol", PASSWORD).await;
    let rt1 = str_of(&first, "refresh_token").to_owned();
    let (_, second) = app.token(&refresh_form(&client, &rt1)).await;
    let rt2 = str_of(&second, "refresh_token").to_owned();
    let access2 = str_of(&second, "access_token").to_owned();

    // At the end of the retry window (contract part 7) a replay is reuse.
    app.clock.advance(app.services.policy.refresh_grace_seconds);
    let replay = app.token(&refresh_form(&client, &rt1)).await;
    assert_error(&replay, 400, "invalid_grant", 108);
    // The whole family is gone: the current refresh token and the access tokens it minted.
    assert_error(
        &app.token(&refresh_form(&client, &rt2)).await,
        400,
        "invalid_grant",
        108,
    );
    let now = app.clock.now();
    let record = app
        .store
        .get_access_token(&jti_of(&access2), now)
        .await
        .unwrap()
        .unwrap();
    assert!(
        record.revoked,
        "access tokens of a revoked family read revoked"
    );
    let family = app
        .store
        .get_family(&record.family_id.unwrap(), now)
        .await
        .unwrap()
        .unwrap();
    assert!(family.revoked_at.is_some());
    // Other families of the same user are untouched.
    let other = app.user_tokens(&client, "carol", PASSWORD).await;
    let (status, _) = app
        .token(&refresh_form(&client, str_of(&other, "refresh_token")))
        .await;
    assert_eq!(status, StatusCode::OK);
}

async fn expiries_follow_the_clock(app: TestApp) {
    let client = app.create_client("read").await;
    app.create_user("erin", PASSWORD).await;
    let tokens = app.user_tokens(&client, "erin", PASSWORD).await;
    let access = str_of(&tokens, "access_token");
    let rt = str_of(&tokens, "refresh_token").to_owned();
    let jti = jti_of(access);

    app.clock.advance(3599);
    assert!(app.services.codec.decode(access, app.clock.now()).is_ok());
    assert!(app
        .store
        .get_access_token(&jti, app.clock.now())
        .await
        .unwrap()
        .is_some());
    app.clock.advance(1);
    assert!(
        app.services.codec.decode(access, app.clock.now()).is_err(),
        "one hour"
    );
    assert!(app
        .store
        .get_access_token(&jti, app.clock.now())
        .await
        .unwrap()
        .is_none());

    // Refresh tokens live 180 days by default.
    app.clock.advance(180 * 86_400);
    assert_error(
        &app.token(&refresh_form(&client, &rt)).await,
        400,
        "invalid_grant",
        108,
    );
}

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
            // authorization_code is served now (contract part 8); this grant never is.
            &[("grant_type", "urn:ietf:params:oauth:grant-type:device_code")],
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

    let mut restricted = NewClient::named("cc only", Scopes::parse("read").unwrap());
    restricted.grants = [GrantType::ClientCredentials].into_iter().collect();
    let restricted = app.create_client_with(restricted).await;
    app.create_user("frank", PASSWORD).await;
    assert_error(
        &app.token(&client_form(
            &restricted,
            &[
                ("grant_type", "password"),
                ("username", "frank"),
                ("password", PASSWORD),
            ],
        ))
        .await,
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
        .token(&client_form(
            &client,
            &[
                ("grant_type", "password"),
                ("username", "grace"),
                ("password", PASSWORD),
                ("credtype", "otp"),
            ],
        ))
        .await;
    assert_error(&bad_credtype, 400, "invalid_request", 120);
}

async fn lockout_after_repeated_failures(app: TestApp) {
    let app = &app;
    let client = app.create_client("read").await;
    app.create_user("heidi", PASSWORD).await;
    let attempt = |password: &'static str| {
        let form = client_form(
            &client,
            &[
                ("grant_type", "password"),
                ("username", "heidi"),
                ("password", password),
            ],
        );
        async move { app.token(&form).await }
    };
    for _ in 0..5 {
        assert_error(&attempt("wrong").await, 400, "invalid_grant", 5);
    }
    // Locked even with the right password, and an unknown login locks the same way.
    assert_error(&attempt(PASSWORD).await, 400, "invalid_grant", 14);
    let unknown = |password: &'static str| {
        let form = client_form(
            &client,
            &[
                ("grant_type", "password"),
                ("username", "nobody-at-all"),
                ("password", password),
            ],
        );
        async move { app.token(&form).await }
    };
    for _ in 0..5 {
        assert_error(&unknown("wrong").await, 400, "invalid_grant", 5);
    }
    assert_error(&unknown(PASSWORD).await, 400, "invalid_grant", 14);
    // The window is 15 minutes.
    app.clock.advance(15 * 60 + 1);
    let (status, body) = attempt(PASSWORD).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

async fn user_states_are_enforced(app: TestApp) {
    let app = &app;
    let client = app.create_client("read").await;
    app.create_user_with("ivan", PASSWORD, |u| u.status = UserStatus::Disabled)
        .await;
    app.create_user_with("judy", PASSWORD, |u| u.status = UserStatus::LogonDenied)
        .await;
    let grant = |login: &'static str| {
        let form = client_form(
            &client,
            &[
                ("grant_type", "password"),
                ("username", login),
                ("password", PASSWORD),
            ],
        );
        async move { app.token(&form).await }
    };
    assert_error(&grant("ivan").await, 400, "invalid_grant", 10);
    assert_error(&grant("judy").await, 400, "invalid_grant", 12);
    // A state only shows to those who know the password.
    let wrong = app
        .token(&client_form(
            &client,
            &[
                ("grant_type", "password"),
                ("username", "ivan"),
                ("password", "x"),
            ],
        ))
        .await;
    assert_error(&wrong, 400, "invalid_grant", 5);

    // A user disabled after sign-in can no longer refresh.
    let kim = app.create_user("kim", PASSWORD).await;
    let tokens = app.user_tokens(&client, "kim", PASSWORD).await;
    let mut disabled = kim.clone();
    disabled.status = UserStatus::Disabled;
    app.store.put_user(&disabled).await.unwrap();
    let refresh = app
        .token(&refresh_form(&client, str_of(&tokens, "refresh_token")))
        .await;
    assert_error(&refresh, 400, "invalid_request", 123);
}

async fn refresh_errors_are_catalogued(app: TestApp) {
    let client = app.create_client("read").await;
    let other = app.create_client("read").await;
    app.create_user("leo", PASSWORD).await;
    let tokens = app.user_tokens(&client, "leo", PASSWORD).await;
    let rt = str_of(&tokens, "refresh_token");

    assert_error(
        &app.token(&client_form(&client, &[("grant_type", "refresh_token")]))
            .await,
        400,
        "invalid_request",
        106,
    );
    assert_error(
        &app.token(&refresh_form(&client, "not-a-token")).await,
        400,
        "invalid_grant",
        108,
    );
    assert_error(
        &app.token(&refresh_form(&other, rt)).await,
        400,
        "invalid_grant",
        105,
    );
    // Another client's attempt changed nothing.
    let (status, _) = app.token(&refresh_form(&client, rt)).await;
    assert_eq!(status, StatusCode::OK);

    let mut no_refresh = NewClient::named("no refresh", Scopes::parse("read").unwrap());
    no_refresh.refresh_allowed = false;
    let no_refresh = app.create_client_with(no_refresh).await;
    let tokens = app.user_tokens(&no_refresh, "leo", PASSWORD).await;
    assert_error(
        &app.token(&refresh_form(&no_refresh, str_of(&tokens, "refresh_token")))
            .await,
        400,
        "invalid_request",
        107,
    );
}

async fn company_password_grant_and_its_errors(app: TestApp) {
    let app = &app;
    let client = app.create_client("read").await;
    let other = app.create_client("read").await;
    let company = app.create_company("Acme").await;
    let admin_user = app
        .create_user_with("boss", PASSWORD, |u| {
            u.company_id = Some(company.id);
            u.is_admin = true;
        })
        .await;
    let client_id = ClientId::parse(&client.id).unwrap();
    let now = app.clock.now();
    let auth_token = "auth-token-for-test-0123456789abcdef0123456789";
    app.store
        .put_auth_token(&AuthToken {
            token_hash: TokenHash::of(auth_token),
            company_id: company.id,
            client_id,
            issued_by: admin_user.id,
            issued_at: now,
            expires_at: now + 86_400,
        })
        .await
        .unwrap();
    let company_id = company.id.to_string();
    let grant = |client: &TestClient, username: String, password: &'static str| {
        let form: Vec<(String, String)> = client_form(
            client,
            &[("grant_type", "password"), ("credtype", "authtoken")],
        )
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .chain([
            ("username".to_owned(), username),
            ("password".to_owned(), password.to_owned()),
        ])
        .collect();
        async move {
            let form: Vec<(&str, &str)> =
                form.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            app.token(&form).await
        }
    };

    // Not enabled for the client yet.
    assert_error(
        &grant(&client, company_id.clone(), auth_token).await,
        401,
        "invalid_client",
        53,
    );
    admin::enable_company_for_client(app.ctx(), &company.id, &client_id)
        .await
        .unwrap();

    let (status, body) = grant(&client, company_id.clone(), auth_token).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["principal_type"], "company");
    assert_eq!(body["id"], company_id.as_str());
    // Reusable within the window.
    let (status, _) = grant(&client, company_id.clone(), auth_token).await;
    assert_eq!(status, StatusCode::OK);
    let (status, refreshed) = app
        .token(&refresh_form(&client, str_of(&body, "refresh_token")))
        .await;
    assert_eq!(status, StatusCode::OK, "{refreshed}");

    assert_error(
        &grant(&other, company_id.clone(), auth_token).await,
        400,
        "invalid_grant",
        105,
    );
    assert_error(
        &grant(&client, company_id.clone(), "wrong-token").await,
        400,
        "invalid_grant",
        19,
    );
    let elsewhere = PrincipalId::new(uuid::Uuid::new_v4()).to_string();
    assert_error(
        &grant(&client, elsewhere, auth_token).await,
        400,
        "invalid_grant",
        19,
    );

    admin::set_company_status(app.ctx(), &company.id, CompanyStatus::Maintenance)
        .await
        .unwrap();
    assert_error(
        &grant(&client, company_id.clone(), auth_token).await,
        400,
        "invalid_request",
        134,
    );
    admin::set_company_status(app.ctx(), &company.id, CompanyStatus::Disabled)
        .await
        .unwrap();
    assert_error(
        &grant(&client, company_id.clone(), auth_token).await,
        400,
        "invalid_request",
        123,
    );
    admin::set_company_status(app.ctx(), &company.id, CompanyStatus::Active)
        .await
        .unwrap();

    app.clock.advance(86_400);
    assert_error(
        &grant(&client, company_id, auth_token).await,
        400,
        "invalid_grant",
        19,
    );
}

async fn geolocation_rule_changes_nothing_elsewhere(app: TestApp) {
    let client = app.create_client("read").await;
    app.create_user("mallory", PASSWORD).await;
    let other_region = app.spawn_other_region().await;

    // client_credentials works at any deployment.
    other_region.app_token(&client).await;

    let at_other = other_region
        .token(&client_form(
            &client,
            &[
                ("grant_type", "password"),
                ("username", "mallory"),
                ("password", PASSWORD),
            ],
        ))
        .await;
    assert_error(&at_other, 400, "invalid_request", 16);
    assert_eq!(at_other.1["geolocation"], app.address.as_str());

    let home = app.user_tokens(&client, "mallory", PASSWORD).await;
    let rt = str_of(&home, "refresh_token");
    let refresh_elsewhere = other_region.token(&refresh_form(&client, rt)).await;
    assert_error(&refresh_elsewhere, 400, "invalid_request", 16);
    assert_eq!(refresh_elsewhere.1["geolocation"], app.address.as_str());
    // Nothing changed: the token still works at home.
    let (status, body) = app.token(&refresh_form(&client, rt)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

/// A store that cannot be reached gives 503 with a message, not a hang or a 500.
#[tokio::test]
async fn unreachable_store_answers_503() {
    // A real DynamoDB client pointed at a closed loopback port: the fault is real, not mocked.
    let store =
        token_service::store::dynamodb::DynamoStore::connect("tokens", Some("http://127.0.0.1:9"))
            .await;
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

/// `REFRESH_GRACE_SECONDS`: a replay within the window, its successor unused, is a retry: the
/// same successor again, and the family lives on (contract part 7).
#[tokio::test]
async fn replay_within_the_grace_window_is_a_retry() {
    let policy = Policy {
        refresh_grace_seconds: 30,
        ..Policy::default()
    };
    let app = TestApp::spawn_with(
        Backend::Sqlite,
        AppOptions {
            policy,
            ..AppOptions::default()
        },
    )
    .await
    .unwrap();
    let client = app.create_client("read").await;
    app.create_user("niaj", PASSWORD).await;
    let first = app.user_tokens(&client, "niaj", PASSWORD).await;
    let rt1 = str_of(&first, "refresh_token").to_owned();
    let (_, second) = app.token(&refresh_form(&client, &rt1)).await;
    app.clock.advance(10);
    let (status, retried) = app.token(&refresh_form(&client, &rt1)).await;
    assert_eq!(status, StatusCode::OK, "{retried}");
    assert_eq!(retried["refresh_token"], second["refresh_token"]);
    let (status, _) = app
        .token(&refresh_form(&client, str_of(&second, "refresh_token")))
        .await;
    assert_eq!(status, StatusCode::OK, "the family survived");
}
