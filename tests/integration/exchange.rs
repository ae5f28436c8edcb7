//! `POST /appmgmt/v0/legacyApps/{OLDConsumerKey}/exchangeRefreshToken/me` over real HTTP, on
//! SQLite and on DynamoDB Local (contract part 3).

use integration_tests::app::{json_of, RequestBody, TestApp, TestClient};
use integration_tests::assertions::{
    assert_exchange_error, assert_not_cached, assert_token_error as assert_error,
};
use integration_tests::on_both_stores;
use reqwest::StatusCode;
use serde_json::{json, Value};
use token_service::admin;
use token_service::clock::Clock;
use token_service::domain::{
    ClientId, CompanyStatus, ConsumerKey, Geolocation, PrincipalId, Scopes, TokenId, UserStatus,
};
use token_service::import::import_legacy_tokens;
use token_service::secrets::TokenHash;
use uuid::Uuid;

on_both_stores!(
    user_token_is_exchanged_and_the_new_refresh_token_works,
    form_and_json_bodies_are_accepted,
    wsadmin_token_yields_the_admin_family_or_the_company_family,
    company_token_needs_a_wsadmin_token,
    family_lives_at_the_principals_home,
    repeated_exchange_revokes_the_previous_family,
    concurrent_exchanges_leave_one_live_family,
    bearer_token_must_be_a_live_application_token,
    secret_must_be_the_calling_apps,
    app_must_be_enabled_and_linked_to_the_consumer_key,
    unknown_consumer_key_is_404,
    old_token_must_be_known_live_and_of_this_consumer_key,
    disabled_principal_is_refused,
    old_scopes_must_be_within_the_apps,
    bad_return_type_and_body_formats,
);

/// The new app, with the old app's consumer key linked to it.
pub(crate) struct Migration {
    pub(crate) client: TestClient,
    pub(crate) consumer_key: String,
    pub(crate) app_token: String,
}

impl Migration {
    pub(crate) async fn new(app: &TestApp, scopes: &str) -> Self {
        let client = app.create_client(scopes).await;
        let consumer_key = format!("old-app-{}", Uuid::new_v4().simple());
        link(app, &consumer_key, &client).await;
        let app_token = app.app_token(&client).await;
        Self {
            client,
            consumer_key,
            app_token,
        }
    }

    /// Exchanges `token` with the right bearer token and secret, as a form.
    pub(crate) async fn exchange(&self, app: &TestApp, token: &str) -> (StatusCode, Value) {
        self.exchange_with(app, "", token).await
    }

    pub(crate) async fn exchange_with(
        &self,
        app: &TestApp,
        query: &str,
        token: &str,
    ) -> (StatusCode, Value) {
        app.exchange(
            &self.consumer_key,
            query,
            Some(&format!("Bearer {}", self.app_token)),
            RequestBody::Form(&[("token", token), ("secret", &self.client.secret)]),
        )
        .await
    }
}

async fn link(app: &TestApp, consumer_key: &str, client: &TestClient) {
    admin::link_legacy_app(
        app.ctx(),
        ConsumerKey::parse(consumer_key).unwrap(),
        &ClientId::parse(&client.id).unwrap(),
    )
    .await
    .unwrap();
}

/// Imports old tokens through the migration import (JSON Lines), as `tokenctl legacy-tokens
/// import` does.
pub(crate) async fn import(app: &TestApp, lines: &[Value]) {
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    let report = import_legacy_tokens(app.ctx(), text.as_bytes(), |_| {})
        .await
        .unwrap();
    assert_eq!(
        report.imported,
        lines.len() as u64,
        "{:?}",
        report.skipped_lines
    );
}

pub(crate) fn old_token() -> String {
    format!("old-{}", Uuid::new_v4())
}

/// One import line for a user's old token.
pub(crate) fn user_line(
    token: &str,
    consumer_key: &str,
    user: &PrincipalId,
    scopes: &[&str],
) -> Value {
    json!({
        "token": token,
        "consumer_key": consumer_key,
        "principal_type": "user",
        "principal_id": user.to_string(),
        "scopes": scopes,
        "wsadmin": false,
    })
}

#[track_caller]
pub(crate) fn assert_ok(actual: &(StatusCode, Value)) -> &Value {
    let (status, body) = actual;
    assert_eq!(*status, StatusCode::OK, "body: {body}");
    assert_eq!(body["code"], "OK", "{body}");
    body
}

/// The refresh grant with an exchanged refresh token, as the new app.
pub(crate) async fn refresh(
    app: &TestApp,
    client: &TestClient,
    refresh_token: &str,
) -> (StatusCode, Value) {
    app.token(&[
        ("grant_type", "refresh_token"),
        ("client_id", &client.id),
        ("client_secret", &client.secret),
        ("refresh_token", refresh_token),
    ])
    .await
}

fn jti_of(app: &TestApp, access_token: &str) -> TokenId {
    let claims = app
        .services
        .codec
        .decode(access_token, app.clock.now())
        .expect("an access token this deployment signed");
    TokenId::parse(&claims.jti).unwrap()
}

async fn user_id(app: &TestApp, login: &str) -> PrincipalId {
    app.create_user(login, "pw-irrelevant").await.id
}

async fn user_token_is_exchanged_and_the_new_refresh_token_works(app: TestApp) {
    let m = Migration::new(&app, "read write profile").await;
    let user = user_id(&app, "alice").await;
    let old = old_token();
    import(
        &app,
        &[user_line(&old, &m.consumer_key, &user, &["read", "write"])],
    )
    .await;

    let response = app
        .exchange_request(&m.consumer_key, "")
        .bearer_auth(&m.app_token)
        .form(&[("token", old.as_str()), ("secret", &m.client.secret)])
        .send()
        .await
        .unwrap();
    let headers = response.headers().clone();
    assert_eq!(headers["cache-control"], "no-store");
    assert_eq!(headers["pragma"], "no-cache");
    assert!(headers["content-type"]
        .to_str()
        .unwrap()
        .starts_with("application/json"));
    let answer = json_of(response).await;
    let body = assert_ok(&answer);
    assert_eq!(body["principalType"], "user");
    assert_eq!(body["id"], user.to_string());
    assert_eq!(body["scope"], "read write");
    assert_eq!(body["expiresIn"], 3600);
    // Unix times, as in Concur's exchange response (contract part 3).
    let now = app.clock.now();
    assert_eq!(body["refreshExpiresIn"], now + 180 * 86_400);
    assert_eq!(body["token"], body["refreshToken"]);
    assert_eq!(body["created"], now * 1000);
    assert_eq!(body["expired"], (now + 180 * 86_400) * 1000);
    assert_eq!(body["scopes"], serde_json::json!(["read", "write"]));
    assert_eq!(body["geolocation"], app.address);
    let keys: Vec<&String> = body.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 13, "exactly the contract's fields: {keys:?}");

    // The access token is one of ours, for the user, issued to the new app.
    let access = body["accessToken"].as_str().unwrap();
    let claims = app.services.codec.decode(access, app.clock.now()).unwrap();
    assert_eq!(claims.sub, user.to_string());
    assert_eq!(claims.client_id, m.client.id);
    assert_eq!(claims.scope, "read write");

    // The old token now points at the family the new refresh token belongs to.
    let refresh_token = body["refreshToken"].as_str().unwrap().to_owned();
    let now = app.clock.now();
    let record = app
        .store
        .get_refresh_token(&TokenHash::of(&refresh_token), now)
        .await
        .unwrap()
        .expect("refresh token stored by its hash");
    let link = app
        .store
        .get_legacy_exchange(&TokenHash::of(&old))
        .await
        .unwrap()
        .expect("old token linked");
    assert_eq!(link.family_id, record.family_id);
    let family = app
        .store
        .get_family(&record.family_id, now)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(family.principal_id, user);
    assert_eq!(family.client_id.to_string(), m.client.id);
    assert_eq!(family.scopes, Scopes::parse("read write").unwrap());

    // The new app refreshes with it at the token endpoint.
    let refreshed = refresh(&app, &m.client, &refresh_token).await;
    assert_eq!(refreshed.0, StatusCode::OK, "{}", refreshed.1);
    assert_eq!(refreshed.1["principal_type"], "user");
    assert_eq!(refreshed.1["id"], user.to_string());
    assert_eq!(refreshed.1["scope"], "read write");
    assert_ne!(refreshed.1["refresh_token"], refresh_token.as_str());
}

async fn form_and_json_bodies_are_accepted(app: TestApp) {
    let m = Migration::new(&app, "read").await;
    let user = user_id(&app, "bob").await;
    let (form_token, json_token) = (old_token(), old_token());
    import(
        &app,
        &[
            user_line(&form_token, &m.consumer_key, &user, &["read"]),
            user_line(&json_token, &m.consumer_key, &user, &["read"]),
        ],
    )
    .await;
    let bearer = format!("Bearer {}", m.app_token);

    let by_form = app
        .exchange(
            &m.consumer_key,
            "",
            Some(&bearer),
            RequestBody::Form(&[("token", &form_token), ("secret", &m.client.secret)]),
        )
        .await;
    assert_eq!(assert_ok(&by_form)["id"], user.to_string());

    let by_json = app
        .exchange(
            &m.consumer_key,
            "",
            Some(&bearer),
            RequestBody::Json(json!({"token": json_token, "secret": m.client.secret})),
        )
        .await;
    assert_eq!(assert_ok(&by_json)["id"], user.to_string());

    // The scheme is case-insensitive (RFC 9110 §11.1).
    let lower = app
        .exchange(
            &m.consumer_key,
            "",
            Some(&format!("bearer {}", m.app_token)),
            RequestBody::Json(json!({"token": json_token, "secret": m.client.secret})),
        )
        .await;
    assert_ok(&lower);
}

async fn wsadmin_token_yields_the_admin_family_or_the_company_family(app: TestApp) {
    let m = Migration::new(&app, "read admin").await;
    let company = app.create_company("Acme").await;
    let admin_user = app
        .create_user_with("admin@acme", "pw", |u| {
            u.company_id = Some(company.id);
            u.is_admin = true;
        })
        .await;
    let wsadmin = old_token();
    let line = json!({
        "token": wsadmin,
        "consumer_key": m.consumer_key,
        "principal_type": "user",
        "principal_id": admin_user.id.to_string(),
        "scopes": ["admin", "read"],
        "wsadmin": true,
        "company_id": company.id.to_string(),
    });
    import(&app, &[line]).await;

    // Without returnType: the administrator's own family.
    let as_user = m.exchange(&app, &wsadmin).await;
    let user_body = assert_ok(&as_user).clone();
    assert_eq!(user_body["principalType"], "user");
    assert_eq!(user_body["id"], admin_user.id.to_string());
    assert_eq!(user_body["scope"], "admin read");
    let refreshed = refresh(&app, &m.client, user_body["refreshToken"].as_str().unwrap()).await;
    assert_eq!(refreshed.0, StatusCode::OK, "{}", refreshed.1);
    assert_eq!(refreshed.1["principal_type"], "user");

    // With returnType=companyToken: refused while the company is not enabled for the app (the
    // first refresh would refuse the family with 53; contract part 11).
    let not_enabled = m
        .exchange_with(&app, "?returnType=companyToken", &wsadmin)
        .await;
    assert_exchange_error(&not_enabled, 400, "INVALIDTOKEN", "invalid_grant");
    admin::enable_company_for_client(
        app.ctx(),
        &company.id,
        &ClientId::parse(&m.client.id).unwrap(),
    )
    .await
    .unwrap();

    // Once enabled: the company's family. Same old token, so this replaces the administrator's
    // family (one live family per old token).
    let as_company = m
        .exchange_with(&app, "?returnType=companyToken", &wsadmin)
        .await;
    let company_body = assert_ok(&as_company).clone();
    assert_eq!(company_body["principalType"], "company");
    assert_eq!(company_body["id"], company.id.to_string());
    assert_eq!(company_body["geolocation"], company.geolocation.as_str());
    let claims = app
        .services
        .codec
        .decode(
            company_body["accessToken"].as_str().unwrap(),
            app.clock.now(),
        )
        .unwrap();
    assert_eq!(claims.sub, company.id.to_string());
    assert_eq!(claims.principal_type.as_str(), "company");
    let replaced = refresh(
        &app,
        &m.client,
        refreshed.1["refresh_token"].as_str().unwrap(),
    )
    .await;
    assert_error(&replaced, 400, "invalid_grant", 108);

    // A company family refreshes like one from the company password grant.
    let company_refresh = company_body["refreshToken"].as_str().unwrap();
    let refreshed = refresh(&app, &m.client, company_refresh).await;
    assert_eq!(refreshed.0, StatusCode::OK, "{}", refreshed.1);
    assert_eq!(refreshed.1["principal_type"], "company");
    assert_eq!(refreshed.1["id"], company.id.to_string());
}

async fn company_token_needs_a_wsadmin_token(app: TestApp) {
    let m = Migration::new(&app, "read").await;
    let user = user_id(&app, "carol").await;
    let plain = old_token();
    import(
        &app,
        &[user_line(&plain, &m.consumer_key, &user, &["read"])],
    )
    .await;
    let refused = m
        .exchange_with(&app, "?returnType=companyToken", &plain)
        .await;
    assert_exchange_error(&refused, 400, "INVALIDTOKEN", "invalid_grant");
    assert_eq!(refused.1["error_description"], "Bad or expired token");
    // Nothing was linked: the token is still exchangeable for the user.
    assert!(app
        .store
        .get_legacy_exchange(&TokenHash::of(&plain))
        .await
        .unwrap()
        .is_none());
    assert_ok(&m.exchange(&app, &plain).await);
}

async fn family_lives_at_the_principals_home(app: TestApp) {
    let m = Migration::new(&app, "read").await;
    let elsewhere = Geolocation::parse("https://eu.api.example.com").unwrap();
    let abroad = app
        .create_user_with("dave", "pw", |u| u.geolocation = elsewhere.clone())
        .await;
    let stranger = PrincipalId::new(Uuid::new_v4());
    let (abroad_token, stranger_token) = (old_token(), old_token());
    import(
        &app,
        &[
            user_line(&abroad_token, &m.consumer_key, &abroad.id, &["read"]),
            user_line(&stranger_token, &m.consumer_key, &stranger, &["read"]),
        ],
    )
    .await;

    let home = m.exchange(&app, &abroad_token).await;
    assert_eq!(assert_ok(&home)["geolocation"], elsewhere.as_str());
    // Refreshing here sends the app to the user's home deployment (code 16).
    let refreshed = refresh(&app, &m.client, home.1["refreshToken"].as_str().unwrap()).await;
    assert_error(&refreshed, 400, "invalid_request", 16);
    assert_eq!(refreshed.1["geolocation"], elsewhere.as_str());

    // A principal this store does not know is refused (contract part 11): its family could
    // never be refreshed.
    let unknown = m.exchange(&app, &stranger_token).await;
    assert_exchange_error(&unknown, 400, "INVALIDTOKEN", "invalid_grant");
}

async fn repeated_exchange_revokes_the_previous_family(app: TestApp) {
    let m = Migration::new(&app, "read").await;
    let user = user_id(&app, "erin").await;
    let old = old_token();
    import(&app, &[user_line(&old, &m.consumer_key, &user, &["read"])]).await;

    let first = m.exchange(&app, &old).await;
    let first = assert_ok(&first).clone();
    let first_jti = jti_of(&app, first["accessToken"].as_str().unwrap());
    let first_record = app
        .store
        .get_access_token(&first_jti, app.clock.now())
        .await
        .unwrap()
        .unwrap();
    assert!(!first_record.revoked);
    let first_family = first_record.family_id.unwrap();

    // A retry after a lost response: succeeds again, with new tokens.
    app.clock.advance(5);
    let second = m.exchange(&app, &old).await;
    let second = assert_ok(&second).clone();
    assert_ne!(first["refreshToken"], second["refreshToken"]);
    assert_ne!(first["accessToken"], second["accessToken"]);

    // The first family is revoked: its refresh token gets 108, its access token reads revoked.
    let stale = refresh(&app, &m.client, first["refreshToken"].as_str().unwrap()).await;
    assert_error(&stale, 400, "invalid_grant", 108);
    let now = app.clock.now();
    let first_record = app
        .store
        .get_access_token(&first_jti, now)
        .await
        .unwrap()
        .expect("still within its hour");
    assert!(first_record.revoked, "first family's access token revoked");
    let family = app
        .store
        .get_family(&first_family, now)
        .await
        .unwrap()
        .unwrap();
    assert!(family.revoked_at.is_some());

    // The old token points at the second family, which works.
    let second_jti = jti_of(&app, second["accessToken"].as_str().unwrap());
    let second_record = app
        .store
        .get_access_token(&second_jti, now)
        .await
        .unwrap()
        .unwrap();
    assert!(!second_record.revoked);
    let link = app
        .store
        .get_legacy_exchange(&TokenHash::of(&old))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(Some(link.family_id), second_record.family_id);
    let fresh = refresh(&app, &m.client, second["refreshToken"].as_str().unwrap()).await;
    assert_eq!(fresh.0, StatusCode::OK, "{}", fresh.1);
}

async fn concurrent_exchanges_leave_one_live_family(app: TestApp) {
    let m = Migration::new(&app, "read").await;
    let user = user_id(&app, "frank").await;
    let old = old_token();
    import(&app, &[user_line(&old, &m.consumer_key, &user, &["read"])]).await;

    // Two racers at a time: the loser's one retry meets a finished winner, so both answer 200
    // (with more racers a loser can lose twice and get a retryable 503, which proves nothing).
    let mut refresh_tokens = Vec::new();
    for _round in 0..3 {
        let answers = futures::future::join(m.exchange(&app, &old), m.exchange(&app, &old)).await;
        for answer in [answers.0, answers.1] {
            refresh_tokens.push(
                assert_ok(&answer)["refreshToken"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            );
        }
    }
    let mut live = 0;
    for token in &refresh_tokens {
        let (status, body) = refresh(&app, &m.client, token).await;
        match status.as_u16() {
            200 => live += 1,
            _ => assert_error(&(status, body), 400, "invalid_grant", 108),
        }
    }
    assert_eq!(live, 1, "exactly one family survives");
}

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
    assert!(app
        .store
        .get_legacy_exchange(&TokenHash::of(&old))
        .await
        .unwrap()
        .is_none());
    let app_token = app.app_token(&m.client).await;
    let fresh = Migration { app_token, ..m };
    assert_ok(&fresh.exchange(&app, &old).await);
}

async fn secret_must_be_the_calling_apps(app: TestApp) {
    let m = Migration::new(&app, "read").await;
    let other = app.create_client("read").await;
    let user = user_id(&app, "hank").await;
    let old = old_token();
    import(&app, &[user_line(&old, &m.consumer_key, &user, &["read"])]).await;
    let bearer = format!("Bearer {}", m.app_token);

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
    let user = user_id(&app, "iris").await;
    let old = old_token();
    import(&app, &[user_line(&old, &m.consumer_key, &user, &["read"])]).await;

    // The consumer key moves to another app: this one may no longer use it.
    let successor = app.create_client("read").await;
    link(&app, &m.consumer_key, &successor).await;
    let refused = m.exchange(&app, &old).await;
    assert_exchange_error(&refused, 400, "INVALIDAPP", "invalid_client");
    assert_eq!(refused.1["error_description"], "Application is invalid");
    link(&app, &m.consumer_key, &m.client).await;
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
    let user = user_id(&app, "jack").await;
    let old = old_token();
    import(&app, &[user_line(&old, &m.consumer_key, &user, &["read"])]).await;
    let refused = app
        .exchange(
            "never-linked",
            "",
            Some(&format!("Bearer {}", m.app_token)),
            RequestBody::Form(&[("token", &old), ("secret", &m.client.secret)]),
        )
        .await;
    assert_exchange_error(&refused, 404, "INVALIDAPP", "invalid_client");
}

async fn old_token_must_be_known_live_and_of_this_consumer_key(app: TestApp) {
    let m = Migration::new(&app, "read").await;
    let user = user_id(&app, "kate").await;
    // A second old app of the same new app: its tokens are not exchangeable under the first key.
    let second_key = format!("old-app-{}", Uuid::new_v4().simple());
    link(&app, &second_key, &m.client).await;
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
    let under_its_own_key = app
        .exchange(
            &second_key,
            "",
            Some(&format!("Bearer {}", m.app_token)),
            RequestBody::Form(&[("token", &of_second), ("secret", &m.client.secret)]),
        )
        .await;
    assert_ok(&under_its_own_key);

    // Still valid one second before its expiry, refused from it on.
    app.clock.advance(99);
    let before = m.exchange(&app, &expiring).await;
    assert_ok(&before);
    app.clock.advance(1);
    let expired = m.exchange(&app, &expiring).await;
    assert_exchange_error(&expired, 400, "INVALIDTOKEN", "invalid_grant");
    // The refusal changed nothing: the family of the earlier exchange is still live.
    let still = refresh(&app, &m.client, before.1["refreshToken"].as_str().unwrap()).await;
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
        .create_user_with("admin@closed", "pw", |u| {
            u.company_id = Some(company.id);
            u.is_admin = true;
        })
        .await;
    admin::set_company_status(app.ctx(), &company.id, CompanyStatus::Disabled)
        .await
        .unwrap();
    let (user_token, wsadmin) = (old_token(), old_token());
    import(
        &app,
        &[
            user_line(&user_token, &m.consumer_key, &disabled.id, &["read"]),
            json!({
                "token": wsadmin,
                "consumer_key": m.consumer_key,
                "principal_type": "user",
                "principal_id": admin_user.id.to_string(),
                "scopes": ["read"],
                "wsadmin": true,
                "company_id": company.id.to_string(),
            }),
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
    assert!(app
        .store
        .get_legacy_exchange(&TokenHash::of(&wide))
        .await
        .unwrap()
        .is_none());
    assert_eq!(
        assert_ok(&m.exchange(&app, &narrow).await)["scope"],
        "profile"
    );
}

async fn bad_return_type_and_body_formats(app: TestApp) {
    let m = Migration::new(&app, "read").await;
    let user = user_id(&app, "noah").await;
    let old = old_token();
    import(&app, &[user_line(&old, &m.consumer_key, &user, &["read"])]).await;

    let refused = m.exchange_with(&app, "?returnType=userToken", &old).await;
    assert_exchange_error(&refused, 400, "INVALIDTOKEN", "invalid_request");

    let bearer = format!("Bearer {}", m.app_token);
    let text = app
        .exchange_request(&m.consumer_key, "")
        .header("authorization", &bearer)
        .header("content-type", "text/plain")
        .body(format!("token={old}&secret={}", m.client.secret))
        .send()
        .await
        .unwrap();
    // Unreadable bodies answer in the exchange's shape, with a string code (issue 12).
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
    assert!(app
        .store
        .get_legacy_exchange(&TokenHash::of(&old))
        .await
        .unwrap()
        .is_none());
    assert_ok(&m.exchange(&app, &old).await);
}

/// The migration at scale: 100,000 old tokens through the import, then a random sample of them
/// exchanged over HTTP. Slow (DynamoDB Local takes minutes), so ignored by default; run with
/// `infra/bench-exchange-import.sh`, or
/// `cargo test -p integration-tests --test integration exchange::import_benchmark -- --ignored --nocapture`.
mod import_benchmark {
    use std::io::{BufReader, Write};
    use std::time::Instant;

    use integration_tests::app::{Backend, TestApp};
    use serde_json::json;
    use token_service::admin;
    use token_service::clock::Clock;
    use token_service::domain::ClientId;
    use token_service::import::import_legacy_tokens;
    use token_service::secrets::TokenHash;
    use uuid::Uuid;

    use super::{assert_ok, Migration};

    const TOKENS: usize = 100_000;
    const SAMPLE: usize = 100;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "benchmark: imports 100,000 tokens"]
    async fn sqlite() {
        run(Backend::Sqlite).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "benchmark: imports 100,000 tokens into DynamoDB Local"]
    async fn dynamodb() {
        run(Backend::DynamoDb).await;
    }

    async fn run(backend: Backend) {
        let Some(app) = TestApp::spawn(backend).await else {
            return;
        };
        let m = Migration::new(&app, "read write profile admin").await;
        let client_id = ClientId::parse(&m.client.id).unwrap();
        let company = app.create_company("Bench Co").await;
        admin::enable_company_for_client(app.ctx(), &company.id, &client_id)
            .await
            .unwrap();

        // A random sample is exchanged below; the first company token and the first WSAdmin
        // token always among them. Their principals exist (the exchange refuses unknown ones),
        // the others' are random.
        let mut picked = std::collections::BTreeSet::from([0, 1]);
        while picked.len() < SAMPLE {
            picked.insert((Uuid::new_v4().as_u128() % TOKENS as u128) as usize);
        }
        let mut principals = std::collections::HashMap::new();
        for &i in &picked {
            let id = if i % 10 == 0 {
                let sampled = app.create_company(&format!("Sampled {i}")).await;
                admin::enable_company_for_client(app.ctx(), &sampled.id, &client_id)
                    .await
                    .unwrap();
                sampled.id
            } else {
                app.create_user(&format!("sampled-{i}"), "pw").await.id
            };
            principals.insert(i, id.to_string());
        }

        // A realistic file: users and companies, one WSAdmin token in 50, some expiring later.
        let file = tempfile::NamedTempFile::new().unwrap();
        let mut tokens = Vec::with_capacity(TOKENS);
        {
            let mut out = std::io::BufWriter::new(file.as_file());
            let later = app.clock.now() + 30 * 86_400;
            for i in 0..TOKENS {
                let token = format!("legacy-{}-{}", i, Uuid::new_v4().simple());
                let mut line = json!({
                    "token": token,
                    "consumer_key": m.consumer_key,
                    "principal_type": if i % 10 == 0 { "company" } else { "user" },
                    "principal_id": principals
                        .get(&i)
                        .cloned()
                        .unwrap_or_else(|| Uuid::new_v4().to_string()),
                    "scopes": if i % 3 == 0 { vec!["read", "write"] } else { vec!["read"] },
                    "wsadmin": i % 50 == 1,
                });
                if i % 50 == 1 {
                    line["company_id"] = json!(company.id.to_string());
                }
                if i % 4 == 0 {
                    line["expires_at"] = json!(later);
                }
                writeln!(out, "{line}").unwrap();
                tokens.push(token);
            }
            out.flush().unwrap();
        }
        let bytes = file.as_file().metadata().unwrap().len();

        let started = Instant::now();
        let reader = BufReader::new(std::fs::File::open(file.path()).unwrap());
        let report = import_legacy_tokens(app.ctx(), reader, |_| {})
            .await
            .unwrap();
        let import_time = started.elapsed();
        assert_eq!(report.imported, TOKENS as u64, "{:?}", report.skipped_lines);
        assert_eq!(report.skipped, 0);

        // The sample, each exchanged over HTTP and then linked in the store.
        let started = Instant::now();
        let mut exchanges: u32 = 0;
        for &i in &picked {
            exchanges += 1;
            let answer = m.exchange(&app, &tokens[i]).await;
            let body = assert_ok(&answer);
            let expected = if i % 10 == 0 { "company" } else { "user" };
            assert_eq!(body["principalType"], expected, "token {i}");
            if i % 50 == 1 {
                exchanges += 1;
                let as_company = m
                    .exchange_with(&app, "?returnType=companyToken", &tokens[i])
                    .await;
                assert_eq!(
                    assert_ok(&as_company)["id"],
                    company.id.to_string(),
                    "token {i}"
                );
            }
        }
        let exchange_time = started.elapsed();
        for &i in &picked {
            assert!(app
                .store
                .get_legacy_exchange(&TokenHash::of(&tokens[i]))
                .await
                .unwrap()
                .is_some());
        }
        // And tokens outside the sample are there, unexchanged.
        let mut checked = 0;
        for i in (0..TOKENS).step_by(997).filter(|i| !picked.contains(i)) {
            let stored = app
                .store
                .get_legacy_token(&TokenHash::of(&tokens[i]), app.clock.now())
                .await
                .unwrap();
            assert!(stored.is_some(), "token {i} imported");
            checked += 1;
        }

        println!(
            "BENCH {backend:?}: imported {} tokens ({:.1} MB) in {:.2} s = {:.0} tokens/s; \
             {SAMPLE} sampled tokens: {exchanges} exchanges over HTTP in {:.2} s ({:.1} ms each); \
             {checked} further tokens read back",
            report.imported,
            bytes as f64 / 1e6,
            import_time.as_secs_f64(),
            report.imported as f64 / import_time.as_secs_f64(),
            exchange_time.as_secs_f64(),
            exchange_time.as_secs_f64() * 1000.0 / f64::from(exchanges),
        );
    }
}
