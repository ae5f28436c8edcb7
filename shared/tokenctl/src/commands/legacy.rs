//! `legacy-apps link`, `legacy-tokens import`.

use std::fs::File;
use std::io::{BufRead, BufReader, IsTerminal};
use std::path::Path;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use token_core::admin;
use token_core::context::Context;
use token_core::import::{import_legacy_tokens, ImportProgress, ImportReport};

use crate::args::{LegacyAppsCommand, LegacyTokensCommand};
use crate::error::CliError;
use crate::output::Output;

pub async fn run_apps(command: LegacyAppsCommand, ctx: &Context) -> Result<Output, CliError> {
    match command {
        LegacyAppsCommand::Link {
            consumer_key,
            client_id,
        } => {
            let app = admin::link_legacy_app(ctx, consumer_key, &client_id).await?;
            Ok(Output::new(
                json!({
                    "consumer_key": app.consumer_key,
                    "client_id": app.client_id,
                    "linked_at": app.linked_at,
                }),
                format!(
                    "Consumer key {} is linked to client {}: its old tokens can be exchanged by that client. {}",
                    app.consumer_key,
                    app.client_id,
                    super::cache_delay_note()
                ),
            ))
        }
    }
}

pub async fn run_tokens(command: LegacyTokensCommand, ctx: &Context) -> Result<Output, CliError> {
    match command {
        LegacyTokensCommand::Import { file } => import(&file, ctx).await,
    }
}

/// Read buffer: large reads keep a million-line import off the syscall path.
const READ_BUFFER: usize = 256 * 1024;

async fn import(file: &Path, ctx: &Context) -> Result<Output, CliError> {
    let (reader, total_bytes): (Box<dyn BufRead>, Option<u64>) = if file == Path::new("-") {
        (Box::new(std::io::stdin().lock()), None)
    } else {
        let cannot =
            |e: std::io::Error| CliError::other(format!("cannot read {}: {e}", file.display()));
        let opened = File::open(file).map_err(cannot)?;
        let metadata = opened.metadata().map_err(cannot)?;
        if metadata.is_dir() {
            return Err(CliError::other(format!(
                "cannot read {}: it is a directory",
                file.display()
            )));
        }
        (
            Box::new(BufReader::with_capacity(READ_BUFFER, opened)),
            Some(metadata.len()),
        )
    };

    let bar = progress_bar(total_bytes);
    let result = import_legacy_tokens(ctx, reader, |p: ImportProgress| {
        bar.set_position(p.bytes);
        bar.set_message(format!(
            "{} lines, {} imported, {} skipped",
            p.lines, p.imported, p.skipped
        ));
    })
    .await;
    bar.finish_and_clear();
    Ok(summary(file, &result?))
}

/// A bar over the file's bytes, drawn only when stderr is a terminal (not in scripts or logs).
fn progress_bar(total_bytes: Option<u64>) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = match total_bytes {
        Some(total) => {
            let bar = ProgressBar::new(total);
            if let Ok(style) = ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {wide_bar} {percent:>3}% ETA {eta} {msg}",
            ) {
                bar.set_style(style);
            }
            bar
        }
        None => ProgressBar::new_spinner(),
    };
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

fn summary(file: &Path, report: &ImportReport) -> Output {
    let truncated = !report.all_skips_listed();
    let json = json!({
        "file": file.display().to_string(),
        "lines_read": report.lines_read,
        "imported": report.imported,
        "skipped": report.skipped,
        "blank": report.blank,
        "skipped_lines": report.skipped_lines,
        "skipped_lines_truncated": truncated,
        "elapsed_seconds": round_millis(report.elapsed),
    });

    let mut text = format!(
        "Imported {} from {} of {} in {:.2} s ({} ignored).",
        plural(report.imported, "token"),
        plural(report.lines_read, "line"),
        file.display(),
        report.elapsed.as_secs_f64(),
        plural(report.blank, "blank line"),
    );
    if report.skipped == 0 {
        text.push_str("\nNo lines were skipped.");
    } else {
        text.push_str(&format!(
            "\nSkipped {} (the rest was imported; fix them and re-run, re-importing is safe):",
            plural(report.skipped, "invalid line")
        ));
        for skipped in &report.skipped_lines {
            text.push_str(&format!("\n  line {}: {}", skipped.line, skipped.reason));
        }
        if truncated {
            text.push_str(&format!(
                "\n  ... and {} more not listed (only the first {} are kept).",
                plural(
                    report.skipped - report.skipped_lines.len() as u64,
                    "skipped line"
                ),
                report.skipped_lines.len()
            ));
        }
    }
    Output::new(json, text)
}

fn plural(count: u64, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

fn round_millis(duration: Duration) -> f64 {
    (duration.as_secs_f64() * 1000.0).round() / 1000.0
}
