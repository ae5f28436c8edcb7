//! `family.started` of the grants other than the user password grant (tested in `families`):
//! the one-time password, the company auth token (`credtype=authtoken`) and the authorization
//! code, each through HTTP with a user agent and a correlation id, read back as `tokenctl audit`
//! reads them and from the `audit` log target, with no credential in either.

use std::sync::Arc;

use crate::support::app::{json_of, AppOptions, TestApp, TestClient};
use reqwest::StatusCode;
use serde_json::Value;
use token_core::admin::NewClient;
use token_domain::audit::rfc3339;
use token_domain::clock::Clock;
use token_domain::Scopes;
use uuid::Uuid;

use super::{
    assert_no_secret_recorded, assert_recorded, client_subject, events_of, family_of,
    family_subject, json, principal_subject, traced, Expected,
};
use crate::authorize::flow::{approved_code, code_client, LOGIN, PASSWORD, REDIRECT_URI, VERIFIER};
use crate::round_trips::RecordingMailer;

crate::on_both_stores!(
    an_otp_grant_records_the_family_it_starts,
    a_company_auth_token_grant_records_the_family_it_starts,
    an_authorization_code_grant_records_the_family_it_starts,
);

fn text<'a>(body: &'a Value, name: &str) -> &'a str {
    body[name]
        .as_str()
        .unwrap_or_else(|| panic!("{name} in {body}"))
}

/// Who a grant's family belongs to, and which grant started it.
struct Started<'a> {
    grant: &'static str,
    client_id: &'a str,
    principal_type: &'static str,
    principal_id: String,
}

/// `POST /v0/token` with `form`, traced with `correlation_id`, must answer 200 and record the
/// `family.started` of `started` with its grant; the tokens, the family and the event's JSON.
async fn grant_starting_a_family(
    app: &TestApp,
    form: &[(&str, &str)],
    correlation_id: &str,
    started: Started<'_>,
) -> (Value, String, Value) {
    let request = traced(app.http.post(app.url("/v0/token")), correlation_id).form(form);
    let (status, tokens) = json_of(request.send().await.unwrap()).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    let family_id = family_of(app, &tokens).await;
    let event = assert_recorded(
        app,
        &Expected {
            event: "family.started",
            client_id: started.client_id,
            principal_type: started.principal_type,
            principal_id: started.principal_id,
            family_id: &family_id,
            correlation_id,
        },
    )
    .await;
    assert_eq!(event["grant"], started.grant);
    (tokens, family_id, event)
}

async fn an_otp_grant_records_the_family_it_starts(base: TestApp) {
    let mailer = Arc::new(RecordingMailer::default());
    let options = AppOptions {
        mailer: Some(mailer.clone()),
        ..AppOptions::default()
    };
    let app = TestApp::with_store(base.store.clone(), base.backend, options).await;
    let client = app.create_client("read").await;
    let address = format!("otp-{}@example.com", Uuid::new_v4().simple());
    let user = app
        .create_user_with(&address, "an unused password", |new| {
            new.email = Some(address.clone());
        })
        .await;
    let channel = [("channel_type", "email"), ("channel_handle", &address)];
    let credentials = [
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
    ];
    let request: Vec<(&str, &str)> = credentials.iter().chain(&channel).copied().collect();
    let (status, body) = json_of(app.post_form("/oauth2/v0/otp", &request).await).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let otp = mailer.last();

    let correlation_id = format!("audit-otp-{}", Uuid::new_v4());
    let mut grant = vec![("grant_type", "otp"), ("otp", otp.as_str())];
    grant.extend(credentials.iter().chain(&channel).copied());
    let (tokens, _, started) = grant_starting_a_family(
        &app,
        &grant,
        &correlation_id,
        Started {
            grant: "otp",
            client_id: &client.id,
            principal_type: "user",
            principal_id: user.id.to_string(),
        },
    )
    .await;
    assert_eq!(started["time"], rfc3339::format(app.clock.now()));
    assert_no_secret_recorded(
        &app,
        &[client_subject(&client.id), principal_subject(user.id)],
        &[
            &otp,
            &client.secret,
            text(&tokens, "access_token"),
            text(&tokens, "refresh_token"),
        ],
    )
    .await;
}

async fn a_company_auth_token_grant_records_the_family_it_starts(app: TestApp) {
    let company = app.create_company("Audited").await;
    let admin_login = format!("admin-{}@audited.example", Uuid::new_v4().simple());
    let admin = app
        .create_company_admin(&admin_login, PASSWORD, &company)
        .await;
    let portal = app.create_first_party_client("profile").await;
    let admin_tokens = app.user_tokens(&portal, &admin_login, PASSWORD).await;
    let admin_token = text(&admin_tokens, "access_token");
    let crm = app
        .create_client_with(NewClient {
            connect_url: Some("https://crm.example.com/connect".into()),
            ..NewClient::named("crm", Scopes::parse("read").unwrap())
        })
        .await;
    app.enable_company_for(&company, &crm).await;
    let company_id = company.id.to_string();
    let issued = app
        .company_auth_token_request(&company_id, Some(admin_token), &[])
        .form(&[("client_id", crm.id.as_str())]);
    let (status, body) = json_of(issued.send().await.unwrap()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let auth_token = text(&body, "token").to_owned();
    // The 24-hour credential itself is on record: for the company, naming the administrator.
    let issued: Vec<Value> = events_of(&app, principal_subject(company.id))
        .await
        .iter()
        .map(json)
        .filter(|event| event["event"] == "company.auth_token_issued")
        .collect();
    assert_eq!(issued.len(), 1, "{issued:?}");
    assert_eq!(issued[0]["issued_by"], admin.id.to_string());
    assert_eq!(issued[0]["client_id"], crm.id.as_str());
    assert_eq!(issued[0]["principal_type"], "company");

    let correlation_id = format!("audit-company-{}", Uuid::new_v4());
    let grant = [
        ("grant_type", "password"),
        ("credtype", "authtoken"),
        ("client_id", crm.id.as_str()),
        ("client_secret", crm.secret.as_str()),
        ("username", company_id.as_str()),
        ("password", auth_token.as_str()),
    ];
    let (tokens, _, started) = grant_starting_a_family(
        &app,
        &grant,
        &correlation_id,
        Started {
            grant: "company_auth_token",
            client_id: &crm.id,
            principal_type: "company",
            principal_id: company_id.clone(),
        },
    )
    .await;
    assert_eq!(
        started["issued_by"],
        admin.id.to_string(),
        "the company's family names the administrator whose auth token started it"
    );
    assert_no_secret_recorded(
        &app,
        &[client_subject(&crm.id), principal_subject(company.id)],
        &[
            &auth_token,
            PASSWORD,
            admin_token,
            &crm.secret,
            &portal.secret,
            text(&tokens, "access_token"),
            text(&tokens, "refresh_token"),
        ],
    )
    .await;
}

async fn an_authorization_code_grant_records_the_family_it_starts(app: TestApp) {
    let user = app.create_user(LOGIN, PASSWORD).await;
    let client: TestClient = code_client(&app).await;
    let code = approved_code(&app, &client).await;
    let correlation_id = format!("audit-code-{}", Uuid::new_v4());
    let grant = [
        ("grant_type", "authorization_code"),
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
        ("code", code.as_str()),
        ("redirect_uri", REDIRECT_URI),
        ("code_verifier", VERIFIER),
    ];
    let (tokens, family_id, _) = grant_starting_a_family(
        &app,
        &grant,
        &correlation_id,
        Started {
            grant: "authorization_code",
            client_id: &client.id,
            principal_type: "user",
            principal_id: user.id.to_string(),
        },
    )
    .await;
    assert_no_secret_recorded(
        &app,
        &[family_subject(&family_id), client_subject(&client.id)],
        &[
            &code,
            VERIFIER,
            PASSWORD,
            &client.secret,
            text(&tokens, "access_token"),
            text(&tokens, "refresh_token"),
            text(&tokens, "id_token"),
        ],
    )
    .await;
}
