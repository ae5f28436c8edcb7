use serde_json::{json, Value};

use super::*;
use crate::scim::schema::{GROUP_RESOURCE, USER_RESOURCE};
use crate::scim::{ScimType, ENTERPRISE_USER_SCHEMA};

fn path(name: &str) -> AttrPath {
    AttrPath::parse(name).unwrap()
}

fn cmp(name: &str, op: CompareOp, value: Value) -> Filter {
    Filter::Compare(path(name), op, value)
}

fn boxed(filter: Filter) -> Box<Filter> {
    Box::new(filter)
}

fn kind(text: &str) -> Option<ScimType> {
    parse(text).err().and_then(|error| error.scim_type)
}

fn checked_kind(text: &str) -> Option<ScimType> {
    parse_checked(text, &USER_RESOURCE)
        .err()
        .and_then(|error| error.scim_type)
}

#[test]
fn every_operator_parses() {
    for (text, op) in [
        ("eq", CompareOp::Eq),
        ("ne", CompareOp::Ne),
        ("co", CompareOp::Co),
        ("sw", CompareOp::Sw),
        ("ew", CompareOp::Ew),
        ("gt", CompareOp::Gt),
        ("ge", CompareOp::Ge),
        ("lt", CompareOp::Lt),
        ("le", CompareOp::Le),
    ] {
        assert_eq!(
            parse(&format!("userName {text} \"x\"")).unwrap(),
            cmp("userName", op, json!("x"))
        );
        assert_eq!(op.as_str(), text);
    }
    assert_eq!(parse("title pr").unwrap(), Filter::Present(path("title")));
}

#[test]
fn operators_and_keywords_are_case_insensitive() {
    assert_eq!(
        parse("userName EQ \"x\" AND title Pr").unwrap(),
        Filter::And(
            boxed(cmp("userName", CompareOp::Eq, json!("x"))),
            boxed(Filter::Present(path("title")))
        )
    );
    assert!(parse("NOT (a Eq 1) Or b PR").is_ok());
}

#[test]
fn and_binds_tighter_than_or() {
    let a = cmp("a", CompareOp::Eq, json!(1));
    let b = cmp("b", CompareOp::Eq, json!(2));
    let c = cmp("c", CompareOp::Eq, json!(3));
    assert_eq!(
        parse("a eq 1 or b eq 2 and c eq 3").unwrap(),
        Filter::Or(
            boxed(a.clone()),
            boxed(Filter::And(boxed(b.clone()), boxed(c.clone())))
        )
    );
    assert_eq!(
        parse("a eq 1 and b eq 2 or c eq 3").unwrap(),
        Filter::Or(
            boxed(Filter::And(boxed(a.clone()), boxed(b.clone()))),
            boxed(c.clone())
        )
    );
    assert_eq!(
        parse("(a eq 1 or b eq 2) and c eq 3").unwrap(),
        Filter::And(boxed(Filter::Or(boxed(a), boxed(b))), boxed(c))
    );
}

#[test]
fn not_takes_a_parenthesized_filter() {
    assert_eq!(
        parse("not (a eq 1)").unwrap(),
        Filter::Not(boxed(cmp("a", CompareOp::Eq, json!(1))))
    );
    assert_eq!(
        parse("not(a eq 1) and b pr").unwrap(),
        Filter::And(
            boxed(Filter::Not(boxed(cmp("a", CompareOp::Eq, json!(1))))),
            boxed(Filter::Present(path("b")))
        )
    );
    assert_eq!(kind("not a eq 1"), Some(ScimType::InvalidFilter));
}

#[test]
fn nested_parentheses() {
    assert_eq!(
        parse("((((a eq 1))))").unwrap(),
        cmp("a", CompareOp::Eq, json!(1))
    );
    assert!(parse("(a eq 1 and (b eq 2 or (c eq 3 and not (d pr))))").is_ok());
}

#[test]
fn value_paths() {
    assert_eq!(
        parse("emails[type eq \"work\" and value co \"@example.com\"]").unwrap(),
        Filter::ValuePath(
            path("emails"),
            boxed(Filter::And(
                boxed(cmp("type", CompareOp::Eq, json!("work"))),
                boxed(cmp("value", CompareOp::Co, json!("@example.com")))
            ))
        )
    );
    assert!(parse(
        "userType eq \"Employee\" and emails[type eq \"work\" and value co \"@example.com\"]"
    )
    .is_ok());
    assert_eq!(
        kind("emails[type eq \"work\" and x[y eq 1]]"),
        Some(ScimType::InvalidFilter)
    );
    assert_eq!(
        kind("emails[type eq \"work\""),
        Some(ScimType::InvalidFilter)
    );
}

#[test]
fn urn_paths() {
    let filter = parse(&format!("{ENTERPRISE_USER_SCHEMA}:department eq \"Sales\"")).unwrap();
    let expected = AttrPath {
        urn: Some(ENTERPRISE_USER_SCHEMA.to_owned()),
        name: "department".to_owned(),
        sub: None,
    };
    assert_eq!(
        filter,
        Filter::Compare(expected.clone(), CompareOp::Eq, json!("Sales"))
    );
    assert_eq!(
        expected.to_string(),
        format!("{ENTERPRISE_USER_SCHEMA}:department")
    );
    let manager = parse(&format!("{ENTERPRISE_USER_SCHEMA}:manager.value eq \"x\"")).unwrap();
    let Filter::Compare(manager, _, _) = manager else {
        panic!("not a comparison")
    };
    assert_eq!(manager.urn.as_deref(), Some(ENTERPRISE_USER_SCHEMA));
    assert_eq!(manager.name, "manager");
    assert_eq!(manager.sub.as_deref(), Some("value"));
    assert_eq!(
        manager.to_string(),
        format!("{ENTERPRISE_USER_SCHEMA}:manager.value")
    );
}

#[test]
fn compare_values_are_json_literals() {
    let value = |text: &str| match parse(&format!("a eq {text}")).unwrap() {
        Filter::Compare(_, _, value) => value,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        value("\"a \\\"quoted\\\" \\u00e9 \\\\ \\n\""),
        json!("a \"quoted\" é \\ \n")
    );
    assert_eq!(value("42"), json!(42));
    assert_eq!(value("-1.5e3"), json!(-1500.0));
    assert_eq!(value("true"), json!(true));
    assert_eq!(value("false"), json!(false));
    assert_eq!(value("null"), Value::Null);
    assert_eq!(value("\"\""), json!(""));
}

#[test]
fn parse_errors_are_invalid_filter() {
    for text in [
        "",
        "userName eq \"unterminated",
        "userName eq",
        "userName",
        "userName eq \"x\" trailing",
        "userName eq \"x\" and",
        "or userName eq \"x\"",
        "userName zz \"x\"",
        "userName eq bare",
        "userName eq \"bad \\q escape\"",
        "userName eq 1.2.3",
        "(userName eq \"x\"",
        "userName eq \"x\")",
        "not userName eq \"x\"",
        "not",
        "emails[]",
        "emails]",
        "9name eq 1",
        "name..x eq 1",
        "name.a.b eq 1",
        "userName eq \"x\" # comment",
        "userName eq 'single'",
    ] {
        assert_eq!(kind(text), Some(ScimType::InvalidFilter), "{text:?}");
    }
}

#[test]
fn depth_is_limited_to_32() {
    let nested = |depth: usize| format!("{}a eq 1{}", "(".repeat(depth), ")".repeat(depth));
    assert!(parse(&nested(MAX_FILTER_DEPTH)).is_ok());
    assert_eq!(
        kind(&nested(MAX_FILTER_DEPTH + 1)),
        Some(ScimType::InvalidFilter)
    );
    let nots = format!("{}a eq 1{}", "not (".repeat(33), ")".repeat(33));
    assert_eq!(kind(&nots), Some(ScimType::InvalidFilter));
    let deep_value = format!("{}emails[value eq 1]{}", "(".repeat(32), ")".repeat(32));
    assert_eq!(kind(&deep_value), Some(ScimType::InvalidFilter));
}

#[test]
fn length_is_limited_to_4096_bytes() {
    let padded = |len: usize| {
        let head = "userName eq \"";
        format!("{head}{}\"", "x".repeat(len - head.len() - 1))
    };
    assert_eq!(padded(MAX_FILTER_BYTES).len(), MAX_FILTER_BYTES);
    assert!(parse(&padded(MAX_FILTER_BYTES)).is_ok());
    let error = parse(&padded(MAX_FILTER_BYTES + 1)).unwrap_err();
    assert_eq!(error.scim_type, Some(ScimType::InvalidFilter));
    assert!(error.detail.len() < 200);
}

#[test]
fn errors_echo_at_most_100_characters() {
    let long = format!("userName eq \"x\" {}", "y".repeat(500));
    let error = parse(&long).unwrap_err();
    assert!(error.detail.chars().filter(|c| *c == 'y').count() <= 100);
    let error =
        parse_checked(&format!("{} eq \"x\"", "z".repeat(300)), &USER_RESOURCE).unwrap_err();
    assert!(error.detail.chars().filter(|c| *c == 'z').count() <= 100);
}

#[test]
fn checked_filters_know_the_attributes() {
    assert!(parse_checked("userName eq \"x\"", &USER_RESOURCE).is_ok());
    assert!(parse_checked("USERNAME eq \"x\"", &USER_RESOURCE).is_ok());
    assert!(parse_checked("members[value eq \"x\"]", &GROUP_RESOURCE).is_ok());
    assert!(parse_checked(
        "id eq \"x\" or externalId eq \"y\" or meta.created pr",
        &GROUP_RESOURCE
    )
    .is_ok());
    assert!(parse_checked("department eq \"x\"", &USER_RESOURCE).is_ok());
    assert!(parse_checked("name[givenName eq \"x\"]", &USER_RESOURCE).is_ok());
    assert!(parse_checked(
        &format!("{}:userName eq \"x\"", crate::scim::USER_SCHEMA),
        &USER_RESOURCE
    )
    .is_ok());
    for text in [
        "nickName eq \"x\"",
        "name.nickName eq \"x\"",
        "userName.sub eq \"x\"",
        "emails[nothing eq \"x\"]",
        "emails[value.x eq \"x\"]",
        "urn:example:unknown:department eq \"x\"",
        "department eq \"x\" and members pr",
    ] {
        assert_eq!(checked_kind(text), Some(ScimType::InvalidFilter), "{text}");
    }
    assert_eq!(
        parse_checked("userName eq \"x\"", &GROUP_RESOURCE)
            .unwrap_err()
            .scim_type,
        Some(ScimType::InvalidFilter)
    );
}

#[test]
fn checked_filters_refuse_meaningless_operators() {
    for text in [
        "active gt true",
        "active co \"t\"",
        "active eq \"true\"",
        "name eq \"x\"",
        "name gt \"x\"",
        "manager eq \"x\"",
        "meta.lastModified co \"2011\"",
        "meta.lastModified gt \"yesterday\"",
        "emails.primary sw \"t\"",
        "userName gt 3",
        "userName eq true",
        "userName gt null",
    ] {
        assert_eq!(checked_kind(text), Some(ScimType::InvalidFilter), "{text}");
    }
    for text in [
        "active eq true",
        "active ne false",
        "emails co \"@example.com\"",
        "emails.type eq \"work\"",
        "userName gt \"a\"",
        "meta.lastModified gt \"2011-05-13T04:42:34Z\"",
        "userName eq null",
        "name pr",
        "emails pr",
    ] {
        assert!(parse_checked(text, &USER_RESOURCE).is_ok(), "{text}");
    }
}

#[test]
fn exact_matches_for_the_indexes() {
    let exact = |text: &str| {
        parse(text)
            .unwrap()
            .exact_match()
            .map(|(a, v)| (a, v.to_owned()))
    };
    assert_eq!(
        exact("userName eq \"bjensen\""),
        Some((IndexedAttribute::UserName, "bjensen".to_owned()))
    );
    assert_eq!(
        exact("USERNAME EQ \"b\""),
        Some((IndexedAttribute::UserName, "b".to_owned()))
    );
    assert_eq!(
        exact("externalId eq \"e\""),
        Some((IndexedAttribute::ExternalId, "e".to_owned()))
    );
    assert_eq!(
        exact("emails eq \"a@b\""),
        Some((IndexedAttribute::Email, "a@b".to_owned()))
    );
    assert_eq!(
        exact("emails.value eq \"a@b\""),
        Some((IndexedAttribute::Email, "a@b".to_owned()))
    );
    assert_eq!(
        exact("emails[value eq \"a@b\"]"),
        Some((IndexedAttribute::Email, "a@b".to_owned()))
    );
    assert_eq!(
        exact("id eq \"1\""),
        Some((IndexedAttribute::Id, "1".to_owned()))
    );
    assert_eq!(
        exact("displayName eq \"G\""),
        Some((IndexedAttribute::DisplayName, "G".to_owned()))
    );
    assert_eq!(
        exact(&format!("{}:userName eq \"u\"", crate::scim::USER_SCHEMA)),
        Some((IndexedAttribute::UserName, "u".to_owned()))
    );
    for text in [
        "userName ne \"b\"",
        "userName co \"b\"",
        "userName eq 1",
        "userName eq \"a\" and id eq \"b\"",
        "emails.type eq \"work\"",
        "emails[type eq \"work\"]",
        "not (userName eq \"b\")",
        "name.givenName eq \"b\"",
        "department eq \"b\"",
    ] {
        assert_eq!(exact(text), None, "{text}");
    }
}
