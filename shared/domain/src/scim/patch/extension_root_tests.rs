//! PATCH on an extension's URN alone, its whole object (RFC 7644 §3.10), as scim2-tester's
//! `check_add_attribute`, `check_replace_attribute` and `check_remove_attribute` send it.

use serde_json::{json, Value};

use super::tests::{patched, refusal, user};
use super::*;
use crate::scim::normalize::normalize;
use crate::scim::schema::{GROUP_RESOURCE, USER_RESOURCE};
use crate::scim::{ENTERPRISE_USER_SCHEMA, USER_SCHEMA};

fn enterprise_user() -> Value {
    let mut user = user();
    user["schemas"] = json!([USER_SCHEMA, ENTERPRISE_USER_SCHEMA]);
    user[ENTERPRISE_USER_SCHEMA] = json!({
        "employeeNumber": "7",
        "department": "Sales",
        "manager": { "value": "m1", "displayName": "Manager One" }
    });
    user
}

fn on_extension(op: &str, value: Option<Value>) -> Value {
    let mut operation = json!({ "op": op, "path": ENTERPRISE_USER_SCHEMA });
    if let Some(value) = value {
        operation["value"] = value;
    }
    json!([operation])
}

#[test]
fn add_creates_the_extension() {
    let result = patched(
        &user(),
        &USER_RESOURCE,
        on_extension(
            "add",
            Some(json!({ "department": "X", "employeeNumber": "1" })),
        ),
    )
    .unwrap();
    assert_eq!(
        result[ENTERPRISE_USER_SCHEMA],
        json!({ "department": "X", "employeeNumber": "1" })
    );
    assert_eq!(
        result["schemas"],
        json!([USER_SCHEMA, ENTERPRISE_USER_SCHEMA])
    );
    assert_eq!(result["userName"], "bjensen");
    let normalized = normalize(&result, &USER_RESOURCE).unwrap();
    assert_eq!(
        normalized[ENTERPRISE_USER_SCHEMA],
        result[ENTERPRISE_USER_SCHEMA]
    );
}

#[test]
fn add_merges_into_the_extension() {
    let result = patched(
        &enterprise_user(),
        &USER_RESOURCE,
        on_extension(
            "Add",
            Some(json!({
                "schemas": [ENTERPRISE_USER_SCHEMA],
                "department": "X",
                "manager": { "value": "m2" },
                "costCenter": "unknown, ignored"
            })),
        ),
    )
    .unwrap();
    assert_eq!(
        result[ENTERPRISE_USER_SCHEMA],
        json!({
            "employeeNumber": "7",
            "department": "X",
            "manager": { "value": "m2", "displayName": "Manager One" }
        })
    );
}

#[test]
fn the_urn_is_case_insensitive() {
    let result = patched(
        &user(),
        &USER_RESOURCE,
        json!([{
            "op": "add",
            "path": ENTERPRISE_USER_SCHEMA.to_ascii_uppercase(),
            "value": { "department": "X" }
        }]),
    )
    .unwrap();
    assert_eq!(result[ENTERPRISE_USER_SCHEMA], json!({ "department": "X" }));
}

#[test]
fn replace_sets_the_extension() {
    let result = patched(
        &enterprise_user(),
        &USER_RESOURCE,
        on_extension(
            "replace",
            Some(json!({ "department": "X", "employeeNumber": "1" })),
        ),
    )
    .unwrap();
    assert_eq!(
        result[ENTERPRISE_USER_SCHEMA],
        json!({ "department": "X", "employeeNumber": "1" }),
        "the manager, which the value does not name, is gone"
    );
    assert_eq!(
        result["schemas"],
        json!([USER_SCHEMA, ENTERPRISE_USER_SCHEMA])
    );
}

#[test]
fn replace_without_extension_data_adds_it() {
    let result = patched(
        &user(),
        &USER_RESOURCE,
        on_extension("replace", Some(json!({ "department": "X" }))),
    )
    .unwrap();
    assert_eq!(result[ENTERPRISE_USER_SCHEMA], json!({ "department": "X" }));
    assert_eq!(
        result["schemas"],
        json!([USER_SCHEMA, ENTERPRISE_USER_SCHEMA])
    );
}

#[test]
fn replace_with_nothing_removes_the_extension() {
    // `"value": null` is no value at all once deserialized: "the operation needs a value".
    for value in [json!({}), json!({ "department": null })] {
        let result = patched(
            &enterprise_user(),
            &USER_RESOURCE,
            on_extension("replace", Some(value.clone())),
        )
        .unwrap();
        assert!(result.get(ENTERPRISE_USER_SCHEMA).is_none(), "{value}");
        assert_eq!(result["schemas"], json!([USER_SCHEMA]), "{value}");
    }
}

#[test]
fn remove_drops_the_extension() {
    let result = patched(
        &enterprise_user(),
        &USER_RESOURCE,
        on_extension("remove", None),
    )
    .unwrap();
    assert!(result.get(ENTERPRISE_USER_SCHEMA).is_none());
    assert_eq!(result["schemas"], json!([USER_SCHEMA]));
    assert_eq!(result["userName"], "bjensen");
    let normalized = normalize(&result, &USER_RESOURCE).unwrap();
    assert_eq!(normalized["schemas"], json!([USER_SCHEMA]));
}

#[test]
fn remove_without_extension_data_changes_nothing() {
    let result = patched(&user(), &USER_RESOURCE, on_extension("remove", None)).unwrap();
    assert_eq!(result, user());
}

#[test]
fn then_later_operations_see_the_change() {
    let result = patched(
        &enterprise_user(),
        &USER_RESOURCE,
        json!([
            { "op": "remove", "path": ENTERPRISE_USER_SCHEMA },
            { "op": "add", "path": format!("{ENTERPRISE_USER_SCHEMA}:department"), "value": "Y" }
        ]),
    )
    .unwrap();
    assert_eq!(result[ENTERPRISE_USER_SCHEMA], json!({ "department": "Y" }));
}

#[test]
fn refusals() {
    for value in [json!("X"), json!(["X"]), json!(1)] {
        for op in ["add", "replace"] {
            assert_eq!(
                refusal(
                    &user(),
                    &USER_RESOURCE,
                    on_extension(op, Some(value.clone()))
                ),
                Some(ScimType::InvalidValue),
                "{op} {value}"
            );
        }
    }
    assert_eq!(
        refusal(&user(), &USER_RESOURCE, on_extension("add", None)),
        Some(ScimType::InvalidValue)
    );
    for path in [
        format!("{ENTERPRISE_USER_SCHEMA}[department eq \"X\"]"),
        format!("{ENTERPRISE_USER_SCHEMA}:"),
        "urn:ietf:params:scim:schemas:extension:other:2.0:User".to_owned(),
    ] {
        assert_eq!(
            refusal(
                &user(),
                &USER_RESOURCE,
                json!([{ "op": "add", "path": path, "value": { "department": "X" } }])
            ),
            Some(ScimType::InvalidPath),
            "{path}"
        );
    }
    assert_eq!(
        refusal(
            &json!({ "schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"], "displayName": "g" }),
            &GROUP_RESOURCE,
            json!([{ "op": "remove", "path": ENTERPRISE_USER_SCHEMA }])
        ),
        Some(ScimType::InvalidPath),
        "groups have no extension"
    );
}

#[test]
fn remove_active_leaves_it_absent() {
    let result = patched(
        &user(),
        &USER_RESOURCE,
        json!([{ "op": "remove", "path": "active" }]),
    )
    .unwrap();
    assert!(result.get("active").is_none());
    let normalized = normalize(&result, &USER_RESOURCE).unwrap();
    assert!(normalized.get("active").is_none(), "{normalized}");
    let stored_in_another_case = patched(
        &json!({ "schemas": [USER_SCHEMA], "userName": "u", "Active": false }),
        &USER_RESOURCE,
        json!([{ "op": "Remove", "path": "ACTIVE" }]),
    )
    .unwrap();
    assert_eq!(
        stored_in_another_case,
        json!({ "schemas": [USER_SCHEMA], "userName": "u" })
    );
}
