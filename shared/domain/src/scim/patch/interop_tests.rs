//! The shapes the big provisioning clients (Microsoft Entra, Okta) send.

use serde_json::json;

use super::tests::{group, patched, refusal, user};
use super::*;
use crate::scim::schema::{GROUP_RESOURCE, USER_RESOURCE};
use crate::scim::{ENTERPRISE_USER_SCHEMA, USER_SCHEMA};

#[test]
fn entra_booleans_as_strings() {
    let result = patched(
        &user(),
        &USER_RESOURCE,
        json!([
            { "op": "Replace", "path": "active", "value": "False" }
        ]),
    )
    .unwrap();
    assert_eq!(result["active"], false);
    let result = patched(
        &result,
        &USER_RESOURCE,
        json!([
            { "op": "Replace", "path": "active", "value": "True" }
        ]),
    )
    .unwrap();
    assert_eq!(result["active"], true);
    let result = patched(
        &user(),
        &USER_RESOURCE,
        json!([
            { "op": "Replace", "value": { "active": "false" } }
        ]),
    )
    .unwrap();
    assert_eq!(result["active"], false);
}

#[test]
fn okta_replace_without_path() {
    let result = patched(&user(), &USER_RESOURCE, json!([
        { "op": "replace", "value": { "id": "ignored", "active": false, "name": { "givenName": "Babs" } } }
    ]))
    .unwrap();
    assert_eq!(result["active"], false);
    assert_eq!(result["id"], "2819c223-7f76-453a-919d-413861904646");
    assert_eq!(
        result["name"],
        json!({ "familyName": "Jensen", "givenName": "Babs" })
    );
}

#[test]
fn add_without_path_with_extension_attributes() {
    let result = patched(&user(), &USER_RESOURCE, json!([
        { "op": "add", "value": {
            ENTERPRISE_USER_SCHEMA: { "employeeNumber": "701984", "manager": { "value": "m1", "displayName": "ignored" } },
            format!("{ENTERPRISE_USER_SCHEMA}:department"): "Tour Operations",
            "nickName": "ignored too"
        } }
    ]))
    .unwrap();
    assert_eq!(
        result[ENTERPRISE_USER_SCHEMA],
        json!({ "employeeNumber": "701984", "department": "Tour Operations", "manager": { "value": "m1" } })
    );
    assert_eq!(
        result["schemas"],
        json!([USER_SCHEMA, ENTERPRISE_USER_SCHEMA])
    );
    assert!(result.get("nickName").is_none());
}

#[test]
fn extension_paths() {
    let result = patched(&user(), &USER_RESOURCE, json!([
        { "op": "Add", "path": format!("{ENTERPRISE_USER_SCHEMA}:department"), "value": "Sales" },
        { "op": "Replace", "path": format!("{ENTERPRISE_USER_SCHEMA}:manager"), "value": "m2" },
        { "op": "Add", "path": format!("{ENTERPRISE_USER_SCHEMA}:manager.$ref"), "value": "https://example.com/v2/Users/m2" }
    ]))
    .unwrap();
    assert_eq!(result[ENTERPRISE_USER_SCHEMA]["department"], "Sales");
    assert_eq!(
        result[ENTERPRISE_USER_SCHEMA]["manager"],
        json!({ "value": "m2", "$ref": "https://example.com/v2/Users/m2" })
    );
    let removed = patched(
        &result,
        &USER_RESOURCE,
        json!([
            { "op": "remove", "path": format!("{ENTERPRISE_USER_SCHEMA}:department") },
            { "op": "remove", "path": format!("{ENTERPRISE_USER_SCHEMA}:manager") }
        ]),
    )
    .unwrap();
    assert!(removed.get(ENTERPRISE_USER_SCHEMA).is_none());
    assert_eq!(removed["schemas"], json!([USER_SCHEMA]));
}

#[test]
fn entra_removes_members_listed_in_value() {
    let result = patched(
        &group(),
        &GROUP_RESOURCE,
        json!([{
            "op": "Remove",
            "path": "members",
            "value": [{ "value": "2819c223-7f76-453a-919d-413861904646" }]
        }]),
    )
    .unwrap();
    assert_eq!(result["members"].as_array().unwrap().len(), 1);
    assert_eq!(
        result["members"][0]["value"],
        "902c246b-6245-4190-8e05-00816be7344a"
    );
}

#[test]
fn entra_adds_a_work_email_through_a_filter() {
    let resource = json!({ "schemas": [USER_SCHEMA], "userName": "u" });
    let result = patched(
        &resource,
        &USER_RESOURCE,
        json!([
            { "op": "Add", "path": "emails[type eq \"work\"].value", "value": "u@example.com" }
        ]),
    )
    .unwrap();
    assert_eq!(
        result["emails"],
        json!([{ "type": "work", "value": "u@example.com" }])
    );
    let again = patched(
        &result,
        &USER_RESOURCE,
        json!([
            { "op": "Add", "path": "emails[type eq \"work\"].value", "value": "v@example.com" }
        ]),
    )
    .unwrap();
    assert_eq!(
        again["emails"],
        json!([{ "type": "work", "value": "v@example.com" }])
    );
    let ops = json!([{ "op": "add", "path": "emails[value co \"x\"].type", "value": "home" }]);
    assert_eq!(
        refusal(&resource, &USER_RESOURCE, ops),
        Some(ScimType::NoTarget)
    );
}

#[test]
fn stored_names_in_another_case_are_replaced() {
    let resource = json!({ "userName": "u", "DisplayName": "old" });
    let result = patched(
        &resource,
        &USER_RESOURCE,
        json!([
            { "op": "replace", "path": "displayname", "value": "new" }
        ]),
    )
    .unwrap();
    assert_eq!(result["displayName"], "new");
    assert!(result.get("DisplayName").is_none());
}

#[test]
fn entra_pathless_keys_may_be_paths() {
    let result = patched(
        &user(),
        &USER_RESOURCE,
        json!([{
            "op": "Add",
            "value": {
                "name.givenName": "Babs",
                "emails[type eq \"home\"].value": "home@example.org",
                "emails[type eq \"other\"].value": "other@example.org"
            }
        }]),
    )
    .unwrap();
    assert_eq!(result["name"]["givenName"], "Babs");
    assert_eq!(result["emails"][1]["value"], "home@example.org");
    assert_eq!(
        result["emails"][2],
        json!({ "type": "other", "value": "other@example.org" })
    );
}
