//! The README's configuration table against the tree: every variable the configuration reads
//! has a row, every row names a variable it reads, and a default written as one literal is the
//! code's default (the configuration with the variable set to it equals the one without).

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use super::Config;

const README: &str = include_str!("../../../../README.md");

/// The variables [`Config::from_lookup`] asks for.
pub(super) fn variables_read() -> BTreeSet<String> {
    let asked = RefCell::new(BTreeSet::new());
    Config::from_lookup(|name| {
        asked.borrow_mut().insert(name.to_owned());
        None
    })
    .expect("the defaults are valid");
    asked.into_inner()
}

/// Each row's variables (every backticked name of its first cell) and its default cell.
fn readme_rows() -> BTreeMap<String, String> {
    let table = README
        .split_once("\n## Configuration\n")
        .and_then(|(_, rest)| rest.split("\n## ").next())
        .expect("a Configuration section");
    let mut rows = BTreeMap::new();
    for line in table.lines().filter(|line| line.starts_with("| `")) {
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        assert_eq!(cells.len(), 3, "variable | meaning | default: {line}");
        for name in cells[0].split('`').skip(1).step_by(2) {
            rows.insert(name.to_owned(), cells[2].to_owned());
        }
    }
    rows
}

/// A default written as one literal (`` `180` ``), without a placeholder such as `$PORT`.
fn literal(cell: &str) -> Option<&str> {
    let inner = cell.strip_prefix('`')?.strip_suffix('`')?;
    (!inner.contains('`') && !inner.contains('$')).then_some(inner)
}

#[test]
fn every_variable_read_has_a_row_and_every_row_is_read() {
    let read = variables_read();
    let rows = readme_rows();
    assert!(read.len() > 30, "{read:?}");
    let missing: Vec<&String> = read
        .iter()
        .filter(|name| !rows.contains_key(*name))
        .collect();
    assert!(
        missing.is_empty(),
        "read but not in README's table: {missing:?}"
    );
    let stale: Vec<&String> = rows.keys().filter(|name| !read.contains(*name)).collect();
    assert!(
        stale.is_empty(),
        "in README's table but never read: {stale:?}"
    );
}

#[test]
fn every_literal_default_of_the_readme_is_the_codes() {
    let unset = format!("{:?}", Config::from_lookup(|_| None).unwrap());
    let mut checked = 0;
    for (name, default) in readme_rows() {
        assert!(!default.is_empty(), "{name} has no default in README");
        if name == "RUST_LOG" {
            let first = default.split('`').nth(1);
            assert_eq!(first, Some(super::DEFAULT_LOG_DIRECTIVES), "{name}");
            continue;
        }
        let Some(value) = literal(&default) else {
            continue;
        };
        let set = Config::from_lookup(|asked| (asked == name).then(|| value.to_owned()))
            .unwrap_or_else(|e| panic!("{name}={value}: {e}"));
        assert_eq!(
            format!("{set:?}"),
            unset,
            "README's default {value} of {name} is not the code's"
        );
        checked += 1;
    }
    assert!(checked > 20, "{checked} literal defaults checked");
}
