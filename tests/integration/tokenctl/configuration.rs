//! `table create` on SQLite, and how configuration errors and unreachable stores fail: a
//! non-zero exit status and a one-line reason.

use crate::support::ports::RefusingPort;
use token_store_conformance::records::now;

use super::import_file::valid_line;
use super::output::{assert_failure, success_json};
use super::target::Target;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_table_create_succeeds_and_is_idempotent() {
    let t = Target::sqlite().await;
    for _ in 0..2 {
        let out = t.json(&["table", "create"]);
        assert_eq!(out["store"], "sqlite");
    }
    assert!(t.dir.path().join("tokens.sqlite3").is_file());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configuration_errors_and_unreachable_stores_exit_non_zero() {
    let t = Target::sqlite().await;

    // A bad variable names itself; a flag overrides it.
    let out = t
        .command()
        .args(["table", "create"])
        .env("STORE", "postgres")
        .output()
        .unwrap();
    let reason = assert_failure(&out, &["table", "create"], 2);
    assert!(reason.contains("STORE"), "{reason}");
    let out = t
        .command()
        .args(["--json", "--store", "sqlite", "table", "create"])
        .env("STORE", "postgres")
        .output()
        .unwrap();
    assert_eq!(success_json(&out, &["table", "create"])["store"], "sqlite");

    // --data-dir overrides DATA_DIR.
    let elsewhere = t.dir.path().join("elsewhere");
    t.json(&[
        "--data-dir",
        &elsewhere.display().to_string(),
        "companies",
        "create",
        "--name",
        "E",
    ]);
    assert!(elsewhere.join("tokens.sqlite3").is_file());

    // The embedded store cannot be opened.
    let blocker = t.dir.path().join("a-file");
    std::fs::write(&blocker, "").unwrap();
    let data_dir = blocker.join("data").display().to_string();
    t.fails(
        &[
            "--data-dir",
            &data_dir,
            "companies",
            "create",
            "--name",
            "X",
        ],
        1,
    );

    // DynamoDB that does not answer: status 5, "temporarily unavailable".
    let refusing = RefusingPort::bind();
    let dead = &refusing.url("http");
    for args in [
        vec![
            "--store",
            "dynamodb",
            "--dynamodb-endpoint",
            dead,
            "--table-name",
            "t",
            "clients",
            "create",
            "--name",
            "X",
        ],
        vec![
            "--store",
            "dynamodb",
            "--dynamodb-endpoint",
            dead,
            "table",
            "create",
        ],
    ] {
        let reason = t.fails(&args, 5);
        assert!(reason.contains("unavailable"), "{reason}");
    }
    let file = t.dir.path().join("one.jsonl");
    std::fs::write(&file, valid_line(1, now() + 60) + "\n").unwrap();
    t.fails(
        &[
            "--store",
            "dynamodb",
            "--dynamodb-endpoint",
            dead,
            "legacy-tokens",
            "import",
            &file.display().to_string(),
        ],
        5,
    );
}
