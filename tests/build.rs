//! Makes an explicit DynamoDB opt-out visible: with `SKIP_DYNAMODB=1` (and no `DYNAMODB_ENDPOINT`)
//! the tests crate is built with `cfg(skip_dynamodb)`, and the DynamoDB tests carry
//! `#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]`, so the harness lists them as
//! ignored instead of reporting a pass for a test that never ran. CI never honours the opt-out.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(skip_dynamodb)");
    for var in ["SKIP_DYNAMODB", "DYNAMODB_ENDPOINT", "CI"] {
        println!("cargo::rerun-if-env-changed={var}");
    }
    let set = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let skip_requested = set("SKIP_DYNAMODB").as_deref() == Some("1");
    let in_ci = set("CI").is_some_and(|v| v != "false" && v != "0");
    if !skip_requested {
        return;
    }
    if in_ci {
        // The same refusal as `support::dynamodb::endpoint`, earlier.
        println!(
            "cargo::warning=SKIP_DYNAMODB=1 is ignored in CI: the DynamoDB suites always run there"
        );
        return;
    }
    if set("DYNAMODB_ENDPOINT").is_none() {
        println!("cargo::rustc-cfg=skip_dynamodb");
    }
}
