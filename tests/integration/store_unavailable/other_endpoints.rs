//! The other store-backed JSON endpoints: the old-token exchange, the company auth token,
//! `POST /oauth2/v0/otp`, revocation, introspection and `DELETE /app-mgmt/v0/connections`.

use crate::support::app::{json_of, TestApp, TestClient};
use crate::support::logs::assert_no_secret_logged;
use reqwest::{RequestBuilder, StatusCode};
use serde_json::Value;
use token_core::admin::{self, NewClient};
use token_domain::clock::Clock;
use token_domain::{ChannelHandle, ClientId, RefreshRotation, Scopes};

use super::{ok_json, user_with_email, FaultyApp};
use crate::exchange::{import, old_token, user_line, Migration};
use crate::refresh_rotation::{field, user_family};

in_every_outage!(
    legacy_exchange,
    company_auth_token,
    otp_request,
    revocation,
    introspection,
    connections,
);

const ADMIN_PASSWORD: &str = "administrator password 1";

/// A company, its administrator's access token (a first-party portal's), and an app the company
/// is enabled for.
pub struct CompanyWorld {
    pub company_id: String,
    pub admin_token: String,
    pub crm: TestClient,
}

impl CompanyWorld {
    pub async fn new(app: &TestApp) -> Self {
        let company = app.create_company("Unavailable Co").await;
        let login = format!("admin-{}", uuid::Uuid::new_v4().simple());
        app.create_user_with(&login, ADMIN_PASSWORD, |u| {
            u.company_id = Some(company.id);
            u.is_admin = true;
        })
        .await;
        let portal = app.create_first_party_client("profile").await;
        let admin_tokens = app.user_tokens(&portal, &login, ADMIN_PASSWORD).await;
        let crm = app
            .create_client_with(NewClient {
                connect_url: Some("https://crm.example.com/connect".into()),
                ..NewClient::named("crm", Scopes::parse("read").unwrap())
            })
            .await;
        let crm_id = ClientId::parse(&crm.id).unwrap();
        admin::enable_company_for_client(app.ctx(), &company.id, &crm_id)
            .await
            .unwrap();
        Self {
            company_id: company.id.to_string(),
            admin_token: field(&admin_tokens, "access_token").to_owned(),
            crm,
        }
    }

    /// The administrator's request for an auth token for the app, answered in JSON.
    pub fn request(&self, app: &TestApp) -> RequestBuilder {
        app.company_auth_token_request(&self.company_id, Some(&self.admin_token), &[])
            .form(&[("client_id", self.crm.id.as_str())])
    }

    /// An auth token for the app; panics unless one is issued.
    pub async fn auth_token(&self, app: &TestApp) -> String {
        let body = ok_json(
            json_of(self.request(app).send().await.unwrap()).await,
            "company",
        );
        assert_eq!(body["status"], "PASS", "{body}");
        field(&body, "token").to_owned()
    }
}

/// `POST /oauth2/v0/otp` for `address`, as `client`.
pub fn otp_request_to(app: &TestApp, client: &TestClient, address: &str) -> RequestBuilder {
    app.http.post(app.url("/oauth2/v0/otp")).form(&[
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
        ("channel_type", "email"),
        ("channel_handle", address),
    ])
}

/// Sends `request` once the store is back: 200, and its JSON body.
async fn succeeds(request: RequestBuilder, endpoint: &str) -> Value {
    answered_ok(request.send().await.unwrap(), endpoint).await
}

async fn answered_ok(response: reqwest::Response, endpoint: &str) -> Value {
    ok_json(json_of(response).await, endpoint)
}

/// No exchange is recorded for the old token (and so no family) by the failure.
async fn legacy_exchange(app: FaultyApp) {
    let migration = Migration::new(&app, "read").await;
    let user = app.create_user("old-user", "unused password").await;
    let old = old_token();
    let line = user_line(&old, &migration.consumer_key, &user.id, &["read"]);
    import(&app, &[line]).await;
    let request = || {
        app.exchange_request(&migration.consumer_key, "")
            .bearer_auth(&migration.app_token)
            .form(&[
                ("token", old.as_str()),
                ("secret", &migration.client.secret),
            ])
    };
    app.refused("exchange", request()).await;
    assert!(
        app.stored_legacy_link(&old).await.is_none(),
        "no exchange recorded"
    );

    let body = succeeds(request(), "exchange").await;
    assert_eq!(body["code"], "OK", "{body}");
    assert!(
        app.stored_legacy_link(&old).await.is_some(),
        "the retry's exchange is recorded"
    );
    assert_no_secret_logged(&[&old, &migration.client.secret, &migration.app_token]);
}

async fn company_auth_token(app: FaultyApp) {
    let world = CompanyWorld::new(&app).await;
    app.refused("company auth token", world.request(&app)).await;
    let auth_token = world.auth_token(&app).await;
    assert_no_secret_logged(&[&auth_token, &world.admin_token, ADMIN_PASSWORD]);
}

/// No password is left open by the failure: the one mailed with the failed request (the mail goes
/// first: docs/decisions.md, One-time passwords) is never stored, so it cannot be redeemed.
async fn otp_request(app: FaultyApp) {
    let client = app.create_client("read").await;
    let address = "otp.requester@example.com";
    user_with_email(&app, "otp-requester", address).await;
    let key = ChannelHandle::parse(address).unwrap().key();
    let client_id = ClientId::parse(&client.id).unwrap();
    app.refused("otp", otp_request_to(&app, &client, address))
        .await;
    let open = app
        .store
        .otp()
        .find_open_otp(&key, &client_id, app.clock.now())
        .await;
    assert!(open.unwrap().is_none(), "no password stored");

    let body = succeeds(otp_request_to(&app, &client, address), "otp").await;
    assert_eq!(body["message"], "otp sent");
    let open = app
        .store
        .otp()
        .find_open_otp(&key, &client_id, app.clock.now())
        .await;
    assert!(open.unwrap().is_some(), "the retry's password is stored");
    assert_no_secret_logged(&[&client.secret, &app.mailed_passwords().join(" ")]);
}

/// A client's own token, by the client, with the token in the body.
fn client_token_request(
    app: &TestApp,
    path: &str,
    client: &TestClient,
    token: &str,
) -> RequestBuilder {
    app.http.post(app.url(path)).form(&[
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
        ("token", token),
    ])
}

/// Whether the family of `refresh_token` is revoked.
async fn family_revoked(app: &TestApp, refresh_token: &str) -> bool {
    let record = app.stored_refresh_token(refresh_token).await;
    let family = app.stored_family(&record.family_id).await;
    family.revoked_at.is_some()
}

/// The family of `refresh` is not revoked by the failed `request`; its retry revokes it.
async fn revokes_only_once_the_store_is_back(
    app: &FaultyApp,
    endpoint: &str,
    request: impl Fn() -> RequestBuilder,
    refresh: &str,
) {
    app.refused(endpoint, request()).await;
    let revoked = family_revoked(app, refresh).await;
    assert!(!revoked, "{endpoint}: not revoked by the failure");

    let response = request().send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK, "{endpoint}");
    let revoked = family_revoked(app, refresh).await;
    assert!(revoked, "{endpoint}: revoked by the retry");
}

async fn revocation(app: FaultyApp) {
    let (client, tokens) = user_family(&app, RefreshRotation::Rotate, "read").await;
    let refresh = field(&tokens, "refresh_token");
    let request = || client_token_request(&app, "/oauth2/v0/revoke", &client, refresh);
    revokes_only_once_the_store_is_back(&app, "revoke", request, refresh).await;
    assert_no_secret_logged(&[&client.secret, refresh]);
}

/// Introspection only reads: it fails only when reads do.
async fn introspection(app: FaultyApp) {
    let (client, tokens) = user_family(&app, RefreshRotation::Rotate, "read").await;
    let access = field(&tokens, "access_token");
    let request = || client_token_request(&app, "/oauth2/v0/introspect", &client, access);
    if app.reads_fail() {
        app.refused("introspect", request()).await;
    } else {
        let answer = app.during_outage(request().send()).await.unwrap();
        let body = answered_ok(answer, "introspect while writes fail").await;
        assert_eq!(body["active"], true, "{body}");
    }
    let body = succeeds(request(), "introspect").await;
    assert_eq!(body["active"], true, "{body}");
    assert_no_secret_logged(&[&client.secret, access]);
}

async fn connections(app: FaultyApp) {
    let (_client, tokens) = user_family(&app, RefreshRotation::Rotate, "read").await;
    let access = field(&tokens, "access_token");
    let refresh = field(&tokens, "refresh_token");
    let request = || {
        app.http
            .delete(app.url("/app-mgmt/v0/connections"))
            .bearer_auth(access)
    };
    revokes_only_once_the_store_is_back(&app, "connections", request, refresh).await;
    assert_no_secret_logged(&[access, refresh]);
}
