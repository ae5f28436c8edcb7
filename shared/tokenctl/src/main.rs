//! `tokenctl`: the administration command line of the token service.
//!
//! It reads the services' configuration (README.md, Configuration) with global flags overriding it,
//! runs one verb through the admin operations of the `token-core` crate, and prints the result
//! as one JSON object (`--json`) or readable text. On failure it prints one line on stderr and
//! exits non-zero (see [`error::Failure`] for the statuses).

mod args;
mod commands;
mod error;
mod output;
mod setup;

use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::Parser;

use crate::args::Cli;
use crate::error::CliError;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    let as_json = cli.global.json;
    match run(cli) {
        Ok(output) => match output.print(as_json) {
            Ok(()) => ExitCode::SUCCESS,
            // A closed pipe (`tokenctl ... | head`) is not worth a panic.
            Err(e) => fail(&CliError::other(format!("writing the output: {e}"))),
        },
        Err(error) => fail(&error),
    }
}

fn run(cli: Cli) -> Result<output::Output, CliError> {
    let config = setup::load_config(&cli.global)?;
    if let Some(directives) = &config.telemetry.log_directives {
        // Diagnostics of the AWS SDK and the store, on stderr, only when asked for.
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(directives))
            .with_writer(std::io::stderr)
            .init();
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CliError::other(format!("starting the async runtime: {e}")))?;
    runtime.block_on(commands::run(cli, config))
}

fn fail(error: &CliError) -> ExitCode {
    eprintln!("tokenctl: {}", error.one_line());
    ExitCode::from(error.exit_code() as u8)
}

/// Help and version go to stdout with status 0, as usual. Any other parse error is one line on
/// stderr with status 2, like every other invalid input.
fn usage_error(error: clap::Error) -> ExitCode {
    match error.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => error.exit(),
        _ => {
            let rendered = error.render().to_string();
            let reason = rendered
                .lines()
                .map(str::trim)
                .find(|line| !line.is_empty())
                .unwrap_or("invalid arguments")
                .trim_start_matches("error: ");
            fail(&CliError::invalid(format!(
                "{reason} (see tokenctl --help)"
            )))
        }
    }
}
