use serde_json::{json, Value};

use super::*;
use crate::scim::schema::{GROUP_RESOURCE, USER_RESOURCE};
use crate::scim::USER_SCHEMA;

pub(super) fn operations(value: Value) -> Vec<PatchOperation> {
    serde_json::from_value(value).unwrap()
}

pub(super) fn patched(resource: &Value, rt: &ResourceType, ops: Value) -> Result<Value, ScimError> {
    let mut resource = resource.clone();
    apply(&mut resource, &operations(ops), rt)?;
    Ok(resource)
}

pub(super) fn refusal(resource: &Value, rt: &ResourceType, ops: Value) -> Option<ScimType> {
    patched(resource, rt, ops)
        .err()
        .and_then(|error| error.scim_type)
}

pub(super) fn user() -> Value {
    json!({
        "schemas": [USER_SCHEMA],
        "id": "2819c223-7f76-453a-919d-413861904646",
        "userName": "bjensen",
        "name": { "familyName": "Jensen", "givenName": "Barbara" },
        "active": true,
        "emails": [
            { "value": "bjensen@example.com", "type": "work", "primary": true },
            { "value": "babs@jensen.org", "type": "home" }
        ],
        "meta": { "resourceType": "User", "lastModified": "2011-05-13T04:42:34Z" }
    })
}

pub(super) fn group() -> Value {
    json!({
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"],
        "id": "acbf3ae7-8463-4692-b4fd-9b4da3f908ce",
        "displayName": "Tour Guides",
        "members": [
            { "value": "2819c223-7f76-453a-919d-413861904646", "type": "User" },
            { "value": "902c246b-6245-4190-8e05-00816be7344a", "type": "User" }
        ]
    })
}

#[test]
fn rfc_add_members() {
    let result = patched(
        &group(),
        &GROUP_RESOURCE,
        json!([{
            "op": "add",
            "path": "members",
            "value": [{
                "display": "Babs Jensen",
                "$ref": "https://example.com/v2/Users/2819c223-7f76-453a-919d-413861904646",
                "value": "2819c223-7f76-453a-919d-413861904646"
            }, {
                "value": "08e1d05d-121c-4561-8b96-473d93df9210"
            }]
        }]),
    )
    .unwrap();
    let members = result["members"].as_array().unwrap();
    assert_eq!(
        members.len(),
        3,
        "the existing member is not added twice: {members:?}"
    );
    assert_eq!(
        members[2],
        json!({ "value": "08e1d05d-121c-4561-8b96-473d93df9210" })
    );
    assert!(members.iter().all(|member| member.get("display").is_none()));
}

#[test]
fn add_appends_without_duplicates() {
    let value = json!({ "value": "babs@jensen.org", "type": "home" });
    let result = patched(
        &user(),
        &USER_RESOURCE,
        json!([
            { "op": "add", "path": "emails", "value": [value] },
            { "op": "add", "path": "emails", "value": { "value": "third@example.com" } }
        ]),
    )
    .unwrap();
    assert_eq!(result["emails"].as_array().unwrap().len(), 3);
}

#[test]
fn rfc_remove_a_member_by_filter() {
    let result = patched(
        &group(),
        &GROUP_RESOURCE,
        json!([{
            "op": "remove",
            "path": "members[value eq \"2819c223-7f76-453a-919d-413861904646\"]"
        }]),
    )
    .unwrap();
    assert_eq!(
        result["members"],
        json!([{ "value": "902c246b-6245-4190-8e05-00816be7344a", "type": "User" }])
    );
}

#[test]
fn remove_all_members_and_then_replace_them() {
    let result = patched(
        &group(),
        &GROUP_RESOURCE,
        json!([
            { "op": "remove", "path": "members" },
            { "op": "add", "path": "members", "value": [{ "value": "new" }] }
        ]),
    )
    .unwrap();
    assert_eq!(result["members"], json!([{ "value": "new" }]));
    let emptied = patched(
        &group(),
        &GROUP_RESOURCE,
        json!([{ "op": "remove", "path": "members" }]),
    )
    .unwrap();
    assert!(emptied.get("members").is_none());
}

#[test]
fn rfc_replace_members() {
    let result = patched(
        &group(),
        &GROUP_RESOURCE,
        json!([{
            "op": "replace",
            "path": "members",
            "value": [{ "display": "Babs", "value": "2819c223-7f76-453a-919d-413861904646" }]
        }]),
    )
    .unwrap();
    assert_eq!(
        result["members"],
        json!([{ "value": "2819c223-7f76-453a-919d-413861904646" }])
    );
}

#[test]
fn rfc_replace_a_filtered_value() {
    let result = patched(
        &user(),
        &USER_RESOURCE,
        json!([{
            "op": "replace",
            "path": "emails[type eq \"work\"]",
            "value": { "type": "work", "value": "babs@example.com" }
        }]),
    )
    .unwrap();
    assert_eq!(
        result["emails"][0],
        json!({ "value": "babs@example.com", "type": "work", "primary": true })
    );
    assert_eq!(result["emails"][1]["value"], "babs@jensen.org");
}

#[test]
fn rfc_replace_a_sub_attribute_of_filtered_values() {
    let result = patched(
        &user(),
        &USER_RESOURCE,
        json!([{
            "op": "replace",
            "path": "emails[type eq \"home\"].value",
            "value": "home@example.org"
        }]),
    )
    .unwrap();
    assert_eq!(result["emails"][1]["value"], "home@example.org");
    assert_eq!(result["emails"][0]["value"], "bjensen@example.com");
}

#[test]
fn replace_single_attributes_and_sub_attributes() {
    let result = patched(
        &user(),
        &USER_RESOURCE,
        json!([
            { "op": "replace", "path": "name.familyName", "value": "Doe" },
            { "op": "replace", "path": "displayName", "value": "Babs" },
            { "op": "replace", "path": "name", "value": { "middleName": "Jane" } }
        ]),
    )
    .unwrap();
    assert_eq!(
        result["name"],
        json!({ "familyName": "Doe", "givenName": "Barbara", "middleName": "Jane" })
    );
    assert_eq!(result["displayName"], "Babs");
}

#[test]
fn replace_of_a_missing_attribute_adds_it() {
    let result = patched(
        &user(),
        &USER_RESOURCE,
        json!([
            { "op": "replace", "path": "name.honorificPrefix", "value": "Ms." }
        ]),
    )
    .unwrap();
    assert_eq!(result["name"]["honorificPrefix"], "Ms.");
}

#[test]
fn remove_attributes_and_sub_attributes() {
    let result = patched(
        &user(),
        &USER_RESOURCE,
        json!([
            { "op": "remove", "path": "name.givenName" },
            { "op": "remove", "path": "active" },
            { "op": "remove", "path": "emails[type eq \"home\"]" },
            { "op": "remove", "path": "displayName" }
        ]),
    )
    .unwrap();
    assert_eq!(result["name"], json!({ "familyName": "Jensen" }));
    assert!(result.get("active").is_none());
    assert_eq!(result["emails"].as_array().unwrap().len(), 1);
    let emptied = patched(
        &user(),
        &USER_RESOURCE,
        json!([
            { "op": "remove", "path": "name.givenName" },
            { "op": "remove", "path": "name.familyName" }
        ]),
    )
    .unwrap();
    assert!(emptied.get("name").is_none());
}

#[test]
fn primary_moves_to_the_value_set_primary() {
    let result = patched(&user(), &USER_RESOURCE, json!([
        { "op": "add", "path": "emails", "value": [{ "value": "new@example.com", "primary": true }] }
    ]))
    .unwrap();
    let primaries: Vec<&Value> = result["emails"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["primary"])
        .collect();
    assert_eq!(primaries, [&json!(false), &Value::Null, &json!(true)]);
    let result = patched(
        &user(),
        &USER_RESOURCE,
        json!([
            { "op": "replace", "path": "emails[type eq \"home\"].primary", "value": true }
        ]),
    )
    .unwrap();
    assert_eq!(result["emails"][0]["primary"], false);
    assert_eq!(result["emails"][1]["primary"], true);
    let two = json!([{ "op": "replace", "path": "emails", "value": [
        { "value": "a@x", "primary": true }, { "value": "b@x", "primary": true }
    ] }]);
    assert_eq!(
        refusal(&user(), &USER_RESOURCE, two),
        Some(ScimType::InvalidValue)
    );
}
