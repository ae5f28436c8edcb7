//! Budgets of SCIM provisioning, warm (the company in the read cache): each request reads its
//! provisioning token and counts against the company's limit, then does its own work.

use super::counted::*;
use serde_json::{json, Value};
use token_core::admin;

/// The token (`GetItem` by digest) and the company's counter (`UpdateItem`): every request.
const CALLER: usize = 2;

fn user(user_name: &str) -> Value {
    json!({
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
        "userName": user_name,
        "emails": [{"value": user_name, "primary": true}],
        "externalId": format!("ext-{user_name}"),
        "active": true,
    })
}

/// Create: the caller, then one transaction (the user, its login, address and external id
/// items, its directory copy, the company's count) and the audit event: `CALLER + 2`.
/// Read by id: `CALLER + 1`. A filter `userName eq`: the login item (which holds a copy of the
/// user): `CALLER + 1`, never a query of the company. A deactivation with nothing live: the
/// user (`GetItem`), its write and its audit event (two transactions), the session and
/// connection listings (two `Query`s), and the deprovisioned event: `CALLER + 5`. A delete: the
/// user, its disabling, the sweep's two listings, the links', passkeys' and groups' listings,
/// the authenticator app's delete, the records' transaction: `CALLER + 9`.
pub async fn scim_provisioning(c: Counted) {
    let app = &c.app;
    let company = app.create_company("Acme").await;
    let token = admin::create_provisioning_token(&app.services.ctx, &company.id, None)
        .await
        .unwrap()
        .token;
    let base = app.url("/scim/v2");
    let send = |method: reqwest::Method, path: String, body: Option<Value>| {
        let mut request = app
            .http
            .request(method, format!("{base}{path}"))
            .bearer_auth(&token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        async move {
            let response = request.send().await.unwrap();
            let status = response.status();
            let body: Value = response.json().await.unwrap_or(Value::Null);
            (status, body)
        }
    };
    // Warm: the company read once.
    let (status, _) = send(
        reqwest::Method::POST,
        "/Users".into(),
        Some(user("warm@acme.example")),
    )
    .await;
    assert_eq!(status, 201);

    let ((status, created), calls) = c
        .calls_of(
            "scim create",
            send(
                reqwest::Method::POST,
                "/Users".into(),
                Some(user("ann@acme.example")),
            ),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    assert_within(&calls, CALLER + 2, "scim create");
    let id = created["id"].as_str().unwrap().to_owned();

    let ((status, _), calls) = c
        .calls_of(
            "scim read",
            send(reqwest::Method::GET, format!("/Users/{id}"), None),
        )
        .await;
    assert_eq!(status, 200);
    assert_within(&calls, CALLER + 1, "scim read");

    let filter = "/Users?filter=userName%20eq%20%22ann%40acme.example%22".to_owned();
    let ((status, listed), calls) = c
        .calls_of(
            "scim filter by userName",
            send(reqwest::Method::GET, filter, None),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(listed["totalResults"], 1);
    assert_within(&calls, CALLER + 1, "scim filter by userName");
    assert_eq!(
        calls.count("Query"),
        0,
        "an indexed equality queries nothing"
    );

    let deactivate = json!({
        "schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        "Operations": [{"op": "replace", "path": "active", "value": false}],
    });
    let ((status, patched), calls) = c
        .calls_of(
            "scim deactivate",
            send(
                reqwest::Method::PATCH,
                format!("/Users/{id}"),
                Some(deactivate),
            ),
        )
        .await;
    assert_eq!(status, 200, "{patched}");
    assert_within(&calls, CALLER + 5, "scim deactivate");

    let ((status, _), calls) = c
        .calls_of(
            "scim delete",
            send(reqwest::Method::DELETE, format!("/Users/{id}"), None),
        )
        .await;
    assert_eq!(status, 204);
    assert_within(&calls, CALLER + 9, "scim delete");
}
