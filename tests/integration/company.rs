//! The company auth-token endpoint (docs/decisions.md, Company auth tokens) and the company
//! password grant it feeds (`grant_type=password&credtype=authtoken`), over real HTTP, on SQLite
//! and DynamoDB Local. One module per subject; the world they share (a company, its signed-in
//! administrator, an app with a Connect URL) is here.

mod callers;
mod issuance;
mod refusals;

use crate::support::app::{answer_of, TestApp, TestClient};
use reqwest::StatusCode;
use serde_json::{json, Value};
use token_core::admin::NewClient;
use token_domain::clock::Clock;
use token_domain::secrets::TokenHash;
use token_domain::{AuthToken, Company, CompanyStatus, Scopes, User};

const PASSWORD: &str = "correct horse battery staple";
const CONNECT_URL: &str = "https://crm.example.com/connect?tenant=acme&lang=en%20US";

fn path(company: &str) -> String {
    format!("/profile-service/v1/keys/principals/{company}/authtoken/")
}

/// A company with an administrator who is signed in (through a portal app), and an app with a
/// Connect URL that the company is enabled for.
struct World {
    app: TestApp,
    company: Company,
    admin: User,
    /// The administrator's access token (user password grant at `/v0/token`).
    admin_token: String,
    /// The app the auth tokens are for.
    crm: TestClient,
}

impl World {
    async fn new(app: TestApp) -> Self {
        let company = app.create_company("Acme").await;
        let admin = app
            .create_company_admin("admin@acme.example", PASSWORD, &company)
            .await;
        let portal = app.create_first_party_client("profile").await;
        let admin_token = access_token(
            &app.user_tokens(&portal, "admin@acme.example", PASSWORD)
                .await,
        );
        let crm = app
            .create_client_with(NewClient {
                connect_url: Some(CONNECT_URL.into()),
                ..NewClient::named("crm", Scopes::parse("read write").unwrap())
            })
            .await;
        app.enable_company_for(&company, &crm).await;
        Self {
            app,
            company,
            admin,
            admin_token,
            crm,
        }
    }

    fn company_id(&self) -> String {
        self.company.id.to_string()
    }

    /// `POST .../authtoken/` as the administrator with `client_id` in a form body.
    async fn issue(&self, client: &TestClient) -> (StatusCode, Value) {
        answer_of(
            self.as_admin(&[])
                .form(&[("client_id", client.id.as_str())]),
        )
        .await
    }

    /// A JSON-answer auth token for `client`; panics unless it is issued.
    async fn auth_token(&self, client: &TestClient) -> String {
        let (status, body) = self.issue(client).await;
        assert_eq!(status, StatusCode::OK, "auth token: {body}");
        body["token"].as_str().unwrap().to_owned()
    }

    fn post(
        &self,
        company: &str,
        bearer: Option<&str>,
        query: &[(&str, &str)],
    ) -> reqwest::RequestBuilder {
        self.app.company_auth_token_request(company, bearer, query)
    }

    /// `POST .../authtoken/?{query}` for this company as its administrator, not yet sent.
    fn as_admin(&self, query: &[(&str, &str)]) -> reqwest::RequestBuilder {
        self.post(&self.company_id(), Some(&self.admin_token), query)
    }

    /// `grant_type=password&credtype=authtoken` as `client`.
    async fn company_grant(
        &self,
        client: &TestClient,
        company: &str,
        auth_token: &str,
    ) -> (StatusCode, Value) {
        self.app
            .password_grant(client, company, auth_token, &[("credtype", "authtoken")])
            .await
    }

    async fn set_company_status(&self, status: CompanyStatus) {
        self.app.set_company_status(&self.company, status).await;
    }
}

fn access_token(body: &Value) -> String {
    body["access_token"].as_str().unwrap().to_owned()
}

/// The endpoint's success body, exactly (`PASS`, code 0, the token); returns the token.
#[track_caller]
fn assert_pass(actual: &(StatusCode, Value)) -> String {
    let (status, body) = actual;
    assert_eq!(*status, StatusCode::OK, "body: {body}");
    let token = body["token"].as_str().expect("token").to_owned();
    assert_eq!(
        body,
        &json!({"status": "PASS", "code": 0, "errormsg": "", "token": token})
    );
    // 256 bits, URL-safe base64 without padding.
    assert_eq!(token.len(), 43, "token length");
    assert!(token
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
    token
}

/// The stored auth token, found by the hash of the clear token (the only form the store has).
async fn stored(app: &TestApp, token: &str) -> Option<AuthToken> {
    app.store
        .auth_tokens()
        .get_auth_token(&TokenHash::of(token), app.clock.now())
        .await
        .unwrap()
}
