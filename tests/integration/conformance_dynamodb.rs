//! The storage conformance suite against DynamoDB Local, and what only DynamoDB has: the TTL
//! attribute on stored items, the table's TTL setting, table creation, how an unreachable or
//! hung endpoint fails, and which partitions an audit event is stored in. Records come from the suite's own builders.

mod audit_keys;
mod table;
mod ttl;

use crate::support::dynamodb::fresh_table;

token_store_conformance::conformance_suite!(
    fresh_table,
    #[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
);

/// The expansion above registers every suite function, once: the test binary's own list of its
/// tests holds exactly the suite's functions under this module.
#[test]
fn the_expansion_registers_every_suite_function() {
    let listing = std::process::Command::new(std::env::current_exe().expect("the test binary"))
        .args(["--list", "conformance_dynamodb::"])
        .output()
        .expect("list the test binary's tests");
    assert!(listing.status.success(), "--list failed: {listing:?}");
    let mut registered: Vec<String> = String::from_utf8(listing.stdout)
        .expect("UTF-8")
        .lines()
        .filter_map(|line| line.strip_suffix(": test"))
        .filter_map(|name| name.strip_prefix("conformance_dynamodb::"))
        .map(str::to_owned)
        .filter(|name| !name.contains("::"))
        .collect();
    registered.sort();
    let suite = token_store_conformance::registry::suite_functions();
    // The module's own DynamoDB-only tests are not the suite's.
    registered.retain(|name| suite.contains(name));
    assert_eq!(
        registered, suite,
        "conformance_dynamodb registers every suite function"
    );
}
