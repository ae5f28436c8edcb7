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

crate::on_both_stores!(
    a_provisioning_client_runs_a_lifecycle,
    deprovisioning_ends_access_at_once,
    each_company_sees_only_its_own,
    versions_bulk_limits_and_errors,
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
            .filter(|result| !is_known_gap(result))
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

/// What the checker finds that is not built yet (docs/decisions.md, "SCIM provisioning: not
/// yet"): a PATCH whose path is the enterprise extension's URN itself, the removal of `active`
/// (the user's status always answers it), and a SCIM error body for an unknown path under
/// `/scim/v2`. Anything else fails the test.
fn is_known_gap(result: &Value) -> bool {
    let title = result["title"].as_str().unwrap_or_default();
    let reason = result["reason"].as_str().unwrap_or_default();
    let extension_path = matches!(
        title,
        "check_add_attribute" | "check_remove_attribute" | "check_replace_attribute"
    ) && reason.contains(
        "unknown attribute \"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User\"",
    );
    let active = title == "check_remove_attribute" && reason.contains("attribute 'active'");
    let unknown_path = title == "random_url";
    extension_path || active || unknown_path
}

/// The compliance checker sends more requests than a company may in a minute.
pub(crate) fn unlimited() -> crate::support::app::AppOptions {
    let mut options = crate::support::app::AppOptions::default();
    options.policy.rate_limits.scim_per_minute = 0;
    options
}

const PASSWORD: &str = "correct horse battery staple";

fn base(app: &TestApp) -> String {
    app.url("/scim/v2")
}

async fn provisioning_token(app: &TestApp, company: &Company) -> String {
    admin::create_provisioning_token(&app.services, &company.id, None)
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

fn scim(
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

fn user_body(user_name: &str) -> Value {
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
    let user_name = "leaver@acme.example";
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
    let (status, tokens) = app.password_grant(&client, user_name, PASSWORD, &[]).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    let refresh_token = tokens["refresh_token"].as_str().unwrap().to_owned();

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
            .form(&[("token", tokens["access_token"].as_str().unwrap())])
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(introspected["active"], false, "{introspected}");

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
            subject: token_domain::audit::AuditSubject::Principal(
                token_domain::PrincipalId::parse(&id).unwrap(),
            ),
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
    let tokens = admin::list_provisioning_tokens(&app.services, &globex.id)
        .await
        .unwrap();
    admin::revoke_provisioning_token(&app.services, &globex.id, &tokens[0].id)
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
