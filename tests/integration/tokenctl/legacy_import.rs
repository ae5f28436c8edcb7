//! `legacy-tokens import`: counts and reasons in the report, every valid line readable by its
//! token's hash and no token in clear, re-runs that change nothing, standard input, and a
//! million-line file imported in bounded memory.

use std::io::Write;
use std::path::Path;

use crate::support::stored_data;
use futures::stream::{self, StreamExt};
use serde_json::Value;
use token_domain::clock::UnixTime;
use token_domain::secrets::TokenHash;
use token_domain::PrincipalType;
use token_store_conformance::records::now;

use super::import_file::*;
use super::output::{describe, str_field, success_json};
use super::target::{tokenctl, Backend, Target, CONFIG_VARS};

pub async fn legacy_token_import(t: Target) {
    let expires_at = now() + 30 * 86_400;
    let path = t.dir.path().join("legacy-tokens.jsonl");
    write_import_file(&path, expires_at);
    let file = path.display().to_string();
    let imported = (IMPORT_LINES - SKIPPED_LINES.len()) as u64 - BLANK_LINES;

    let started = std::time::Instant::now();
    let report = t.json(&["legacy-tokens", "import", &file]);
    let wall_clock = started.elapsed().as_secs_f64();
    assert_eq!(report["lines_read"], IMPORT_LINES as u64);
    assert_eq!(report["imported"], imported);
    assert_eq!(report["skipped"], SKIPPED_LINES.len() as u64);
    assert_eq!(report["blank"], BLANK_LINES);
    assert_eq!(report["skipped_lines_truncated"], false);
    // The tool times its own work: something, and no more than the run took from outside.
    let elapsed = report["elapsed_seconds"].as_f64().expect("elapsed_seconds");
    assert!(
        elapsed > 0.0 && elapsed <= wall_clock,
        "elapsed_seconds {elapsed} outside (0, {wall_clock}]"
    );
    let skipped = report["skipped_lines"].as_array().unwrap();
    let numbers: Vec<u64> = skipped
        .iter()
        .map(|s| s["line"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, SKIPPED_LINES);
    for entry in skipped {
        let line = entry["line"].as_u64().unwrap() as usize;
        let expected = special_line(line).unwrap().1.unwrap();
        let reason = str_field(entry, "reason");
        assert!(
            reason.contains(expected),
            "line {line}: {reason:?} lacks {expected:?}"
        );
        assert!(!reason.contains(&old_token(line)), "a reason shows a token");
    }

    // Every valid line is readable by its token's hash, with its fields; the token itself is
    // stored nowhere.
    check_imported(&t, expires_at, 1).await;
    assert!(
        t.stored_anywhere(&TokenHash::of(&old_token(1)).to_hex())
            .await
    );
    for line in [1, 10, 14] {
        // `old_token` pads to 7 digits, so no token is a prefix of another.
        assert!(
            !t.stored_anywhere(&old_token(line)).await,
            "line {line} in clear"
        );
    }
    assert!(!is_imported(&t, 9).await, "a skipped line is not imported");

    // A re-run: same counts, and still one record per token.
    let again = t.json(&["legacy-tokens", "import", &file]);
    for key in [
        "lines_read",
        "imported",
        "skipped",
        "blank",
        "skipped_lines",
    ] {
        assert_eq!(again[key], report[key], "{key}");
    }
    if let Backend::Dynamo(store) = &t.backend {
        let legacy_items = stored_data::scan_table(store)
            .await
            .iter()
            .filter(|item| {
                item.get("sk")
                    .and_then(|v| v.as_s().ok())
                    .map(String::as_str)
                    == Some("LEGACY")
            })
            .count() as u64;
        assert_eq!(legacy_items, imported, "no duplicates after a re-import");
    }
    check_imported(&t, expires_at, 7).await;

    // The readable summary lists skipped lines with their numbers.
    let text = t.text(&["legacy-tokens", "import", &file]);
    assert!(
        text.contains(&format!(
            "Imported {imported} tokens from {IMPORT_LINES} lines"
        )),
        "{text}"
    );
    assert!(text.contains("Skipped 7 invalid lines"), "{text}");
    assert!(
        text.contains("  line 9: principal id must be a UUID"),
        "{text}"
    );

    // From standard input.
    let out = t
        .command()
        .args(["--json", "legacy-tokens", "import", "-"])
        .write_stdin(format!("{}\n\n{{}}\n", valid_line(4_000_001, expires_at)))
        .output()
        .unwrap();
    let report = success_json(&out, &["legacy-tokens", "import", "-"]);
    assert_eq!(
        (
            &report["lines_read"],
            &report["imported"],
            &report["skipped"],
            &report["blank"]
        ),
        (&3.into(), &1.into(), &1.into(), &1.into())
    );
    assert_eq!(report["skipped_lines"][0]["line"], 3);
    assert!(is_imported(&t, 4_000_001).await);

    // A file that cannot be read.
    let missing = t.dir.path().join("missing.jsonl").display().to_string();
    let reason = t.fails(&["legacy-tokens", "import", &missing], 1);
    assert!(reason.contains("cannot read"), "{reason}");
    let dir = t.dir.path().display().to_string();
    t.fails(&["legacy-tokens", "import", &dir], 1);
}

/// Whether the token of `line` is stored (and readable now).
async fn is_imported(t: &Target, line: usize) -> bool {
    t.store
        .legacy()
        .get_legacy_token(&TokenHash::of(&old_token(line)), now())
        .await
        .unwrap()
        .is_some()
}

/// Reads back every `step`th valid line by its token's hash and checks its fields.
async fn check_imported(t: &Target, expires_at: UnixTime, step: usize) {
    let now = now();
    let store = t.store.clone();
    let missing: Vec<usize> = stream::iter(valid_line_numbers().step_by(step))
        .map(|line| {
            let store = store.clone();
            async move {
                let token = store
                    .legacy()
                    .get_legacy_token(&TokenHash::of(&old_token(line)), now)
                    .await
                    .unwrap();
                match token {
                    None => Some(line),
                    Some(token) => {
                        assert_eq!(token.consumer_key.as_str(), "qyprd-OLD");
                        assert_eq!(token.wsadmin, line % 10 == 0, "line {line}");
                        assert_eq!(
                            token.company_id.map(|c| c.to_string()),
                            (line % 10 == 0).then(|| COMPANY.to_owned())
                        );
                        let (kind, id) = if line % 7 == 0 {
                            (PrincipalType::Company, COMPANY)
                        } else {
                            (PrincipalType::User, USER)
                        };
                        assert_eq!(token.principal_type, kind);
                        assert_eq!(token.principal_id.to_string(), id);
                        assert_eq!(
                            token.scopes.to_string(),
                            "com.example.read com.example.write"
                        );
                        assert_eq!(token.expires_at, (line % 3 == 0).then_some(expires_at));
                        None
                    }
                }
            }
        })
        .buffer_unordered(16)
        .filter_map(|missing| async move { missing })
        .collect()
        .await;
    assert!(missing.is_empty(), "not imported: lines {missing:?}");
}

/// One million lines into SQLite, as a process: every line accounted for, and peak memory
/// reported (and bounded: the import streams). Slow in a debug build; run explicitly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "slow: imports 1,000,000 lines; run with --ignored --nocapture"]
async fn sqlite_import_of_a_million_lines_streams() {
    const LINES: usize = 1_000_000;
    let t = Target::sqlite().await;
    let path = t.dir.path().join("million.jsonl");
    let expires_at = now() + 86_400;
    {
        let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        for line in 1..=LINES {
            if line % 100_000 == 0 {
                writeln!(file, "{{\"token\": \"broken line {line}\"}}").unwrap();
            } else {
                writeln!(file, "{}", valid_line(line, expires_at)).unwrap();
            }
        }
    }
    let bytes = std::fs::metadata(&path).unwrap().len();

    let time = Path::new("/usr/bin/time");
    let mut cmd = if time.is_file() {
        let mut cmd = std::process::Command::new(time);
        cmd.arg("-v").arg(tokenctl());
        cmd
    } else {
        std::process::Command::new(tokenctl())
    };
    for var in CONFIG_VARS {
        cmd.env_remove(var);
    }
    cmd.envs(t.env.iter().map(|(k, v)| (*k, v.as_str())))
        .args(["--json", "legacy-tokens", "import"])
        .arg(&path);
    let started = std::time::Instant::now();
    let out = cmd.output().unwrap();
    let elapsed = started.elapsed();
    assert!(out.status.success(), "{}", describe(&["import"], &out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let skipped = (LINES / 100_000) as u64;
    assert_eq!(report["lines_read"], LINES as u64);
    assert_eq!(report["skipped"], skipped);
    assert_eq!(report["imported"], LINES as u64 - skipped);
    assert_eq!(report["blank"], 0);

    let stderr = String::from_utf8_lossy(&out.stderr);
    let peak_kib: Option<u64> = stderr
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("Maximum resident set size (kbytes): ")
        })
        .and_then(|v| v.trim().parse().ok());
    println!(
        "imported {} of {LINES} lines ({:.1} MB) in {:.1} s (tool's own timer {} s); peak RSS {}",
        report["imported"],
        bytes as f64 / 1e6,
        elapsed.as_secs_f64(),
        report["elapsed_seconds"],
        peak_kib.map_or("unknown (no /usr/bin/time)".to_owned(), |k| format!(
            "{:.1} MiB",
            k as f64 / 1024.0
        )),
    );
    if let Some(kib) = peak_kib {
        assert!(
            kib < 256 * 1024,
            "peak RSS {kib} KiB: the import must stream"
        );
    }
    for line in [1, 499_999, 999_999] {
        assert!(is_imported(&t, line).await);
    }
}
