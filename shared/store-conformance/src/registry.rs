//! Which suite functions exist and which ones [`conformance_suite!`](crate::conformance_suite)
//! registers, both read from the sources in this folder at run time, so that a new file or a
//! function left out of the macro's list is noticed rather than silently never run. A backend's
//! own tests use [`suite_functions`] to check that its expansion registers every one of them.

use std::path::{Path, PathBuf};

/// The suite's folder, in the source tree the crate was built from.
fn folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// The modules `lib.rs` declares: `(name, is_suite)`, where the private ones hold suite functions
/// and the `pub` ones hold helpers (records, fixtures, this registry).
fn declared_modules() -> Vec<(String, bool)> {
    read(&folder().join("lib.rs"))
        .lines()
        .filter_map(|line| {
            let (rest, is_suite) = match line.strip_prefix("pub mod ") {
                Some(rest) => (rest, false),
                None => (line.strip_prefix("mod ")?, true),
            };
            Some((rest.strip_suffix(';')?.to_owned(), is_suite))
        })
        .collect()
}

/// Every top-level `pub async fn` of the suite's files, sorted. Panics when a `.rs` file of the
/// folder is not declared in `lib.rs` (it would not even be compiled).
pub fn suite_functions() -> Vec<String> {
    let modules = declared_modules();
    let mut names = Vec::new();
    for entry in std::fs::read_dir(folder()).expect("read the conformance folder") {
        let path = entry.expect("a folder entry").path();
        let Some(stem) = path
            .file_stem()
            .and_then(|s| s.to_str())
            .filter(|_| path.extension().is_some_and(|e| e == "rs"))
        else {
            continue;
        };
        if stem == "lib" {
            continue;
        }
        let is_suite = modules
            .iter()
            .find(|(name, _)| name == stem)
            .unwrap_or_else(|| panic!("{} is not declared in lib.rs", path.display()))
            .1;
        if !is_suite {
            continue;
        }
        names.extend(
            read(&path)
                .lines()
                .filter_map(|line| line.strip_prefix("pub async fn "))
                .filter_map(|rest| rest.split('(').next())
                .map(str::to_owned),
        );
    }
    names.sort();
    names
}

/// The names the macro's first rule lists, sorted.
pub fn registered_functions() -> Vec<String> {
    let source = read(&folder().join("lib.rs"));
    let (_, macro_part) = source
        .split_once("macro_rules! conformance_suite")
        .expect("the macro is defined in lib.rs");
    let (macro_part, _) = macro_part
        .split_once("(@tests $factory:path;")
        .expect("the macro lists the functions before its second rule");
    let mut names: Vec<String> = macro_part
        .lines()
        .map(str::trim)
        .filter_map(|line| line.strip_suffix(','))
        .filter(|name| {
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        })
        .map(str::to_owned)
        .collect();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The macro's list and the suite's functions must not drift apart: a suite function
    /// missing from the macro would silently never run.
    #[test]
    fn every_suite_function_is_registered() {
        let defined = suite_functions();
        assert!(
            defined.len() >= 35,
            "the suite has at least 35 functions: {defined:?}"
        );
        let mut unique = defined.clone();
        unique.dedup();
        assert_eq!(unique, defined, "suite function names are unique");
        assert_eq!(
            registered_functions(),
            defined,
            "conformance_suite! lists exactly the suite's functions"
        );
    }
}
