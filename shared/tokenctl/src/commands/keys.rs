//! `keys rotate`.

use std::path::Path;

use serde_json::json;
use token_service::clock::SystemClock;
use token_service::config::Config;
use token_service::random::OsRandom;
use token_service::signing::{self, KeyRing, KeyRingDocument, LOCAL_KEY_FILE};

use crate::args::KeysCommand;
use crate::error::CliError;
use crate::output::Output;

pub fn run(command: KeysCommand, config: &Config) -> Result<Output, CliError> {
    match command {
        KeysCommand::Rotate { file: Some(path) } => {
            let (kid, keys) = rotate_file(&path)?;
            Ok(Output::new(
                json!({ "kid": kid, "file": path.display().to_string(), "keys": keys }),
                format!(
                    "New signing key {kid} added to {} ({keys} keys; the newest signs). Upload the \
                     file to the signing-key secret, then restart or redeploy the services.",
                    path.display()
                ),
            ))
        }
        KeysCommand::Rotate { file: None } => {
            if let Some(arn) = &config.signing_keys_secret_arn {
                return Err(CliError::invalid(format!(
                    "the signing keys live in Secrets Manager ({arn}); download the secret to a \
                     file, rotate it with `tokenctl keys rotate --file PATH` and upload it back"
                )));
            }
            let kid = signing::rotate_local(&config.data_dir, &OsRandom, &SystemClock)?;
            let path = config.data_dir.join(LOCAL_KEY_FILE);
            Ok(Output::new(
                json!({ "kid": kid, "file": path.display().to_string() }),
                format!(
                    "New signing key {kid} added to {}; restart the local server to sign with it.",
                    path.display()
                ),
            ))
        }
    }
}

/// Rotates the key-ring document at `path` (a new one if the file does not exist) and writes it
/// back atomically, readable by the owner only. Returns the new kid and the number of keys.
fn rotate_file(path: &Path) -> Result<(String, usize), CliError> {
    let mut document: KeyRingDocument = match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| {
            CliError::invalid(format!(
                "{} is not a key-ring document: {e}",
                path.display()
            ))
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => KeyRingDocument::default(),
        Err(e) => {
            return Err(CliError::other(format!(
                "cannot read {}: {e}",
                path.display()
            )))
        }
    };
    if !document.keys.is_empty() {
        // Refuse to extend a ring whose existing keys would not load in the services.
        KeyRing::from_document(&document)?;
    }
    let kid = document.rotate(&OsRandom, &SystemClock);
    let json = serde_json::to_string_pretty(&document)
        .map_err(|e| CliError::other(format!("encoding the key ring: {e}")))?;
    write_private(path, json.as_bytes())
        .map_err(|e| CliError::other(format!("cannot write {}: {e}", path.display())))?;
    Ok((kid, document.keys.len()))
}

fn write_private(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut tmp_name = path.as_os_str().to_owned();
    tmp_name.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp_name);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(&tmp)?;
    #[cfg(unix)]
    {
        // `mode` applies only to a new file; a leftover temporary file is tightened too.
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    file.write_all(contents)?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(&tmp, path)
}
