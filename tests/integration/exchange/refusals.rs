//! Refusals of the exchange, each in its own shape with a string code: the application token,
//! the app's secret and link to the consumer key, the old token, the principal, the scopes, the
//! `returnType` and the body. None of them links the old token.

use crate::on_both_stores;
use crate::support::app::{json_of, RequestBody, TestApp};
use crate::support::assertions::{assert_exchange_error, assert_not_cached};
use reqwest::StatusCode;
use serde_json::json;
use token_core::admin;
use token_domain::clock::Clock;
use token_domain::{ClientId, CompanyStatus, UserStatus};
use uuid::Uuid;

use super::*;

on_both_stores!(
    bearer_token_must_be_a_live_application_token,
    secret_must_be_the_calling_apps,
    app_must_be_enabled_and_linked_to_the_consumer_key,
    unknown_consumer_key_is_404,
    old_token_must_be_known_live_and_of_this_consumer_key,
    disabled_principal_is_refused,
    old_scopes_must_be_within_the_apps,
    bad_return_type_and_body_formats,
);

async fn bearer_token_must_be_a_live_application_token(app: TestApp) {
    let m = Migration::new(&app, "read").await;
    let user = app.create_user("gina", "gina-pw").await;
    let old = old_token();
    import(
        &app,
        &[user_line(&old, &m.consumer_key, &user.id, &["read"])],
    )
    .await;
    let body = || RequestBody::Empty;
    let form = [
        ("token", old.as_str()),
        ("secret", m.client.secret.as_str()),
    ];

    // No header, another scheme, garbage, a token signed elsewhere.
    let other_region = app.spawn_other_region().await;
    let foreign = other_region.app_token(&m.client).await;
    let basic = format!(
        "Basic {}",
        base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            format!("{}:{}", m.client.id, m.client.secret)
        )
    );
    let foreign = format!("Bearer {foreign}");
    for authorization in [
        None,
        Some(basic.as_str()),
        Some("Bearer"),
        Some("Bearer not.a.jwt"),
        Some(foreign.as_str()),
        // The token without its scheme.
        Some(m.app_token.as_str()),
    ] {
        let refused = app
            .exchange(&m.consumer_key, "", authorization, RequestBody::Form(&form))
            .await;
        assert_exchange_error(&refused, 400, "UNAUTHORIZED", "invalid_client");
        assert_eq!(refused.1["error_description"], "Invalid credentials");
    }
    // Without a body either: authentication comes first.
    let refused = app.exchange(&m.consumer_key, "", None, body()).await;
    assert_exchange_error(&refused, 400, "UNAUTHORIZED", "invalid_client");

    // A user's access token is not an application token.
    let user_tokens = app.user_tokens(&m.client, "gina", "gina-pw").await;
    let as_user = app
        .exchange(
            &m.consumer_key,
            "",
            Some(&format!(
                "Bearer {}",
                user_tokens["access_token"].as_str().unwrap()
            )),
            RequestBody::Form(&form),
        )
        .await;
    assert_exchange_error(&as_user, 400, "UNAUTHORIZED", "invalid_client");

    // An application token past its hour, by the clock the service uses.
    app.clock.advance(3600);
    let expired = m.exchange(&app, &old).await;
    assert_exchange_error(&expired, 400, "UNAUTHORIZED", "invalid_client");

    // None of this linked the old token; a fresh application token exchanges it.
    assert!(!is_linked(&app, &old).await);
    let app_token = app.app_token(&m.client).await;
    let fresh = Migration { app_token, ..m };
    assert_ok(&fresh.exchange(&app, &old).await);
}

async fn secret_must_be_the_calling_apps(app: TestApp) {
    let m = Migration::new(&app, "read").await;
    let other = app.create_client("read").await;
    let (_, old) = m.user_with_old_token(&app, "hank").await;
    let bearer = m.bearer();

    for form in [
        vec![("token", old.as_str())],
        vec![("token", old.as_str()), ("secret", "")],
        vec![("token", old.as_str()), ("secret", other.secret.as_str())],
        vec![("token", old.as_str()), ("secret", "not-the-secret")],
        vec![],
    ] {
        let refused = app
            .exchange(&m.consumer_key, "", Some(&bearer), RequestBody::Form(&form))
            .await;
        assert_exchange_error(&refused, 400, "UNAUTHORIZED", "invalid_client");
    }
    // The other app's token with its own secret names the other app: not linked to this key.
    let other_token = app.app_token(&other).await;
    let refused = app
        .exchange(
            &m.consumer_key,
            "",
            Some(&format!("Bearer {other_token}")),
            RequestBody::Form(&[("token", &old), ("secret", &other.secret)]),
        )
        .await;
    assert_exchange_error(&refused, 400, "INVALIDAPP", "invalid_client");

    // `token` missing, with the right secret.
    let refused = app
        .exchange(
            &m.consumer_key,
            "",
            Some(&bearer),
            RequestBody::Json(json!({"secret": m.client.secret})),
        )
        .await;
    assert_exchange_error(&refused, 400, "INVALIDTOKEN", "invalid_grant");
}

async fn app_must_be_enabled_and_linked_to_the_consumer_key(app: TestApp) {
    let m = Migration::new(&app, "read").await;
    let (_, old) = m.user_with_old_token(&app, "iris").await;

    // The consumer key moves to another app: this one may no longer use it.
    let successor = app.create_client("read").await;
    app.link_legacy_app(&m.consumer_key, &successor).await;
    let refused = m.exchange(&app, &old).await;
    assert_exchange_error(&refused, 400, "INVALIDAPP", "invalid_client");
    assert_eq!(refused.1["error_description"], "Application is invalid");
    app.link_legacy_app(&m.consumer_key, &m.client).await;
    assert_ok(&m.exchange(&app, &old).await);

    // A disabled app, with an application token obtained before it was disabled.
    admin::disable_client(app.ctx(), &ClientId::parse(&m.client.id).unwrap())
        .await
        .unwrap();
    let refused = m.exchange(&app, &old).await;
    assert_exchange_error(&refused, 400, "INVALIDAPP", "invalid_client");
}

async fn unknown_consumer_key_is_404(app: TestApp) {
    let m = Migration::new(&app, "read").await;
    let (_, old) = m.user_with_old_token(&app, "jack").await;
    let refused = m.exchange_under(&app, "never-linked", "", &old).await;
    assert_exchange_error(&refused, 404, "INVALIDAPP", "invalid_client");
}

async fn old_token_must_be_known_live_and_of_this_consumer_key(app: TestApp) {
    let m = Migration::new(&app, "read").await;
    let user = user_id(&app, "kate").await;
    // A second old app of the same new app: its tokens are not exchangeable under the first key.
    let second_key = format!("old-app-{}", Uuid::new_v4().simple());
    app.link_legacy_app(&second_key, &m.client).await;
    let (expiring, of_second, live) = (old_token(), old_token(), old_token());
    let mut expiring_line = user_line(&expiring, &m.consumer_key, &user, &["read"]);
    expiring_line["expires_at"] = json!(app.clock.now() + 100);
    import(
        &app,
        &[
            expiring_line,
            user_line(&of_second, &second_key, &user, &["read"]),
            user_line(&live, &m.consumer_key, &user, &["read"]),
        ],
    )
    .await;

    let unknown = m.exchange(&app, "never-imported").await;
    assert_exchange_error(&unknown, 400, "INVALIDTOKEN", "invalid_grant");
    assert_eq!(unknown.1["error_description"], "Bad or expired token");

    let mismatched = m.exchange(&app, &of_second).await;
    assert_exchange_error(&mismatched, 400, "INVALIDTOKEN", "invalid_grant");
    let under_its_own_key = m.exchange_under(&app, &second_key, "", &of_second).await;
    assert_ok(&under_its_own_key);

    // Still valid one second before its expiry, refused from it on.
    app.clock.advance(99);
    let before = m.exchange(&app, &expiring).await;
    assert_ok(&before);
    app.clock.advance(1);
    let expired = m.exchange(&app, &expiring).await;
    assert_exchange_error(&expired, 400, "INVALIDTOKEN", "invalid_grant");
    // The refusal changed nothing: the family of the earlier exchange is still live.
    let still = app
        .refresh(&m.client, before.1["refreshToken"].as_str().unwrap())
        .await;
    assert_eq!(still.0, StatusCode::OK, "{}", still.1);

    assert_ok(&m.exchange(&app, &live).await);
}

async fn disabled_principal_is_refused(app: TestApp) {
    let m = Migration::new(&app, "read").await;
    let disabled = app
        .create_user_with("liam", "pw", |u| u.status = UserStatus::Disabled)
        .await;
    let company = app.create_company("Closed Inc").await;
    let admin_user = app
        .create_company_admin("admin@closed", "pw", &company)
        .await;
    app.set_company_status(&company, CompanyStatus::Disabled)
        .await;
    let (user_token, wsadmin) = (old_token(), old_token());
    import(
        &app,
        &[
            user_line(&user_token, &m.consumer_key, &disabled.id, &["read"]),
            wsadmin_line(
                &wsadmin,
                &m.consumer_key,
                &admin_user.id,
                &company.id,
                &["read"],
            ),
        ],
    )
    .await;
    let refused = m.exchange(&app, &user_token).await;
    assert_exchange_error(&refused, 400, "INVALIDTOKEN", "invalid_grant");
    let refused = m
        .exchange_with(&app, "?returnType=companyToken", &wsadmin)
        .await;
    assert_exchange_error(&refused, 400, "INVALIDTOKEN", "invalid_grant");
    // The administrator is active: the admin's own family is issued.
    assert_eq!(
        assert_ok(&m.exchange(&app, &wsadmin).await)["principalType"],
        "user"
    );
}

async fn old_scopes_must_be_within_the_apps(app: TestApp) {
    let m = Migration::new(&app, "read profile").await;
    let user = user_id(&app, "mia").await;
    let (wide, narrow) = (old_token(), old_token());
    import(
        &app,
        &[
            user_line(&wide, &m.consumer_key, &user, &["read", "payroll"]),
            user_line(&narrow, &m.consumer_key, &user, &["profile"]),
        ],
    )
    .await;
    let refused = m.exchange(&app, &wide).await;
    assert_exchange_error(&refused, 400, "INVALIDSCOPES", "invalid_scope");
    assert_eq!(
        refused.1["error_description"],
        "Requested scopes are not a subset of the allowed scopes"
    );
    assert!(!is_linked(&app, &wide).await);
    assert_eq!(
        assert_ok(&m.exchange(&app, &narrow).await)["scope"],
        "profile"
    );
}

async fn bad_return_type_and_body_formats(app: TestApp) {
    let m = Migration::new(&app, "read").await;
    let (_, old) = m.user_with_old_token(&app, "noah").await;

    let refused = m.exchange_with(&app, "?returnType=userToken", &old).await;
    assert_exchange_error(&refused, 400, "INVALIDTOKEN", "invalid_request");

    let bearer = m.bearer();
    let text = app
        .exchange_request(&m.consumer_key, "")
        .header("authorization", &bearer)
        .header("content-type", "text/plain")
        .body(format!("token={old}&secret={}", m.client.secret))
        .send()
        .await
        .unwrap();
    // Unreadable bodies answer in the exchange's shape, with a string code (docs/decisions.md,
    // Old-token exchange).
    assert_exchange_error(&json_of(text).await, 400, "INVALIDTOKEN", "invalid_request");

    let oversized = app
        .exchange_request(&m.consumer_key, "")
        .header("authorization", &bearer)
        .form(&[
            ("token", "x".repeat(17 * 1024)),
            ("secret", m.client.secret.clone()),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(oversized.status(), StatusCode::PAYLOAD_TOO_LARGE);

    let get = app
        .http
        .get(app.exchange_url(&m.consumer_key, ""))
        .header("authorization", &bearer)
        .send()
        .await
        .unwrap();
    assert_not_cached(get.headers());
    let (status, body) = json_of(get).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{body}");
    assert_eq!(
        body,
        json!({"error": "invalid_request", "error_description": "method not allowed", "code": 405})
    );

    // None of it linked the old token.
    assert!(!is_linked(&app, &old).await);
    assert_ok(&m.exchange(&app, &old).await);
}
