//! Mangled input never panics: every one-character insertion, deletion and substitution of a
//! few realistic filters and PATCH paths is parsed, checked and evaluated.

use serde_json::json;

use super::*;
use crate::scim::path;
use crate::scim::schema::{GROUP_RESOURCE, USER_RESOURCE};

const SAMPLES: &[&str] = &[
    "userName eq \"bjensen\" and not (emails[type eq \"work\" or value co \"@x\"])",
    "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.value eq \"a\\u00e9\"",
    "meta.lastModified gt \"2011-05-13T04:42:34Z\" or active eq true and x ge -1.5e3",
    "members[value eq \"2819c223\"].display",
];

const NOISE: &[char] = &[
    '(', ')', '[', ']', '"', '\\', '.', ':', ' ', 'x', '1', '-', 'é', '\u{0}', '$',
];

fn variants(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    for at in 0..=chars.len() {
        let (head, tail) = chars.split_at(at);
        let head: String = head.iter().collect();
        let tail: String = tail.iter().collect();
        if let Some(rest) = tail.get(tail.chars().next().map_or(0, char::len_utf8)..) {
            out.push(format!("{head}{rest}"));
            for noise in NOISE {
                out.push(format!("{head}{noise}{rest}"));
            }
        }
        for noise in NOISE {
            out.push(format!("{head}{noise}{tail}"));
        }
    }
    out
}

#[test]
fn mangled_filters_and_paths_never_panic() {
    let resource = json!({
        "userName": "bjensen",
        "emails": [{ "value": "a@x", "type": "work" }, "odd", 3, null],
        "name": "not an object",
        "meta": { "lastModified": 5 },
        "members": { "value": "2819c223" }
    });
    let mut parsed = 0;
    for sample in SAMPLES {
        for text in variants(sample) {
            if let Ok(filter) = parse(&text) {
                parsed += 1;
                let _ = filter.matches(&resource, &USER_RESOURCE);
                let _ = filter.matches(&resource, &GROUP_RESOURCE);
                let _ = filter.exact_match();
                let _ = filter.to_string();
            }
            if let Err(error) = parse_checked(&text, &USER_RESOURCE) {
                assert_eq!(error.status, 400);
            }
            let _ = path::parse(&text, &USER_RESOURCE);
            let _ = path::parse(&text, &GROUP_RESOURCE);
        }
    }
    assert!(parsed > 100);
}
