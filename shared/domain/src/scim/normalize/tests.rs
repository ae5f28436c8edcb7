use serde_json::{json, Value};

use super::*;
use crate::scim::schema::{GROUP_RESOURCE, USER_RESOURCE};
use crate::scim::{ENTERPRISE_USER_SCHEMA, GROUP_SCHEMA, USER_SCHEMA};

fn refusal(input: &Value, rt: &ResourceType) -> Option<ScimType> {
    normalize(input, rt).err().and_then(|error| error.scim_type)
}

#[test]
fn names_take_the_schema_case_and_unknown_ones_go() {
    let input = json!({
        "schemas": [USER_SCHEMA],
        "USERNAME": "bjensen",
        "Name": { "GIVENNAME": "Barbara", "nickname": "Babs" },
        "emails": [{ "VALUE": "b@example.com", "Type": "work" }],
        "nickName": "Babs",
        "title": "Tour Guide"
    });
    assert_eq!(
        normalize(&input, &USER_RESOURCE).unwrap(),
        json!({
            "schemas": [USER_SCHEMA],
            "userName": "bjensen",
            "name": { "givenName": "Barbara" },
            "emails": [{ "value": "b@example.com", "type": "work" }]
        })
    );
}

#[test]
fn read_only_attributes_are_ignored() {
    let input = json!({
        "userName": "u",
        "id": "client-chosen",
        "meta": { "created": "2010-01-23T04:56:22Z" },
        "externalId": "e1",
        ENTERPRISE_USER_SCHEMA: { "manager": { "value": "m", "displayName": "Boss" } }
    });
    let normalized = normalize(&input, &USER_RESOURCE).unwrap();
    assert!(normalized.get("id").is_none());
    assert!(normalized.get("meta").is_none());
    assert_eq!(normalized["externalId"], "e1");
    assert_eq!(
        normalized[ENTERPRISE_USER_SCHEMA]["manager"],
        json!({ "value": "m" })
    );
    let group = json!({ "displayName": "G", "members": [{ "value": "1", "display": "One" }] });
    assert_eq!(
        normalize(&group, &GROUP_RESOURCE).unwrap()["members"],
        json!([{ "value": "1" }])
    );
}

#[test]
fn the_extension_nested_or_flattened() {
    let nested = json!({
        "userName": "u",
        ENTERPRISE_USER_SCHEMA: { "Department": "Sales", "unknown": 1 }
    });
    let flattened = json!({
        "userName": "u",
        format!("{ENTERPRISE_USER_SCHEMA}:department"): "Sales"
    });
    let expected = json!({
        "schemas": [USER_SCHEMA, ENTERPRISE_USER_SCHEMA],
        "userName": "u",
        ENTERPRISE_USER_SCHEMA: { "department": "Sales" }
    });
    assert_eq!(normalize(&nested, &USER_RESOURCE).unwrap(), expected);
    assert_eq!(normalize(&flattened, &USER_RESOURCE).unwrap(), expected);
    let both = json!({
        "userName": "u",
        ENTERPRISE_USER_SCHEMA: { "employeeNumber": "7" },
        format!("{ENTERPRISE_USER_SCHEMA}:manager.value"): "m"
    });
    assert_eq!(
        normalize(&both, &USER_RESOURCE).unwrap()[ENTERPRISE_USER_SCHEMA],
        json!({ "employeeNumber": "7", "manager": { "value": "m" } })
    );
}

#[test]
fn schemas_name_the_extension_only_with_its_data() {
    let input = json!({
        "schemas": [USER_SCHEMA, ENTERPRISE_USER_SCHEMA],
        "userName": "u",
        ENTERPRISE_USER_SCHEMA: {}
    });
    let normalized = normalize(&input, &USER_RESOURCE).unwrap();
    assert_eq!(normalized["schemas"], json!([USER_SCHEMA]));
    assert!(normalized.get(ENTERPRISE_USER_SCHEMA).is_none());
    let group = normalize(&json!({ "displayName": "G" }), &GROUP_RESOURCE).unwrap();
    assert_eq!(group["schemas"], json!([GROUP_SCHEMA]));
}

#[test]
fn types_are_checked() {
    for input in [
        json!({ "userName": 1 }),
        json!({ "userName": "u", "active": "yes" }),
        json!({ "userName": "u", "emails": { "value": "not-in-an-array" } }),
        json!({ "userName": "u", "emails": [{ "primary": "sometimes" }] }),
        json!({ "userName": "u", "name": ["x"] }),
        json!({ "userName": "u", ENTERPRISE_USER_SCHEMA: "Sales" }),
    ] {
        assert_eq!(
            refusal(&input, &USER_RESOURCE),
            Some(ScimType::InvalidValue),
            "{input}"
        );
    }
    assert_eq!(
        refusal(&json!([1]), &USER_RESOURCE),
        Some(ScimType::InvalidSyntax)
    );
}

#[test]
fn booleans_may_be_strings() {
    let input = json!({ "userName": "u", "active": "False", "emails": [{ "value": "a@b", "primary": "TRUE" }] });
    let normalized = normalize(&input, &USER_RESOURCE).unwrap();
    assert_eq!(normalized["active"], false);
    assert_eq!(normalized["emails"][0]["primary"], true);
}

#[test]
fn required_attributes_must_be_there() {
    assert_eq!(
        refusal(&json!({ "displayName": "x" }), &USER_RESOURCE),
        Some(ScimType::InvalidValue)
    );
    assert_eq!(
        refusal(&json!({ "userName": null }), &USER_RESOURCE),
        Some(ScimType::InvalidValue)
    );
    assert_eq!(
        refusal(&json!({ "userName": "" }), &USER_RESOURCE),
        Some(ScimType::InvalidValue)
    );
    assert_eq!(
        refusal(&json!({ "members": [] }), &GROUP_RESOURCE),
        Some(ScimType::InvalidValue)
    );
}

#[test]
fn at_most_one_primary() {
    let input = json!({ "userName": "u", "emails": [
        { "value": "a@x", "primary": true }, { "value": "b@x", "primary": true }
    ] });
    assert_eq!(
        refusal(&input, &USER_RESOURCE),
        Some(ScimType::InvalidValue)
    );
    let one = json!({ "userName": "u", "emails": [
        { "value": "a@x", "primary": true }, { "value": "b@x", "primary": false }
    ] });
    assert!(normalize(&one, &USER_RESOURCE).is_ok());
}

#[test]
fn null_means_unassigned() {
    let input = json!({ "userName": "u", "displayName": null, "name": { "givenName": null }, "emails": [null] });
    assert_eq!(
        normalize(&input, &USER_RESOURCE).unwrap(),
        json!({ "schemas": [USER_SCHEMA], "userName": "u" })
    );
    assert_eq!(
        without_null(&json!({ "a": null, "b": [1, null, { "c": null, "d": 2 }] })),
        json!({ "b": [1, { "d": 2 }] })
    );
}

#[test]
fn the_password_is_kept_for_the_store() {
    let normalized = normalize(
        &json!({ "userName": "u", "password": "t1meMa$heen" }),
        &USER_RESOURCE,
    )
    .unwrap();
    assert_eq!(normalized["password"], "t1meMa$heen");
}

#[test]
fn the_manager_may_be_its_id_alone() {
    let input = json!({ "userName": "u", ENTERPRISE_USER_SCHEMA: { "manager": "m1" } });
    assert_eq!(
        normalize(&input, &USER_RESOURCE).unwrap()[ENTERPRISE_USER_SCHEMA]["manager"],
        json!({ "value": "m1" })
    );
}

#[test]
fn date_times_are_checked() {
    let attribute = crate::scim::schema::COMMON_ATTRIBUTES[2]
        .sub_attribute("lastModified")
        .unwrap();
    assert!(coerce_value(attribute, &json!("2011-05-13T04:42:34Z")).is_ok());
    assert!(coerce_value(attribute, &json!("13 May 2011")).is_err());
}
