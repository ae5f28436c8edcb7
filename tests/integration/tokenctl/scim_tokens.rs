//! `companies scim-tokens create|list|revoke` and `companies set-admin-group`, with the service
//! on the same store: the printed token provisions, only its digest is stored, and a revoked
//! one stops at once.

use reqwest::StatusCode;
use token_domain::PrincipalId;

use super::output::str_field;
use super::target::{Target, UNKNOWN};

pub async fn create_list_revoke(t: &Target) {
    let app = super::app_on(t).await;
    let company = t.json(&["companies", "create", "--name", "Acme"]);
    let company_id = str_field(&company, "company_id").to_owned();
    let created = t.json(&[
        "companies",
        "scim-tokens",
        "create",
        &company_id,
        "--expires-in",
        "30",
    ]);
    let token = str_field(&created, "token").to_owned();
    let token_id = str_field(&created, "token_id").to_owned();
    assert!(created["expires"].as_i64().is_some(), "{created}");
    assert!(
        !t.stored_anywhere(&token).await,
        "only the token's digest is stored"
    );
    let listed = t.json(&["companies", "scim-tokens", "list", &company_id]);
    assert_eq!(
        listed["tokens"][0]["token_id"],
        token_id.as_str(),
        "{listed}"
    );
    assert!(
        listed.to_string().find(&token).is_none(),
        "a listing never shows the token"
    );

    let users = || {
        app.http
            .get(app.url("/scim/v2/Users"))
            .bearer_auth(&token)
            .send()
    };
    assert_eq!(users().await.unwrap().status(), StatusCode::OK);
    t.fails(&["companies", "scim-tokens", "create", UNKNOWN], 3);
    t.fails(
        &["companies", "scim-tokens", "revoke", UNKNOWN, &token_id],
        3,
    );
    let text = t.text(&["companies", "scim-tokens", "revoke", &company_id, &token_id]);
    assert!(text.contains("revoked"), "{text}");
    assert_eq!(users().await.unwrap().status(), StatusCode::UNAUTHORIZED);

    let set = t.json(&[
        "companies",
        "set-admin-group",
        &company_id,
        "Administrators",
    ]);
    assert_eq!(set["admin_group"], "Administrators");
    let stored = t
        .store
        .principals()
        .get_company(&PrincipalId::parse(&company_id).unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.admin_group.as_deref(), Some("Administrators"));
    let none = t.json(&["companies", "set-admin-group", &company_id, "--none"]);
    assert!(none["admin_group"].is_null(), "{none}");
}
