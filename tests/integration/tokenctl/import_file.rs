//! The legacy-token import file the tests feed the tool: valid lines of every kind, and invalid
//! and blank lines at fixed line numbers with the reason the report must give for each.

use std::io::Write;
use std::path::Path;

use serde_json::Value;
use token_domain::clock::UnixTime;
use token_store_conformance::records::now;

pub const IMPORT_LINES: usize = 3_000;
pub const USER: &str = "6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b";
pub const COMPANY: &str = "0e8f3c4a-1b2c-4d5e-8f90-a1b2c3d4e5f6";
pub const SKIPPED_LINES: [u64; 7] = [5, 9, 13, 17, 21, 25, 27];
pub const BLANK_LINES: u64 = 2;

pub fn old_token(line: usize) -> String {
    format!("old-refresh-token-{line:07}-Zm9vYmFy")
}

/// A valid line; every 10th is a WSAdmin token, every 7th a company's, every 3rd expires.
pub fn valid_line(line: usize, expires_at: UnixTime) -> String {
    let mut value = serde_json::json!({
        "token": old_token(line),
        "consumer_key": "qyprd-OLD",
        "principal_type": if line % 7 == 0 { "company" } else { "user" },
        "principal_id": if line % 7 == 0 { COMPANY } else { USER },
        "scopes": ["com.example.read", "com.example.write"],
        "wsadmin": line % 10 == 0,
    });
    if line % 10 == 0 {
        value["company_id"] = COMPANY.into();
    }
    if line % 3 == 0 {
        value["expires_at"] = expires_at.into();
    }
    value.to_string()
}

/// Invalid and blank lines at fixed line numbers, with the reason the report must give.
pub fn special_line(line: usize) -> Option<(String, Option<&'static str>)> {
    let valid: Value = serde_json::from_str(&valid_line(line, now() + 86_400)).unwrap();
    let with = |key: &str, v: Value| {
        let mut value = valid.clone();
        value[key] = v;
        value.to_string()
    };
    Some(match line {
        5 => ("this is not json".to_owned(), Some("not a JSON object")),
        9 => (
            with("principal_id", "nope".into()),
            Some("principal id must be a UUID"),
        ),
        13 => (
            {
                let mut value = valid.clone();
                value["wsadmin"] = true.into();
                value.as_object_mut().unwrap().remove("company_id");
                value.to_string()
            },
            Some("company_id is required when wsadmin is true"),
        ),
        17 => (
            with("principal_type", "application".into()),
            Some("principal_type"),
        ),
        21 => (with("expires_at", (now() - 10).into()), Some("expired")),
        25 => (
            {
                let mut value = valid.clone();
                value.as_object_mut().unwrap().remove("wsadmin");
                value.to_string()
            },
            Some("missing field `wsadmin`"),
        ),
        27 => (
            with("scopes", serde_json::json!(["two words"])),
            Some("scopes"),
        ),
        29 => (String::new(), None),
        33 => ("   ".to_owned(), None),
        _ => return None,
    })
}

pub fn write_import_file(path: &Path, expires_at: UnixTime) {
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for line in 1..=IMPORT_LINES {
        let text = match special_line(line) {
            Some((text, _)) => text,
            None => valid_line(line, expires_at),
        };
        writeln!(file, "{text}").unwrap();
    }
    file.flush().unwrap();
}

pub fn valid_line_numbers() -> impl Iterator<Item = usize> {
    (1..=IMPORT_LINES).filter(|line| special_line(*line).is_none())
}
