//! The company auth-token endpoint (contract part 4) and the company password grant it feeds
//! (`grant_type=password&credtype=authtoken`), over real HTTP, on SQLite and DynamoDB Local.

use integration_tests::app::{json_of, TestApp, TestClient};
use integration_tests::assertions::{
    assert_company_error as assert_fail, assert_not_cached, assert_token_error as assert_error,
};
use reqwest::StatusCode;
use serde_json::{json, Value};
use token_service::admin::{self, NewClient};
use token_service::clock::Clock;
use token_service::domain::{
    AuthToken, ClientId, Company, CompanyStatus, PrincipalId, Scopes, User, UserStatus,
    AUTH_TOKEN_TTL_SECONDS,
};
use token_service::secrets::TokenHash;
use url::Url;

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
            .create_user_with("admin@acme.example", PASSWORD, |u| {
                u.company_id = Some(company.id);
                u.is_admin = true;
            })
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
        enable(&app, &company, &crm).await;
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
        json_of(
            self.post(&self.company_id(), Some(&self.admin_token), &[])
                .form(&[("client_id", client.id.as_str())])
                .send()
                .await
                .unwrap(),
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

    /// `grant_type=password&credtype=authtoken` as `client`.
    async fn company_grant(
        &self,
        client: &TestClient,
        company: &str,
        auth_token: &str,
    ) -> (StatusCode, Value) {
        self.app
            .token(&[
                ("grant_type", "password"),
                ("credtype", "authtoken"),
                ("client_id", &client.id),
                ("client_secret", &client.secret),
                ("username", company),
                ("password", auth_token),
            ])
            .await
    }

    async fn set_company_status(&self, status: CompanyStatus) {
        admin::set_company_status(self.app.ctx(), &self.company.id, status)
            .await
            .unwrap();
    }
}

async fn enable(app: &TestApp, company: &Company, client: &TestClient) {
    admin::enable_company_for_client(
        app.ctx(),
        &company.id,
        &ClientId::parse(&client.id).unwrap(),
    )
    .await
    .unwrap();
}

fn access_token(body: &Value) -> String {
    body["access_token"].as_str().unwrap().to_owned()
}

/// Contract part 4's success body, exactly; returns the token.
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
        .get_auth_token(&TokenHash::of(token), app.clock.now())
        .await
        .unwrap()
}

/// The issue's "Done when": administrator → auth token → Connect redirect → the app's company
/// password grant → refresh → reuse within 24 h → refused after 24 h.
async fn administrator_to_company_tokens_end_to_end(app: TestApp) {
    let w = World::new(app).await;
    let issued_at = w.app.clock.now();

    let response = w
        .post(
            &w.company_id(),
            Some(&w.admin_token),
            &[("redirect", "true")],
        )
        .form(&[("client_id", w.crm.id.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::MOVED_PERMANENTLY);
    assert_eq!(response.headers()["cache-control"], "no-store");
    let location = Url::parse(response.headers()["location"].to_str().unwrap()).unwrap();
    assert_eq!(
        (location.scheme(), location.host_str(), location.path()),
        ("https", Some("crm.example.com"), "/connect")
    );
    let query: Vec<(String, String)> = location.query_pairs().into_owned().collect();
    let names: Vec<&str> = query.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(names, ["tenant", "lang", "id", "requestToken", "userID"]);
    let param = |name: &str| query.iter().find(|(k, _)| k == name).unwrap().1.clone();
    assert_eq!(
        param("tenant"),
        "acme",
        "the Connect URL's own parameters survive"
    );
    assert_eq!(param("lang"), "en US");
    assert_eq!(param("id"), w.company_id());
    assert_eq!(param("userID"), w.admin.id.to_string());
    let request_token = param("requestToken");
    assert_eq!(request_token.len(), 43);

    // Stored only as its hash, bound to the company, the app and the administrator, for 24 h.
    let record = stored(&w.app, &request_token)
        .await
        .expect("auth token stored");
    assert!(
        !w.app.data.contains(&request_token).await,
        "the auth token is stored in clear"
    );
    assert!(
        w.app.data.contains(&w.company.name).await,
        "the check sees stored text"
    );
    assert_eq!(record.company_id, w.company.id);
    assert_eq!(record.client_id, ClientId::parse(&w.crm.id).unwrap());
    assert_eq!(record.issued_by, w.admin.id);
    assert_eq!(record.issued_at, issued_at);
    assert_eq!(record.expires_at, issued_at + AUTH_TOKEN_TTL_SECONDS);

    // The app exchanges it for the company's tokens.
    let (status, company_tokens) = w
        .company_grant(&w.crm, &w.company_id(), &request_token)
        .await;
    assert_eq!(status, StatusCode::OK, "company grant: {company_tokens}");
    assert_eq!(company_tokens["principal_type"], "company");
    assert_eq!(company_tokens["id"], w.company_id());
    assert_eq!(company_tokens["token_type"], "Bearer");
    assert_eq!(company_tokens["expires_in"], 3600);
    let refresh_token = company_tokens["refresh_token"].as_str().unwrap();

    // The company's family refreshes like any other.
    let (status, refreshed) = w
        .app
        .token(&[
            ("grant_type", "refresh_token"),
            ("client_id", &w.crm.id),
            ("client_secret", &w.crm.secret),
            ("refresh_token", refresh_token),
        ])
        .await;
    assert_eq!(status, StatusCode::OK, "refresh: {refreshed}");
    assert_eq!(refreshed["principal_type"], "company");
    assert_eq!(refreshed["id"], w.company_id());
    assert_ne!(refreshed["refresh_token"], company_tokens["refresh_token"]);

    // Reusable within the window (a retry after a network failure), up to its last second.
    let (status, again) = w
        .company_grant(&w.crm, &w.company_id(), &request_token)
        .await;
    assert_eq!(status, StatusCode::OK, "second use: {again}");
    assert_eq!(again["id"], w.company_id());
    assert_ne!(again["refresh_token"], company_tokens["refresh_token"]);
    w.app.clock.advance(AUTH_TOKEN_TTL_SECONDS - 1);
    let (status, body) = w
        .company_grant(&w.crm, &w.company_id(), &request_token)
        .await;
    assert_eq!(status, StatusCode::OK, "last second: {body}");

    // After 24 hours it is refused, and the store no longer returns it.
    w.app.clock.advance(1);
    let expired = w
        .company_grant(&w.crm, &w.company_id(), &request_token)
        .await;
    assert_error(&expired, 400, "invalid_grant", 19);
    assert!(stored(&w.app, &request_token).await.is_none());
}

/// The JSON answer; both path spellings; `client_id` in the query, a form body or a JSON body,
/// with an empty body of any content type.
async fn json_answer_path_spellings_and_client_id_sources(app: TestApp) {
    let w = World::new(app).await;

    let response = w
        .post(&w.company_id(), Some(&w.admin_token), &[])
        .form(&[("client_id", w.crm.id.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["cache-control"], "no-store");
    assert_eq!(response.headers()["content-type"], "application/json");
    let first = assert_pass(&json_of(response).await);

    let no_slash = w.app.url(path(&w.company_id()).trim_end_matches('/'));
    let response = w
        .app
        .http
        .post(no_slash)
        .bearer_auth(&w.admin_token)
        .query(&[("client_id", w.crm.id.as_str())])
        .send()
        .await
        .unwrap();
    let second = assert_pass(&json_of(response).await);

    let response = w
        .post(&w.company_id(), Some(&w.admin_token), &[])
        .json(&json!({"client_id": w.crm.id}))
        .send()
        .await
        .unwrap();
    let third = assert_pass(&json_of(response).await);

    // An empty body, even one declared as JSON, carries nothing.
    let response = w
        .post(
            &w.company_id(),
            Some(&w.admin_token),
            &[("client_id", &w.crm.id)],
        )
        .header("content-type", "application/json")
        .send()
        .await
        .unwrap();
    let fourth = assert_pass(&json_of(response).await);

    // Same value in both places is fine; different values are not.
    let response = w
        .post(
            &w.company_id(),
            Some(&w.admin_token),
            &[("client_id", &w.crm.id)],
        )
        .form(&[("client_id", w.crm.id.as_str())])
        .send()
        .await
        .unwrap();
    let fifth = assert_pass(&json_of(response).await);
    let other = uuid::Uuid::new_v4().to_string();
    let response = w
        .post(
            &w.company_id(),
            Some(&w.admin_token),
            &[("client_id", &w.crm.id)],
        )
        .form(&[("client_id", other.as_str())])
        .send()
        .await
        .unwrap();
    assert_fail(&json_of(response).await, 400, "invalid_request", 400);

    // Every answer is a new token, each stored and each usable.
    let tokens = [first, second, third, fourth, fifth];
    for (i, token) in tokens.iter().enumerate() {
        assert!(!tokens[..i].contains(token), "tokens are distinct");
        assert!(stored(&w.app, token).await.is_some());
        let (status, body) = w.company_grant(&w.crm, &w.company_id(), token).await;
        assert_eq!(status, StatusCode::OK, "token {i}: {body}");
    }
}

/// No, bad, expired or non-user bearer tokens: 401 with a Bearer challenge.
async fn unauthenticated_callers_get_401(app: TestApp) {
    let w = World::new(app).await;
    let company = w.company_id();
    let form = [("client_id", w.crm.id.as_str())];

    let response = w
        .post(&company, None, &[])
        .form(&form)
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.headers()["www-authenticate"],
        "Bearer realm=\"company-authtoken\""
    );
    assert_not_cached(response.headers());
    assert_fail(&json_of(response).await, 401, "invalid_token", 401);

    let response = w
        .post(&company, Some("not-a-jwt"), &[])
        .form(&form)
        .send()
        .await
        .unwrap();
    assert!(response.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .contains("error=\"invalid_token\""));
    assert_fail(&json_of(response).await, 401, "invalid_token", 401);

    // The admin's token with one character of its signature changed.
    let mut tampered = w.admin_token.clone().into_bytes();
    let i = tampered.len() - 10;
    tampered[i] = if tampered[i] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    let response = w
        .post(&company, Some(&tampered), &[])
        .form(&form)
        .send()
        .await
        .unwrap();
    assert_fail(&json_of(response).await, 401, "invalid_token", 401);

    // Basic credentials are not a bearer token.
    let response = w
        .app
        .http
        .post(w.app.url(&path(&company)))
        .basic_auth(&w.crm.id, Some(&w.crm.secret))
        .form(&form)
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.headers()["www-authenticate"],
        "Bearer realm=\"company-authtoken\""
    );
    assert_fail(&json_of(response).await, 401, "invalid_token", 401);

    // An application token (client_credentials) is not a user's.
    let app_token = w.app.app_token(&w.crm).await;
    let response = w
        .post(&company, Some(&app_token), &[])
        .form(&form)
        .send()
        .await
        .unwrap();
    assert_fail(&json_of(response).await, 401, "invalid_token", 401);

    // Nor is a company's own access token.
    let auth_token = w.auth_token(&w.crm).await;
    let (status, company_tokens) = w.company_grant(&w.crm, &company, &auth_token).await;
    assert_eq!(status, StatusCode::OK, "{company_tokens}");
    let response = w
        .post(&company, Some(&access_token(&company_tokens)), &[])
        .form(&form)
        .send()
        .await
        .unwrap();
    assert_fail(&json_of(response).await, 401, "invalid_token", 401);

    // The administrator's own token, once its hour is over.
    w.app.clock.advance(3600);
    let response = w
        .post(&company, Some(&w.admin_token), &[])
        .form(&form)
        .send()
        .await
        .unwrap();
    assert_fail(&json_of(response).await, 401, "invalid_token", 401);
}

/// A valid user who does not administer the company: 403.
async fn non_administrators_get_403(app: TestApp) {
    let w = World::new(app).await;
    let portal = w.app.create_first_party_client("profile").await;
    let form = [("client_id", w.crm.id.as_str())];

    // A member of the company who is not an administrator.
    w.app
        .create_user_with("member@acme.example", PASSWORD, |u| {
            u.company_id = Some(w.company.id)
        })
        .await;
    // The administrator of another company.
    let other = w.app.create_company("Globex").await;
    w.app
        .create_user_with("admin@globex.example", PASSWORD, |u| {
            u.company_id = Some(other.id);
            u.is_admin = true;
        })
        .await;
    // A user of no company.
    w.app.create_user("loner@example.com", PASSWORD).await;

    for login in [
        "member@acme.example",
        "admin@globex.example",
        "loner@example.com",
    ] {
        let token = access_token(&w.app.user_tokens(&portal, login, PASSWORD).await);
        let response = w
            .post(&w.company_id(), Some(&token), &[])
            .form(&form)
            .send()
            .await
            .unwrap();
        let answer = json_of(response).await;
        assert_fail(&answer, 403, "access_denied", 403);
    }

    // The other company's administrator may use the endpoint for their own company.
    enable(&w.app, &other, &w.crm).await;
    let token = access_token(
        &w.app
            .user_tokens(&portal, "admin@globex.example", PASSWORD)
            .await,
    );
    let response = w
        .post(&other.id.to_string(), Some(&token), &[])
        .form(&form)
        .send()
        .await
        .unwrap();
    assert_pass(&json_of(response).await);
}

/// Unknown company (or not a UUID): 404; a disabled administrator: 123.
async fn unknown_company_404_and_disabled_administrator(app: TestApp) {
    let w = World::new(app).await;
    let form = [("client_id", w.crm.id.as_str())];
    for company in [uuid::Uuid::new_v4().to_string(), "not-a-uuid".to_owned()] {
        let response = w
            .post(&company, Some(&w.admin_token), &[])
            .form(&form)
            .send()
            .await
            .unwrap();
        assert_fail(&json_of(response).await, 404, "not_found", 404);
    }

    // An administrator disabled after signing in can no longer act for the company.
    let mut admin = w.admin.clone();
    admin.status = UserStatus::Disabled;
    w.app.store.put_user(&admin).await.unwrap();
    assert_fail(&w.issue(&w.crm).await, 400, "invalid_request", 123);
}

/// A disabled company (123) and one under maintenance (134), when the auth token is issued and
/// when it is exchanged.
async fn disabled_and_maintenance_companies(app: TestApp) {
    let w = World::new(app).await;
    let auth_token = w.auth_token(&w.crm).await;

    w.set_company_status(CompanyStatus::Disabled).await;
    assert_fail(&w.issue(&w.crm).await, 400, "invalid_request", 123);
    let grant = w.company_grant(&w.crm, &w.company_id(), &auth_token).await;
    assert_error(&grant, 400, "invalid_request", 123);

    w.set_company_status(CompanyStatus::Maintenance).await;
    let answer = w.issue(&w.crm).await;
    assert_fail(&answer, 400, "invalid_request", 134);
    assert_eq!(
        answer.1["errormsg"],
        "Company undergoing scheduled maintenance."
    );
    let grant = w.company_grant(&w.crm, &w.company_id(), &auth_token).await;
    assert_error(&grant, 400, "invalid_request", 134);

    // Back in service, the token issued before still works within its window.
    w.set_company_status(CompanyStatus::Active).await;
    let (status, body) = w.company_grant(&w.crm, &w.company_id(), &auth_token).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["id"], w.company_id());
}

/// `client_id` missing (62), malformed or unknown (61), disabled (59), not enabled for the
/// company (53); `redirect=true` for an app without a Connect URL.
async fn client_id_problems(app: TestApp) {
    let w = World::new(app).await;
    let company = w.company_id();

    let response = w
        .post(&company, Some(&w.admin_token), &[])
        .send()
        .await
        .unwrap();
    assert_fail(&json_of(response).await, 400, "invalid_request", 62);

    for unknown in [uuid::Uuid::new_v4().to_string(), "crm".to_owned()] {
        let response = w
            .post(&company, Some(&w.admin_token), &[("client_id", &unknown)])
            .send()
            .await
            .unwrap();
        let answer = json_of(response).await;
        assert_fail(&answer, 400, "invalid_client", 61);
    }

    // An app the company was never enabled for.
    let stranger = w
        .app
        .create_client_with(NewClient {
            connect_url: Some("https://stranger.example.com/c".into()),
            ..NewClient::named("stranger", Scopes::parse("read").unwrap())
        })
        .await;
    let answer = w.issue(&stranger).await;
    assert_fail(&answer, 400, "invalid_client", 53);
    assert_eq!(
        answer.1["errormsg"],
        "company is not enabled for this client"
    );

    // An app without a Connect URL: fine for JSON, refused for the redirect.
    let headless = w.app.create_client("read").await;
    enable(&w.app, &w.company, &headless).await;
    let response = w
        .post(
            &company,
            Some(&w.admin_token),
            &[("redirect", "true"), ("client_id", &headless.id)],
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert!(response.headers().get("location").is_none());
    assert_fail(&json_of(response).await, 400, "invalid_request", 400);
    assert_pass(&w.issue(&headless).await);

    // Bodies the endpoint cannot read, and a redirect flag that is neither true nor false.
    let response = w
        .post(&company, Some(&w.admin_token), &[])
        .header("content-type", "text/plain")
        .body(format!("client_id={}", w.crm.id))
        .send()
        .await
        .unwrap();
    assert_fail(&json_of(response).await, 400, "invalid_request", 135);
    let response = w
        .post(&company, Some(&w.admin_token), &[])
        .form(&[
            ("client_id", w.crm.id.as_str()),
            ("pad", &"x".repeat(17 * 1024)),
        ])
        .send()
        .await
        .unwrap();
    assert_fail(&json_of(response).await, 413, "invalid_request", 413);
    let response = w
        .post(
            &company,
            Some(&w.admin_token),
            &[("redirect", "maybe"), ("client_id", &w.crm.id)],
        )
        .send()
        .await
        .unwrap();
    assert_fail(&json_of(response).await, 400, "invalid_request", 400);

    // A disabled app.
    admin::disable_client(w.app.ctx(), &ClientId::parse(&headless.id).unwrap())
        .await
        .unwrap();
    assert_fail(&w.issue(&headless).await, 400, "access_denied", 59);
}

/// At the password grant: an auth token presented by another app (105), for another company or
/// unknown (19).
async fn auth_token_bound_to_its_app_and_company(app: TestApp) {
    let w = World::new(app).await;
    let other_app = w.app.create_client("read").await;
    enable(&w.app, &w.company, &other_app).await;
    let auth_token = w.auth_token(&w.crm).await;

    let answer = w
        .company_grant(&other_app, &w.company_id(), &auth_token)
        .await;
    assert_error(&answer, 400, "invalid_grant", 105);

    let other_company = w.app.create_company("Globex").await;
    enable(&w.app, &other_company, &w.crm).await;
    let answer = w
        .company_grant(&w.crm, &other_company.id.to_string(), &auth_token)
        .await;
    assert_error(&answer, 400, "invalid_grant", 19);

    let answer = w
        .company_grant(
            &w.crm,
            &w.company_id(),
            "0123456789abcdefghijklmnopqrstuvwxyzABCDEFG",
        )
        .await;
    assert_error(&answer, 400, "invalid_grant", 19);

    // None of this used the token up: its own app still gets the company's tokens.
    let (status, body) = w.company_grant(&w.crm, &w.company_id(), &auth_token).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["principal_type"], "company");
    assert_eq!(
        body["id"],
        PrincipalId::parse(&w.company_id()).unwrap().to_string()
    );
}

integration_tests::on_both_stores!(
    administrator_to_company_tokens_end_to_end,
    json_answer_path_spellings_and_client_id_sources,
    unauthenticated_callers_get_401,
    non_administrators_get_403,
    unknown_company_404_and_disabled_administrator,
    disabled_and_maintenance_companies,
    client_id_problems,
    auth_token_bound_to_its_app_and_company,
);
