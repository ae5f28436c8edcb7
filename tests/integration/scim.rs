//! SCIM 2.0 provisioning at `/scim/v2` (docs/decisions.md, "SCIM provisioning"), over real
//! HTTP on both stores: the scim2-tester compliance checker and a scim2-client provisioner
//! (tests/scim/, installed into .cache/scim-python by infra/scim-clients.sh), and the service's
//! own checks of tenancy, deprovisioning's effects, entity tags and limits.

use std::process::Command;

use reqwest::StatusCode;
use serde_json::{json, Value};
use token_core::admin;
use token_domain::Company;

use crate::support::app::{json_of, TestApp};

mod faults;
pub(crate) mod leaver;

crate::on_both_stores!(
    a_provisioning_client_runs_a_lifecycle,
    deprovisioning_ends_access_at_once,
    each_company_sees_only_its_own,
    versions_bulk_limits_and_errors,
    the_admin_groups_members_administer_the_company,
    a_bulk_of_100_creates_is_within_the_functions_timeout,
    a_company_access_token_with_scope_scim_provisions,
    search_bulk_errors_and_what_a_delete_removes,
);

/// scim2-tester's every check, as a separate app whose company limit is off.
mod compliance {
    use super::*;

    crate::on_both_stores!(with crate::scim::unlimited(); the_compliance_checker_reports_no_failure);

    async fn the_compliance_checker_reports_no_failure(app: TestApp) {
        let company = app.create_company("Acme").await;
        let token = provisioning_token(&app, &company).await;
        let report = driver("compliance.py", &app, &token, &[]);
        let failures: Vec<String> = report["results"]
            .as_array()
            .expect("results")
            .iter()
            .filter(|result| matches!(result["status"].as_str(), Some("error" | "critical")))
            .map(|r| format!("{} {}: {}", r["resource_type"], r["title"], r["reason"]))
            .collect();
        assert!(
            failures.is_empty(),
            "the compliance checker failed {} checks: {failures:#?}",
            failures.len()
        );
        assert!(
            report["counts"]["success"].as_u64().unwrap_or(0) > 50,
            "{}",
            report["counts"]
        );
    }
}

/// At most three SCIM requests a minute per company.
mod limited {
    use super::*;

    crate::on_both_stores!(with crate::scim::limited(); a_company_over_its_limit_gets_429);

    async fn a_company_over_its_limit_gets_429(app: TestApp) {
        let acme = app.create_company("Acme").await;
        let globex = app.create_company("Globex").await;
        let acme_token = provisioning_token(&app, &acme).await;
        let globex_token = provisioning_token(&app, &globex).await;
        for _ in 0..3 {
            let response = scim(&app, reqwest::Method::GET, "/Users", &acme_token)
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), StatusCode::OK);
        }
        let response = scim(&app, reqwest::Method::GET, "/Users", &acme_token)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        assert!(response.headers().contains_key("retry-after"));
        let (_, body) = json_of(response).await;
        assert_eq!(body["status"], "429", "{body}");
        // Another company counts on its own.
        let response = scim(&app, reqwest::Method::GET, "/Users", &globex_token)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
    }
}

pub(crate) fn limited() -> crate::support::app::AppOptions {
    let mut options = crate::support::app::AppOptions::default();
    options.policy.rate_limits.scim_per_minute = 3;
    options
}

/// The compliance checker sends more requests than a company may in a minute.
pub(crate) fn unlimited() -> crate::support::app::AppOptions {
    let mut options = crate::support::app::AppOptions::default();
    options.policy.rate_limits.scim_per_minute = 0;
    options
}

pub(super) const PASSWORD: &str = "correct horse battery staple";

fn base(app: &TestApp) -> String {
    app.url("/scim/v2")
}

pub(crate) async fn provisioning_token(app: &TestApp, company: &Company) -> String {
    admin::create_provisioning_token(&app.services.ctx, &company.id, None)
        .await
        .unwrap()
        .token
}

/// Runs one of the SCIM client drivers and answers its JSON.
fn driver(script: &str, app: &TestApp, token: &str, args: &[&str]) -> Value {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is in the workspace")
        .to_owned();
    let python = root.join(".cache/scim-python/bin/python");
    assert!(
        python.is_file(),
        "the SCIM clients' virtualenv is missing: run infra/scim-clients.sh install"
    );
    let output = Command::new(python)
        .arg(root.join("tests/scim").join(script))
        .args(["--base-url", &base(app), "--token", token])
        .args(args)
        .output()
        .expect("the driver runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(&stdout).unwrap_or_else(|_| {
        panic!(
            "{script} printed no JSON (status {}): {stdout}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

pub(crate) fn scim(
    app: &TestApp,
    method: reqwest::Method,
    path: &str,
    token: &str,
) -> reqwest::RequestBuilder {
    app.http
        .request(method, format!("{}{path}", base(app)))
        .bearer_auth(token)
        .header("content-type", "application/scim+json")
}

async fn create(app: &TestApp, token: &str, body: &Value) -> (StatusCode, Value) {
    json_of(
        scim(app, reqwest::Method::POST, "/Users", token)
            .json(body)
            .send()
            .await
            .unwrap(),
    )
    .await
}

pub(super) fn user_body(user_name: &str) -> Value {
    json!({
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
        "userName": user_name,
        "password": PASSWORD,
        "emails": [{"value": user_name, "type": "work", "primary": true}],
        "active": true,
    })
}

async fn a_provisioning_client_runs_a_lifecycle(app: TestApp) {
    let company = app.create_company("Acme").await;
    let token = provisioning_token(&app, &company).await;
    let report = driver("provision.py", &app, &token, &["lifecycle"]);
    let steps = &report["steps"];
    assert_eq!(
        steps["discover"]["resource_types"],
        json!(["Group", "User"]),
        "{steps:#}"
    );
    let id = steps["create"]["id"].as_str().expect("created").to_owned();
    assert_eq!(steps["create"]["department"], "Engineering", "{steps:#}");
    assert_eq!(steps["create"]["password_returned"], false);
    assert_eq!(steps["query"]["totalResults"], 1, "{steps:#}");
    assert_eq!(steps["query"]["ids"], json!([id]));
    assert_eq!(steps["patch"]["active"], false, "{steps:#}");
    assert_eq!(steps["patch"]["familyName"], "Byron");
    assert_ne!(steps["patch"]["version"], steps["create"]["version"]);
    assert_eq!(steps["group_create"]["members"], json!([id]), "{steps:#}");
    assert_eq!(
        steps["group_remove_member"]["members"],
        json!([]),
        "{steps:#}"
    );
    assert_eq!(steps["get_deleted"]["status"], 404, "{steps:#}");
    // Gone from the store too, with its login.
    let parsed = token_domain::PrincipalId::parse(&id).unwrap();
    assert!(app
        .store
        .principals()
        .get_user(&parsed)
        .await
        .unwrap()
        .is_none());
}

async fn deprovisioning_ends_access_at_once(app: TestApp) {
    let company = app.create_company("Acme").await;
    let token = provisioning_token(&app, &company).await;
    let client = app.create_client("read").await;
    // The account page's sign-in below signs in as this user.
    let user_name = crate::authorize::flow::LOGIN;
    let created = driver(
        "provision.py",
        &app,
        &token,
        &[
            "deprovision",
            "--user-name",
            user_name,
            "--password",
            PASSWORD,
        ],
    );
    let id = created["id"].as_str().expect("an id").to_owned();
    let user_id = token_domain::PrincipalId::parse(&id).unwrap();
    let (status, tokens) = app.password_grant(&client, user_name, PASSWORD, &[]).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    let refresh_token = tokens["refresh_token"].as_str().unwrap().to_owned();
    let access_token = tokens["access_token"].as_str().unwrap().to_owned();
    let (_, answer) = crate::openid::account_sign_in(&app).await;
    let session = crate::openid::set_cookie_pair(&answer, "__Host-session").expect("signed in");
    assert!(signed_in(&app, &session).await);

    // Okta's deactivation: a PATCH without a path.
    let deactivated = driver("provision.py", &app, &token, &["deactivate", "--id", &id]);
    assert_eq!(deactivated["active"], false, "{deactivated}");
    let (_, refused) = app.password_grant(&client, user_name, PASSWORD, &[]).await;
    assert_eq!(refused["code"], 10, "{refused}");
    let (_, refused) = app.refresh(&client, &refresh_token).await;
    assert_eq!(refused["code"], 108, "{refused}");
    let (status, introspected) = json_of(
        app.http
            .post(app.url("/oauth2/v0/introspect"))
            .basic_auth(&client.id, Some(&client.secret))
            .form(&[("token", access_token.as_str())])
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(introspected["active"], false, "{introspected}");
    let userinfo = app
        .http
        .get(app.url("/oauth2/v0/userinfo"))
        .bearer_auth(&access_token)
        .send()
        .await
        .unwrap();
    assert_eq!(userinfo.status(), StatusCode::UNAUTHORIZED);
    let now = token_domain::clock::Clock::now(app.clock.as_ref());
    let sessions = app
        .store
        .sessions()
        .list_sessions(&user_id, now)
        .await
        .unwrap();
    assert!(sessions.is_empty(), "every session ended: {sessions:?}");
    assert!(!signed_in(&app, &session).await, "no single sign-on left");

    // Active again revives nothing.
    let (status, _) = json_of(
        scim(
            &app,
            reqwest::Method::PATCH,
            &format!("/Users/{id}"),
            &token,
        )
        .json(&json!({
            "schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
            "Operations": [{"op": "Replace", "path": "active", "value": "True"}],
        }))
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (_, still) = app.refresh(&client, &refresh_token).await;
    assert_eq!(still["code"], 108, "{still}");
    let (status, _) = app.password_grant(&client, user_name, PASSWORD, &[]).await;
    assert_eq!(status, StatusCode::OK);

    let deleted = driver("provision.py", &app, &token, &["delete", "--id", &id]);
    assert!(deleted.get("error").is_none(), "{deleted}");
    let (_, refused) = app.password_grant(&client, user_name, PASSWORD, &[]).await;
    assert_ne!(refused["code"], json!(0), "{refused}");
    let kinds: Vec<String> = app
        .store
        .audit()
        .audit_events(token_store::AuditQuery {
            subject: token_domain::audit::AuditSubject::Principal(user_id),
            since: None,
            now: token_domain::clock::Clock::now(app.clock.as_ref()),
        })
        .await
        .unwrap()
        .iter()
        .map(|event| event.kind.name().to_owned())
        .collect();
    for kind in ["user.provisioned", "user.updated", "user.deprovisioned"] {
        assert!(kinds.iter().any(|k| k == kind), "{kind} not in {kinds:?}");
    }
}

async fn signed_in(app: &TestApp, session: &str) -> bool {
    let page = app
        .http
        .get(app.url("/oauth2/v0/account"))
        .header(reqwest::header::COOKIE, session)
        .send()
        .await
        .unwrap();
    page.text().await.unwrap().contains("Sign out everywhere")
}

async fn each_company_sees_only_its_own(app: TestApp) {
    let acme = app.create_company("Acme").await;
    let globex = app.create_company("Globex").await;
    let acme_token = provisioning_token(&app, &acme).await;
    let globex_token = provisioning_token(&app, &globex).await;
    let (status, created) = create(&app, &acme_token, &user_body("ann@acme.example")).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let id = created["id"].as_str().unwrap();
    assert!(created.get("password").is_none());

    let (status, foreign) = json_of(
        scim(
            &app,
            reqwest::Method::GET,
            &format!("/Users/{id}"),
            &globex_token,
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{foreign}");
    let filter = "/Users?filter=userName%20eq%20%22ann%40acme.example%22";
    let (_, listed) = json_of(
        scim(&app, reqwest::Method::GET, filter, &globex_token)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(listed["totalResults"], 0, "{listed}");
    let (_, listed) = json_of(
        scim(&app, reqwest::Method::GET, filter, &acme_token)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(listed["totalResults"], 1, "{listed}");
    let (_, listed) = json_of(
        scim(
            &app,
            reqwest::Method::GET,
            "/Users?filter=emails%20co%20%22acme%22",
            &globex_token,
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(listed["totalResults"], 0, "{listed}");

    // No credential, a revoked token, a user's token.
    let response = app
        .http
        .get(format!("{}/Users", base(&app)))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let tokens = admin::list_provisioning_tokens(&app.services.ctx, &globex.id)
        .await
        .unwrap();
    admin::revoke_provisioning_token(&app.services.ctx, &globex.id, &tokens[0].id)
        .await
        .unwrap();
    let response = scim(&app, reqwest::Method::GET, "/Users", &globex_token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let client = app.create_client("read").await;
    let (_, tokens) = app
        .password_grant(&client, "ann@acme.example", PASSWORD, &[])
        .await;
    let response = scim(
        &app,
        reqwest::Method::GET,
        "/Users",
        tokens["access_token"].as_str().unwrap(),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);

    // A userName is unique whatever its case; the 409 names the company's own user.
    let (status, taken) = create(&app, &acme_token, &user_body("ANN@acme.example")).await;
    assert_eq!(status, StatusCode::CONFLICT, "{taken}");
    assert_eq!(taken["scimType"], "uniqueness");
    assert!(taken["detail"].as_str().unwrap().contains(id), "{taken}");
}

async fn versions_bulk_limits_and_errors(app: TestApp) {
    let company = app.create_company("Acme").await;
    let token = provisioning_token(&app, &company).await;
    let (_, created) = create(&app, &token, &user_body("bo@acme.example")).await;
    let id = created["id"].as_str().unwrap().to_owned();
    let stale = created["meta"]["version"].as_str().unwrap().to_owned();
    let patch = json!({
        "schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        "Operations": [{"op": "replace", "path": "displayName", "value": "Bo"}],
    });
    let response = scim(
        &app,
        reqwest::Method::PATCH,
        &format!("/Users/{id}"),
        &token,
    )
    .header("if-match", &stale)
    .json(&patch)
    .send()
    .await
    .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_ne!(response.headers()["etag"].to_str().unwrap(), stale);
    let renamed = json!({
        "schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        "Operations": [{"op": "replace", "path": "displayName", "value": "Robert"}],
    });
    let (status, refused) = json_of(
        scim(
            &app,
            reqwest::Method::PATCH,
            &format!("/Users/{id}"),
            &token,
        )
        .header("if-match", &stale)
        .json(&renamed)
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::PRECONDITION_FAILED, "{refused}");
    let (_, now) = json_of(
        scim(&app, reqwest::Method::GET, &format!("/Users/{id}"), &token)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(now["displayName"], "Bo", "a 412 changes nothing");

    let (status, refused) = json_of(
        scim(
            &app,
            reqwest::Method::GET,
            "/Users?filter=userName%20eq",
            &token,
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(refused["scimType"], "invalidFilter", "{refused}");
    assert_eq!(
        refused["schemas"],
        json!(["urn:ietf:params:scim:api:messages:2.0:Error"])
    );

    let operations: Vec<Value> = (0..101)
        .map(|i| json!({"method": "POST", "path": "/Users", "bulkId": format!("u{i}"), "data": user_body(&format!("u{i}@acme.example"))}))
        .collect();
    let bulk = json!({"schemas": ["urn:ietf:params:scim:api:messages:2.0:BulkRequest"], "Operations": operations});
    let response = scim(&app, reqwest::Method::POST, "/Bulk", &token)
        .json(&bulk)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let (_, listed) = json_of(
        scim(&app, reqwest::Method::GET, "/Users", &token)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(listed["totalResults"], 1, "a refused Bulk creates nothing");

    // Bulk with a bulkId reference: a user, then a group holding it.
    let bulk = json!({
        "schemas": ["urn:ietf:params:scim:api:messages:2.0:BulkRequest"],
        "Operations": [
            {"method": "POST", "path": "/Users", "bulkId": "cy", "data": user_body("cy@acme.example")},
            {"method": "POST", "path": "/Groups", "bulkId": "g", "data": {
                "schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"],
                "displayName": "Admins", "members": [{"value": "bulkId:cy"}]}},
        ],
    });
    let (status, answered) = json_of(
        scim(&app, reqwest::Method::POST, "/Bulk", &token)
            .json(&bulk)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answered}");
    assert_eq!(answered["Operations"][0]["status"], "201", "{answered}");
    assert_eq!(answered["Operations"][1]["status"], "201", "{answered}");

    let response = scim(&app, reqwest::Method::GET, "/Me", &token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_IMPLEMENTED);
    assert_eq!(response.headers()["content-type"], "application/scim+json");
}

async fn the_admin_groups_members_administer_the_company(app: TestApp) {
    let company = app.create_company("Acme").await;
    let token = provisioning_token(&app, &company).await;
    admin::set_admin_group(&app.services, &company.id, Some("Administrators"))
        .await
        .unwrap();
    let (_, created) = create(&app, &token, &user_body("dee@acme.example")).await;
    let id = created["id"].as_str().unwrap().to_owned();
    let user_id = token_domain::PrincipalId::parse(&id).unwrap();
    let is_admin = |app: &TestApp| {
        let store = app.store.clone();
        async move {
            store
                .principals()
                .get_user(&user_id)
                .await
                .unwrap()
                .unwrap()
                .is_admin
        }
    };
    assert!(!is_admin(&app).await);
    let group = json!({
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"],
        "displayName": "administrators",
        "members": [{"value": id}],
    });
    let (status, group) = json_of(
        scim(&app, reqwest::Method::POST, "/Groups", &token)
            .json(&group)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{group}");
    assert!(
        is_admin(&app).await,
        "a member of the admin group administers the company"
    );
    let group_id = group["id"].as_str().unwrap();
    let remove = json!({
        "schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        "Operations": [{"op": "remove", "path": format!("members[value eq \"{id}\"]")}],
    });
    let (status, patched) = json_of(
        scim(
            &app,
            reqwest::Method::PATCH,
            &format!("/Groups/{group_id}"),
            &token,
        )
        .json(&remove)
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{patched}");
    assert!(
        !is_admin(&app).await,
        "who leaves the group no longer administers"
    );
}

/// The functions' timeout (`Globals.Function.Timeout` in template.yaml).
const FUNCTION_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

async fn a_bulk_of_100_creates_is_within_the_functions_timeout(app: TestApp) {
    let company = app.create_company("Acme").await;
    let token = provisioning_token(&app, &company).await;
    let operations: Vec<Value> = (0..100)
        .map(|i| {
            json!({"method": "POST", "path": "/Users", "bulkId": format!("u{i}"), "data": {
                "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
                "userName": format!("user{i}@acme.example"),
                "externalId": format!("00u{i}"),
                "emails": [{"value": format!("user{i}@acme.example"), "primary": true}],
            }})
        })
        .collect();
    let bulk = json!({"schemas": ["urn:ietf:params:scim:api:messages:2.0:BulkRequest"], "Operations": operations});
    let started = std::time::Instant::now();
    let (status, answered) = json_of(
        scim(&app, reqwest::Method::POST, "/Bulk", &token)
            .json(&bulk)
            .send()
            .await
            .unwrap(),
    )
    .await;
    let took = started.elapsed();
    assert_eq!(status, StatusCode::OK);
    let created = answered["Operations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|op| op["status"] == "201")
        .count();
    assert_eq!(created, 100, "{answered}");
    assert!(
        took < FUNCTION_TIMEOUT,
        "a Bulk of 100 creates took {took:?}"
    );
    let (_, listed) = json_of(
        scim(
            &app,
            reqwest::Method::GET,
            "/Users?count=200&startIndex=51",
            &token,
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(listed["totalResults"], 100);
    assert_eq!(listed["itemsPerPage"], 50, "the second half, from the 51st");
}

async fn a_company_access_token_with_scope_scim_provisions(app: TestApp) {
    let company = app.create_company("Acme").await;
    let admin = app
        .create_company_admin("admin@acme.example", PASSWORD, &company)
        .await;
    let idp = app.create_client("scim read").await;
    app.enable_company_for(&company, &idp).await;
    app.put_auth_token("the-auth-token", &company, &idp, &admin)
        .await;
    let company_id = company.id.to_string();
    let company_token = |scope: &'static str| {
        let (idp, company_id) = (idp.clone(), company_id.clone());
        let app = &app;
        async move {
            let (status, tokens) = app
                .password_grant(
                    &idp,
                    &company_id,
                    "the-auth-token",
                    &[("credtype", "authtoken"), ("scope", scope)],
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{tokens}");
            tokens["access_token"].as_str().unwrap().to_owned()
        }
    };
    let provisioning = company_token("scim").await;
    let (status, created) = create(&app, &provisioning, &user_body("eve@acme.example")).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let reading = company_token("read").await;
    let response = scim(&app, reqwest::Method::GET, "/Users", &reading)
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.status(),
        StatusCode::FORBIDDEN,
        "without scope scim"
    );
    let application = app.app_token(&idp).await;
    let response = scim(&app, reqwest::Method::GET, "/Users", &application)
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.status(),
        StatusCode::FORBIDDEN,
        "an application token"
    );
}

async fn search_bulk_errors_and_what_a_delete_removes(app: TestApp) {
    let company = app.create_company("Acme").await;
    let token = provisioning_token(&app, &company).await;
    let (_, created) = create(&app, &token, &user_body("fay@acme.example")).await;
    let id = created["id"].as_str().unwrap().to_owned();
    let user_id = token_domain::PrincipalId::parse(&id).unwrap();

    // POST /.search, over both resource types, and /Users/.search with attributes.
    let search = json!({
        "schemas": ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"],
        "filter": "userName sw \"fay\"",
        "attributes": ["userName"],
    });
    let (status, found) = json_of(
        scim(&app, reqwest::Method::POST, "/Users/.search", &token)
            .json(&search)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{found}");
    assert_eq!(found["totalResults"], 1);
    let shown = &found["Resources"][0];
    assert_eq!(shown["userName"], "fay@acme.example");
    assert!(
        shown.get("emails").is_none(),
        "only what was asked for: {shown}"
    );
    let (status, found) = json_of(
        scim(&app, reqwest::Method::POST, "/.search", &token)
            .json(&json!({"schemas": ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"]}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{found}");
    assert_eq!(found["totalResults"], 1);

    // failOnErrors: the request stops after that many errors.
    let bad = json!({"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"]});
    let bulk = json!({
        "schemas": ["urn:ietf:params:scim:api:messages:2.0:BulkRequest"],
        "failOnErrors": 1,
        "Operations": [
            {"method": "POST", "path": "/Users", "bulkId": "a", "data": bad},
            {"method": "POST", "path": "/Users", "bulkId": "b", "data": user_body("gus@acme.example")},
        ],
    });
    let (status, answered) = json_of(
        scim(&app, reqwest::Method::POST, "/Bulk", &token)
            .json(&bulk)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answered}");
    let operations = answered["Operations"].as_array().unwrap();
    assert_eq!(
        operations.len(),
        1,
        "stopped after the first error: {answered}"
    );
    assert_eq!(operations[0]["status"], "400");
    assert_eq!(operations[0]["response"]["scimType"], "invalidValue");
    // Over 1 MiB: 413, nothing created.
    let padding = "x".repeat(1_100_000);
    let response = scim(&app, reqwest::Method::POST, "/Bulk", &token)
        .json(&json!({"schemas": ["urn:ietf:params:scim:api:messages:2.0:BulkRequest"], "Operations": [], "padding": padding}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let (_, listed) = json_of(
        scim(&app, reqwest::Method::GET, "/Users", &token)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(listed["totalResults"], 1, "{listed}");
    // count is at most 200.
    let (_, page) = json_of(
        scim(&app, reqwest::Method::GET, "/Users?count=100000", &token)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(page["itemsPerPage"], 1);

    // A delete removes the user's links with it.
    let link = token_domain::FederationLink {
        idp_id: token_domain::IdpId::new(uuid::Uuid::new_v4()),
        subject: token_domain::UpstreamSubject::new("https://idp.acme.example", "fay").unwrap(),
        user_id,
        company_id: company.id,
        linked_at: token_domain::clock::Clock::now(app.clock.as_ref()),
    };
    app.store
        .federation()
        .put_federation_link(&link)
        .await
        .unwrap();
    let response = scim(
        &app,
        reqwest::Method::DELETE,
        &format!("/Users/{id}"),
        &token,
    )
    .send()
    .await
    .unwrap();
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    assert!(app
        .store
        .federation()
        .list_user_links(&user_id)
        .await
        .unwrap()
        .is_empty());
    assert!(app
        .store
        .federation()
        .get_federation_link(&link.idp_id, &link.subject)
        .await
        .unwrap()
        .is_none());
    let response = scim(&app, reqwest::Method::GET, &format!("/Users/{id}"), &token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    // Each change named the provisioning token that made it.
    let events = app
        .store
        .audit()
        .audit_events(token_store::AuditQuery {
            subject: token_domain::audit::AuditSubject::Principal(user_id),
            since: None,
            now: token_domain::clock::Clock::now(app.clock.as_ref()),
        })
        .await
        .unwrap();
    let tokens = admin::list_provisioning_tokens(&app.services.ctx, &company.id)
        .await
        .unwrap();
    let named = events
        .iter()
        .filter(|event| event.kind.name() == "user.deprovisioned")
        .map(|event| serde_json::to_value(event).unwrap())
        .next()
        .expect("user.deprovisioned");
    assert_eq!(
        named["provisioning_token"],
        tokens[0].id.to_string(),
        "{named}"
    );
    assert_eq!(named["deleted"], true);
}
