use serde_json::{json, Value};

use super::*;
use crate::scim::schema::{GROUP_RESOURCE, USER_RESOURCE};
use crate::scim::{ENTERPRISE_USER_SCHEMA, USER_SCHEMA};

fn user() -> Value {
    json!({
        "schemas": [USER_SCHEMA, ENTERPRISE_USER_SCHEMA],
        "id": "1",
        "externalId": "e1",
        "userName": "bjensen",
        "password": "secret",
        "name": { "familyName": "Jensen", "givenName": "Barbara" },
        "emails": [{ "value": "b@example.com", "type": "work", "primary": true }],
        "active": true,
        "meta": { "resourceType": "User", "lastModified": "2011-05-13T04:42:34Z" },
        ENTERPRISE_USER_SCHEMA: { "department": "Sales", "employeeNumber": "7" }
    })
}

fn list(text: &str) -> Vec<AttrPath> {
    parse_attribute_list(text, &USER_RESOURCE).unwrap()
}

fn keys(value: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    keys
}

#[test]
fn parsing_lists() {
    let paths = list(&format!(
        " userName ,name.givenName,,{ENTERPRISE_USER_SCHEMA}:department, nickName, emails.value"
    ));
    let rendered: Vec<String> = paths.iter().map(ToString::to_string).collect();
    assert_eq!(
        rendered,
        [
            "userName".to_owned(),
            "name.givenName".to_owned(),
            format!("{ENTERPRISE_USER_SCHEMA}:department"),
            "emails.value".to_owned()
        ]
    );
    assert!(list("").is_empty());
    for text in ["user name", "name..x", "emails[type eq \"work\"]", "a.b.c"] {
        assert_eq!(
            parse_attribute_list(text, &USER_RESOURCE)
                .unwrap_err()
                .scim_type,
            Some(ScimType::InvalidValue),
            "{text}"
        );
    }
    assert!(parse_attribute_list(&"a,".repeat(3000), &USER_RESOURCE).is_err());
}

#[test]
fn by_default_all_but_never() {
    let projected = project(&user(), &USER_RESOURCE, &[], &[]);
    assert!(projected.get("password").is_none());
    let mut expected = user();
    expected.as_object_mut().unwrap().remove("password");
    assert_eq!(projected, expected);
}

#[test]
fn attributes_keep_only_those_named_and_the_always_ones() {
    let projected = project(&user(), &USER_RESOURCE, &list("userName,password"), &[]);
    assert_eq!(keys(&projected), ["id", "schemas", "userName"]);
}

#[test]
fn sub_attribute_granularity() {
    let projected = project(
        &user(),
        &USER_RESOURCE,
        &list("name.givenName,emails.value"),
        &[],
    );
    assert_eq!(projected["name"], json!({ "givenName": "Barbara" }));
    assert_eq!(projected["emails"], json!([{ "value": "b@example.com" }]));
    let excluded = project(
        &user(),
        &USER_RESOURCE,
        &[],
        &list("name.givenName,emails.type"),
    );
    assert_eq!(excluded["name"], json!({ "familyName": "Jensen" }));
    assert_eq!(
        excluded["emails"],
        json!([{ "value": "b@example.com", "primary": true }])
    );
}

#[test]
fn excluded_attributes_go_but_not_always_ones() {
    let projected = project(&user(), &USER_RESOURCE, &[], &list("emails,meta,id,active"));
    assert_eq!(
        keys(&projected),
        [
            "externalId",
            "id",
            "name",
            "schemas",
            ENTERPRISE_USER_SCHEMA,
            "userName"
        ]
    );
}

#[test]
fn extension_attributes() {
    let projected = project(
        &user(),
        &USER_RESOURCE,
        &list(&format!("{ENTERPRISE_USER_SCHEMA}:department")),
        &[],
    );
    assert_eq!(
        projected[ENTERPRISE_USER_SCHEMA],
        json!({ "department": "Sales" })
    );
    let bare = project(&user(), &USER_RESOURCE, &list("employeeNumber"), &[]);
    assert_eq!(
        bare[ENTERPRISE_USER_SCHEMA],
        json!({ "employeeNumber": "7" })
    );
    let excluded = project(
        &user(),
        &USER_RESOURCE,
        &[],
        &list("department,employeeNumber"),
    );
    assert!(excluded.get(ENTERPRISE_USER_SCHEMA).is_none());
}

#[test]
fn the_extension_urn_alone() {
    let paths = list(&format!("userName,{ENTERPRISE_USER_SCHEMA}"));
    assert_eq!(
        paths,
        [
            AttrPath::new("userName"),
            AttrPath::schema(ENTERPRISE_USER_SCHEMA)
        ]
    );
    assert_eq!(paths[1].to_string(), ENTERPRISE_USER_SCHEMA);
    assert_eq!(
        list(&ENTERPRISE_USER_SCHEMA.to_ascii_uppercase()),
        [AttrPath::schema(ENTERPRISE_USER_SCHEMA)]
    );
    let only = project(&user(), &USER_RESOURCE, &list(ENTERPRISE_USER_SCHEMA), &[]);
    assert_eq!(keys(&only), ["id", "schemas", ENTERPRISE_USER_SCHEMA]);
    assert_eq!(
        only[ENTERPRISE_USER_SCHEMA],
        json!({ "department": "Sales", "employeeNumber": "7" })
    );
    let with_core = project(&user(), &USER_RESOURCE, &paths, &[]);
    assert_eq!(
        keys(&with_core),
        ["id", "schemas", ENTERPRISE_USER_SCHEMA, "userName"]
    );
    let excluded = project(&user(), &USER_RESOURCE, &[], &list(ENTERPRISE_USER_SCHEMA));
    assert!(excluded.get(ENTERPRISE_USER_SCHEMA).is_none());
    assert_eq!(excluded["userName"], "bjensen");
    let both = project(
        &user(),
        &USER_RESOURCE,
        &list(ENTERPRISE_USER_SCHEMA),
        &list(&format!("{ENTERPRISE_USER_SCHEMA}:department")),
    );
    assert_eq!(
        both[ENTERPRISE_USER_SCHEMA],
        json!({ "employeeNumber": "7" })
    );
    assert!(
        parse_attribute_list(ENTERPRISE_USER_SCHEMA, &GROUP_RESOURCE)
            .unwrap()
            .is_empty()
    );
    assert!(list("urn:ietf:params:scim:schemas:extension:other:2.0:User").is_empty());
}

#[test]
fn attributes_and_excluded_together() {
    let projected = project(
        &user(),
        &USER_RESOURCE,
        &list("userName,name"),
        &list("name.familyName"),
    );
    assert_eq!(keys(&projected), ["id", "name", "schemas", "userName"]);
    assert_eq!(projected["name"], json!({ "givenName": "Barbara" }));
}

#[test]
fn common_attributes_and_groups() {
    let group = json!({
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"],
        "id": "g",
        "displayName": "G",
        "members": [{ "value": "1", "display": "One" }],
        "meta": { "resourceType": "Group" }
    });
    let attributes =
        parse_attribute_list("displayName,meta.resourceType", &GROUP_RESOURCE).unwrap();
    let projected = project(&group, &GROUP_RESOURCE, &attributes, &[]);
    assert_eq!(keys(&projected), ["displayName", "id", "meta", "schemas"]);
    let excluded = parse_attribute_list("members", &GROUP_RESOURCE).unwrap();
    assert!(project(&group, &GROUP_RESOURCE, &[], &excluded)
        .get("members")
        .is_none());
}

#[test]
fn unknown_stored_attributes_are_not_returned() {
    let stored = json!({ "id": "1", "userName": "u", "internalFlag": true });
    assert_eq!(
        project(&stored, &USER_RESOURCE, &[], &[]),
        json!({ "id": "1", "userName": "u" })
    );
}
