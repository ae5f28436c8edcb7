//! Evaluation against resources (RFC 7644 §3.4.2.2).

use serde_json::{json, Value};

use super::*;
use crate::scim::schema::{GROUP_RESOURCE, USER_RESOURCE};
use crate::scim::ENTERPRISE_USER_SCHEMA;

fn bjensen() -> Value {
    json!({
        "schemas": [crate::scim::USER_SCHEMA, ENTERPRISE_USER_SCHEMA],
        "id": "2819c223-7f76-453a-919d-413861904646",
        "externalId": "BJensen",
        "userName": "bjensen@example.com",
        "name": { "familyName": "Jensen", "givenName": "Barbara" },
        "displayName": "Babs Jensen",
        "active": true,
        "emails": [
            { "value": "bjensen@example.com", "type": "work", "primary": true },
            { "value": "babs@jensen.org", "type": "home" }
        ],
        "meta": {
            "resourceType": "User",
            "created": "2010-01-23T04:56:22Z",
            "lastModified": "2011-05-13T04:42:34Z",
            "version": "W/\"3694e05e9dff591\""
        },
        ENTERPRISE_USER_SCHEMA: {
            "employeeNumber": "701984",
            "department": "Tour Operations",
            "manager": { "value": "26118915-6090-4610-87e4-49d8ca9f808d" }
        }
    })
}

fn matches(text: &str) -> bool {
    parse_checked(text, &USER_RESOURCE)
        .unwrap_or_else(|error| panic!("{text}: {error:?}"))
        .matches(&bjensen(), &USER_RESOURCE)
}

#[test]
fn long_chains_do_not_exhaust_the_stack() {
    let chain = vec!["id pr"; 450].join(" or ");
    assert!(chain.len() <= MAX_FILTER_BYTES);
    let filter = parse_checked(&chain, &USER_RESOURCE).unwrap();
    assert!(filter.matches(&bjensen(), &USER_RESOURCE));
    let chain = vec!["id pr"; 400].join(" and ");
    assert!(parse_checked(&chain, &USER_RESOURCE)
        .unwrap()
        .matches(&bjensen(), &USER_RESOURCE));
}

#[test]
fn string_operators() {
    assert!(matches("userName eq \"bjensen@example.com\""));
    assert!(matches("userName eq \"BJENSEN@example.COM\""));
    assert!(!matches("userName ne \"BJENSEN@example.com\""));
    assert!(matches("userName ne \"other\""));
    assert!(matches("userName co \"JENSEN\""));
    assert!(matches("userName sw \"bj\""));
    assert!(matches("userName ew \".com\""));
    assert!(!matches("userName ew \"example\""));
    assert!(matches("userName gt \"a\""));
    assert!(matches("userName ge \"bjensen@example.com\""));
    assert!(matches("userName lt \"c\""));
    assert!(matches("userName le \"bjensen@example.com\""));
    assert!(!matches("userName lt \"b\""));
}

#[test]
fn case_exact_attributes_compare_exactly() {
    assert!(matches("externalId eq \"BJensen\""));
    assert!(!matches("externalId eq \"bjensen\""));
    assert!(matches("id eq \"2819c223-7f76-453a-919d-413861904646\""));
    assert!(!matches("id eq \"2819C223-7F76-453A-919D-413861904646\""));
}

#[test]
fn names_are_case_insensitive_in_the_resource() {
    let resource = json!({ "USERNAME": "x", "Name": { "FamilyName": "J" } });
    let filter = parse("userName eq \"x\" and name.familyName eq \"j\"").unwrap();
    assert!(filter.matches(&resource, &USER_RESOURCE));
}

#[test]
fn multi_valued_attributes_match_any_value() {
    assert!(matches("emails.value eq \"babs@jensen.org\""));
    assert!(matches("emails co \"jensen.org\""));
    assert!(matches("emails.type eq \"home\""));
    assert!(!matches("emails.type eq \"other\""));
    assert!(matches(
        "emails[type eq \"work\" and value co \"@example.com\"]"
    ));
    assert!(!matches(
        "emails[type eq \"home\" and value co \"@example.com\"]"
    ));
    assert!(matches("emails[primary eq true]"));
    assert!(matches("emails[not (primary eq true)]"));
    assert!(!matches("emails ne \"babs@jensen.org\""));
}

#[test]
fn booleans_and_presence() {
    assert!(matches("active eq true"));
    assert!(!matches("active eq false"));
    assert!(matches("active pr"));
    assert!(matches("name.givenName pr"));
    assert!(!matches("name.middleName pr"));
    assert!(matches("emails pr"));
    assert!(matches("emails.primary pr"));
    assert!(!matches("emails.display pr"));
    let empty = json!({ "userName": "", "emails": [], "displayName": null, "name": {} });
    for text in ["userName pr", "emails pr", "displayName pr", "name pr"] {
        assert!(
            !parse(text).unwrap().matches(&empty, &USER_RESOURCE),
            "{text}"
        );
    }
}

#[test]
fn null_compares_as_unassigned() {
    assert!(!matches("displayName eq null"));
    assert!(matches("displayName ne null"));
    assert!(matches("name.middleName eq null"));
    assert!(!matches("name.middleName ne null"));
}

#[test]
fn date_times_compare_chronologically() {
    assert!(matches("meta.lastModified gt \"2011-05-13T04:42:33Z\""));
    assert!(matches(
        "meta.lastModified eq \"2011-05-13T06:42:34+02:00\""
    ));
    assert!(matches("meta.lastModified ge \"2011-05-13T04:42:34Z\""));
    assert!(!matches("meta.lastModified gt \"2011-05-13T04:42:34Z\""));
    assert!(matches("meta.lastModified lt \"2011-05-13T04:42:34.5Z\""));
    assert!(matches("meta.lastModified le \"2012-01-01T00:00:00Z\""));
    assert!(matches("meta.created lt \"2011-01-01T00:00:00-12:00\""));
}

#[test]
fn numbers_compare_numerically() {
    let resource = json!({ "score": 10 });
    assert!(parse("score gt 9.5")
        .unwrap()
        .matches(&resource, &USER_RESOURCE));
    assert!(parse("score eq 10.0")
        .unwrap()
        .matches(&resource, &USER_RESOURCE));
    assert!(!parse("score lt 2")
        .unwrap()
        .matches(&resource, &USER_RESOURCE));
}

#[test]
fn logical_operators_evaluate() {
    assert!(matches("userName eq \"x\" or active eq true"));
    assert!(!matches("userName eq \"x\" and active eq true"));
    assert!(matches("not (userName eq \"x\")"));
    assert!(matches(
        "userName eq \"x\" or active eq true and name.familyName eq \"jensen\""
    ));
    assert!(!matches(
        "(userName eq \"x\" or active eq true) and name.familyName eq \"other\""
    ));
}

#[test]
fn extension_attributes_evaluate() {
    assert!(matches(&format!(
        "{ENTERPRISE_USER_SCHEMA}:department eq \"tour operations\""
    )));
    assert!(matches("department sw \"Tour\""));
    assert!(matches(&format!(
        "{ENTERPRISE_USER_SCHEMA}:manager.value eq \"26118915-6090-4610-87e4-49d8ca9f808d\""
    )));
    assert!(matches("employeeNumber eq \"701984\""));
}

#[test]
fn group_members() {
    let group = json!({
        "displayName": "Tour Guides",
        "members": [{ "value": "2819c223", "type": "User" }, { "value": "902c246b", "type": "User" }]
    });
    let filter = parse_checked("members[value eq \"902c246b\"]", &GROUP_RESOURCE).unwrap();
    assert!(filter.matches(&group, &GROUP_RESOURCE));
    let filter = parse_checked(
        "members eq \"2819c223\" and displayName sw \"tour\"",
        &GROUP_RESOURCE,
    )
    .unwrap();
    assert!(filter.matches(&group, &GROUP_RESOURCE));
}
