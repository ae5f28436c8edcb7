//! What a run must print: on success nothing on stderr (and one JSON object with `--json`), on
//! failure nothing on stdout and a one-line reason with the given exit status.

use std::process::Output;

use serde_json::Value;

/// The run, for assertion messages.
pub fn describe(args: &[&str], out: &Output) -> String {
    format!(
        "tokenctl {}\nstatus: {:?}\nstdout: {}\nstderr: {}",
        args.join(" "),
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

pub fn assert_success(out: &Output, args: &[&str]) {
    assert!(
        out.status.success(),
        "expected success: {}",
        describe(args, out)
    );
    assert!(
        out.stderr.is_empty(),
        "nothing on stderr on success (no progress bar off a terminal): {}",
        describe(args, out)
    );
}

pub fn success_json(out: &Output, args: &[&str]) -> Value {
    assert_success(out, args);
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    assert_eq!(
        text.trim_end().lines().count(),
        1,
        "one JSON value on one line: {}",
        describe(args, out)
    );
    let value: Value = serde_json::from_str(&text).unwrap();
    // An object, or for a listing (`keys list`) an array of objects.
    let listing = value
        .as_array()
        .is_some_and(|items| items.iter().all(Value::is_object));
    assert!(value.is_object() || listing, "{}", describe(args, out));
    value
}

pub fn assert_failure(out: &Output, args: &[&str], code: i32) -> String {
    assert_eq!(out.status.code(), Some(code), "{}", describe(args, out));
    assert!(
        out.stdout.is_empty(),
        "nothing on stdout: {}",
        describe(args, out)
    );
    let stderr = String::from_utf8(out.stderr.clone()).unwrap();
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "a one-line reason: {}",
        describe(args, out)
    );
    assert!(stderr.starts_with("tokenctl: "), "{}", describe(args, out));
    stderr
}

pub fn str_field<'a>(value: &'a Value, key: &str) -> &'a str {
    value[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} in {value}"))
}

/// The value of the `key:` line of a run's readable output.
pub fn text_field(text: &str, key: &str) -> String {
    text.lines()
        .find_map(|line| line.strip_prefix(key)?.strip_prefix(':'))
        .map(|value| value.trim().to_owned())
        .unwrap_or_else(|| panic!("a {key} line in {text:?}"))
}
