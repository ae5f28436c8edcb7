//! The request message, and the refusals of RFC 7644 §3.5.2 and §3.12.

use serde_json::{json, Value};

use super::tests::{group, operations, patched, refusal, user};
use super::*;
use crate::scim::schema::{GROUP_RESOURCE, USER_RESOURCE};
use crate::scim::ENTERPRISE_USER_SCHEMA;

#[test]
fn the_request_message_parses_with_ops_in_any_case() {
    let body = json!({
        "schemas": [PATCH_OP_SCHEMA],
        "Operations": [
            { "op": "add", "path": "displayName", "value": "x" },
            { "op": "Replace", "path": "active", "value": "False" },
            { "op": "REMOVE", "path": "title" }
        ]
    });
    let request = PatchRequest::from_json(body.to_string().as_bytes()).unwrap();
    let ops: Vec<PatchOp> = request.operations.iter().map(|op| op.op).collect();
    assert_eq!(ops, [PatchOp::Add, PatchOp::Replace, PatchOp::Remove]);
    assert_eq!(request.operations[2].value, None);
}

#[test]
fn malformed_messages_are_invalid_syntax() {
    let kind = |body: Value| {
        PatchRequest::from_json(body.to_string().as_bytes())
            .err()
            .and_then(|error| error.scim_type)
    };
    let unknown_op =
        json!({ "schemas": [PATCH_OP_SCHEMA], "Operations": [{ "op": "move", "path": "a" }] });
    assert_eq!(kind(unknown_op), Some(ScimType::InvalidSyntax));
    assert_eq!(
        kind(json!({ "schemas": [PATCH_OP_SCHEMA], "Operations": [] })),
        Some(ScimType::InvalidSyntax)
    );
    assert_eq!(
        kind(json!({ "schemas": ["x"], "Operations": [{ "op": "add", "value": {} }] })),
        Some(ScimType::InvalidSyntax)
    );
    assert_eq!(
        kind(json!({ "schemas": [PATCH_OP_SCHEMA] })),
        Some(ScimType::InvalidSyntax)
    );
    let long = json!({ "schemas": [PATCH_OP_SCHEMA], "Operations": [{ "op": "x".repeat(1000) }] });
    let error = PatchRequest::from_json(long.to_string().as_bytes()).unwrap_err();
    assert!(error.detail.chars().filter(|c| *c == 'x').count() <= 100);
}

#[test]
fn too_many_operations_are_413() {
    let one = json!({ "op": "add", "path": "displayName", "value": "x" });
    let ops = operations(Value::Array(vec![one; MAX_PATCH_OPERATIONS + 1]));
    let mut resource = user();
    let error = apply(&mut resource, &ops, &USER_RESOURCE).unwrap_err();
    assert_eq!((error.status, error.scim_type), (413, None));
    assert!(apply(&mut resource, &ops[..MAX_PATCH_OPERATIONS], &USER_RESOURCE).is_ok());
}

#[test]
fn replace_through_an_unmatched_filter_is_no_target() {
    let ops =
        json!([{ "op": "replace", "path": "emails[type eq \"other\"].value", "value": "x@y" }]);
    assert_eq!(
        refusal(&user(), &USER_RESOURCE, ops),
        Some(ScimType::NoTarget)
    );
    let ops = json!([{ "op": "remove", "path": "members[value eq \"nobody\"]" }]);
    assert_eq!(
        refusal(&group(), &GROUP_RESOURCE, ops),
        Some(ScimType::NoTarget)
    );
}

#[test]
fn remove_without_path_is_no_target() {
    assert_eq!(
        refusal(&user(), &USER_RESOURCE, json!([{ "op": "remove" }])),
        Some(ScimType::NoTarget)
    );
}

#[test]
fn a_required_attribute_cannot_be_removed() {
    let ops = json!([{ "op": "remove", "path": "userName" }]);
    assert_eq!(
        refusal(&user(), &USER_RESOURCE, ops),
        Some(ScimType::InvalidValue)
    );
    let ops = json!([{ "op": "replace", "value": { "displayName": null } }]);
    assert_eq!(
        refusal(&group(), &GROUP_RESOURCE, ops),
        Some(ScimType::InvalidValue)
    );
}

#[test]
fn read_only_attributes_are_mutability() {
    for path in ["id", "meta", "meta.lastModified"] {
        let ops = json!([{ "op": "replace", "path": path, "value": "x" }]);
        assert_eq!(
            refusal(&user(), &USER_RESOURCE, ops),
            Some(ScimType::Mutability),
            "{path}"
        );
    }
    let ops = json!([{ "op": "replace", "path": "members[value eq \"902c246b-6245-4190-8e05-00816be7344a\"].display", "value": "x" }]);
    assert_eq!(
        refusal(&group(), &GROUP_RESOURCE, ops),
        Some(ScimType::Mutability)
    );
    let ops = json!([{ "op": "add", "path": format!("{ENTERPRISE_USER_SCHEMA}:manager.displayName"), "value": "x" }]);
    assert_eq!(
        refusal(&user(), &USER_RESOURCE, ops),
        Some(ScimType::Mutability)
    );
    let ops = json!([{ "op": "remove", "path": "id" }]);
    assert_eq!(
        refusal(&user(), &USER_RESOURCE, ops),
        Some(ScimType::Mutability)
    );
}

#[test]
fn an_immutable_value_cannot_change() {
    let ops = json!([{ "op": "replace", "path": "members[value eq \"902c246b-6245-4190-8e05-00816be7344a\"].value", "value": "other" }]);
    assert_eq!(
        refusal(&group(), &GROUP_RESOURCE, ops),
        Some(ScimType::Mutability)
    );
    let ops = json!([{ "op": "replace", "path": "members[value eq \"902c246b-6245-4190-8e05-00816be7344a\"]", "value": { "type": "Group" } }]);
    assert_eq!(
        refusal(&group(), &GROUP_RESOURCE, ops),
        Some(ScimType::Mutability)
    );
    let same = json!([{ "op": "replace", "path": "members[value eq \"902c246b-6245-4190-8e05-00816be7344a\"].value", "value": "902c246b-6245-4190-8e05-00816be7344a" }]);
    assert!(patched(&group(), &GROUP_RESOURCE, same).is_ok());
    let unset = json!([{ "op": "add", "path": "members[value eq \"902c246b-6245-4190-8e05-00816be7344a\"].$ref", "value": "https://example.com/v2/Users/902c246b" }]);
    assert!(patched(&group(), &GROUP_RESOURCE, unset).is_ok());
}

#[test]
fn wrong_types_are_invalid_value() {
    for (path, value) in [
        ("active", json!("maybe")),
        ("active", json!(1)),
        ("userName", json!(42)),
        ("emails", json!(["not-an-object-but-a-string", 3])),
        ("name", json!(true)),
        ("name.givenName", json!({ "x": 1 })),
    ] {
        let ops = json!([{ "op": "replace", "path": path, "value": value }]);
        assert_eq!(
            refusal(&user(), &USER_RESOURCE, ops),
            Some(ScimType::InvalidValue),
            "{path}"
        );
    }
    let ops = json!([{ "op": "add", "path": "displayName" }]);
    assert_eq!(
        refusal(&user(), &USER_RESOURCE, ops),
        Some(ScimType::InvalidValue)
    );
}

#[test]
fn unknown_paths_are_invalid_path() {
    for path in [
        "nickName",
        "name.nickName",
        "emails[nothing eq 1]",
        "emails[type eq",
    ] {
        let ops = json!([{ "op": "replace", "path": path, "value": "x" }]);
        assert_eq!(
            refusal(&user(), &USER_RESOURCE, ops),
            Some(ScimType::InvalidPath),
            "{path}"
        );
    }
    let ops = json!([{ "op": "remove", "path": "title" }]);
    assert_eq!(
        refusal(&user(), &USER_RESOURCE, ops),
        Some(ScimType::InvalidPath)
    );
}

#[test]
fn all_or_nothing() {
    let original = user();
    let mut resource = original.clone();
    let ops = operations(json!([
        { "op": "replace", "path": "displayName", "value": "changed" },
        { "op": "replace", "path": "id", "value": "stolen" }
    ]));
    let error = apply(&mut resource, &ops, &USER_RESOURCE).unwrap_err();
    assert_eq!(error.scim_type, Some(ScimType::Mutability));
    assert!(error.detail.starts_with("operation 2:"), "{}", error.detail);
    assert_eq!(resource, original);
}

#[test]
fn odd_stored_shapes_never_panic() {
    let odd = json!({
        "userName": ["u"],
        "name": "not an object",
        "emails": "a@x",
        "active": "yes",
        ENTERPRISE_USER_SCHEMA: "not an object",
        "members": [1, null, { "value": 2 }]
    });
    let paths = [
        "name.givenName",
        "emails",
        "emails.value",
        "emails[type eq \"work\"]",
        "emails[type eq \"work\"].value",
        "active",
        "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.value",
        "department",
        "members[value eq \"2\"]",
        "members",
    ];
    let values = [
        json!("x"),
        json!(true),
        json!([{ "value": "v", "primary": true }]),
        json!({ "value": "v" }),
    ];
    for rt in [&USER_RESOURCE, &GROUP_RESOURCE] {
        for path in paths {
            for op in ["add", "replace", "remove"] {
                for value in &values {
                    let _ = patched(
                        &odd,
                        rt,
                        json!([{ "op": op, "path": path, "value": value }]),
                    );
                }
            }
        }
        let _ = patched(&odd, rt, json!([{ "op": "add", "value": odd.clone() }]));
        let _ = patched(
            &json!("not an object"),
            rt,
            json!([{ "op": "add", "value": {} }]),
        );
    }
}
