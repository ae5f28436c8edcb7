//! The tool under test and the store it shares with the test: builds the binary once, points it
//! at a SQLite file or a DynamoDB Local table, runs it, and keeps a transcript of what it printed.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::{Arc, Mutex, OnceLock};

use crate::support::dynamodb as ddb;
use crate::support::stored_data;
use serde_json::Value;
use tempfile::TempDir;
use token_domain::{Client, ClientId, SecretCheck};
use token_store::dynamodb::DynamoStore;
use token_store::sqlite::{SqliteStore, FILE_NAME};
use token_store::Store;

use super::output::{assert_failure, assert_success, str_field, success_json};

/// The deployment's own geolocation, as the tool is configured in these tests.
pub const HOME: &str = "https://us.api.example.com";

/// A well-formed id that names nothing in any store.
pub const UNKNOWN: &str = "00000000-0000-4000-8000-000000000000";

/// Configuration variables the tool reads; cleared so the test's own environment (a developer's
/// STORE, the DynamoDB endpoint of the test command) never leaks into a run.
pub const CONFIG_VARS: &[&str] = &[
    "STORE",
    "DATA_DIR",
    "TABLE_NAME",
    "DYNAMODB_ENDPOINT",
    "GEOLOCATION",
    "PORT",
    "SIGNING_KEYS_SECRET_ARN",
    "REFRESH_TOKEN_TTL_DAYS",
    "REFRESH_GRACE_SECONDS",
    "LOCKOUT_THRESHOLD",
    "RUST_LOG",
];

/// What cargo sets in a test process's environment (names, or prefixes of names).
const SET_FOR_TESTS: &[&str] = &[
    "CARGO_MANIFEST_",
    "CARGO_PKG_",
    "CARGO_CRATE_NAME",
    "CARGO_BIN_",
    "CARGO_PRIMARY_PACKAGE",
    "CARGO_TARGET_TMPDIR",
    "CARGO_RUSTC_CURRENT_DIR",
    "OUT_DIR",
];

/// Builds the binary once per test process (with every target of the workspace) and returns its
/// path; `TOKENCTL_BIN` names an already built one instead (a release build, a packaged binary).
pub fn tokenctl() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        if let Some(path) = std::env::var_os("TOKENCTL_BIN").filter(|p| !p.is_empty()) {
            return PathBuf::from(path);
        }
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("the tests crate lives in the workspace");
        let mut build = std::process::Command::new(env!("CARGO"));
        build
            .current_dir(workspace)
            .args(["build", "--quiet", "--message-format=json"])
            // Exactly the build `infra/test.sh` has made, so here it is a no-op. Features are
            // unified over the selected packages and targets (dev-dependencies count only with
            // test targets): `-p tokenctl` or `--bins` alone would compile the workspace's crates
            // a second time, with another feature set, and rewrite binaries other suites run.
            .args(["--workspace", "--all-targets"]);
        // Without the variables cargo sets for this test process: some build scripts (ring's)
        // rerun when `CARGO_MANIFEST_DIR` differs, which would rebuild the dependency tree.
        for (name, _) in std::env::vars_os() {
            let name = name.to_string_lossy();
            if SET_FOR_TESTS.iter().any(|prefix| name.starts_with(prefix)) {
                build.env_remove(name.as_ref());
            }
        }
        if !cfg!(debug_assertions) {
            build.arg("--release");
        }
        let output = build.output().expect("run cargo build for tokenctl");
        assert!(
            output.status.success(),
            "building tokenctl failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            // The binary itself, not the unit-test harness of its `bin` target, which
            // `--all-targets` builds too under the same name.
            .find(|msg| {
                msg["reason"] == "compiler-artifact"
                    && msg["target"]["name"] == "tokenctl"
                    && msg["target"]["kind"] == serde_json::json!(["bin"])
                    && msg["profile"]["test"] == false
            })
            .and_then(|msg| msg["executable"].as_str().map(PathBuf::from))
            .expect("cargo reported the tokenctl executable")
    })
}

pub enum Backend {
    Sqlite,
    /// The raw client, for checks on stored items.
    Dynamo(DynamoStore),
}

/// One store the tool and the test share, and how to point the tool at it.
pub struct Target {
    pub backend: Backend,
    pub env: Vec<(&'static str, String)>,
    /// The test's own handle on the same store.
    pub store: Arc<dyn Store>,
    /// DATA_DIR (SQLite's file, the local signing key) and scratch files.
    pub dir: TempDir,
    /// Everything the tool printed (stdout and stderr), one entry per run, for the check that
    /// secrets are printed only where they are meant to be.
    pub transcript: Mutex<Vec<String>>,
}

impl Target {
    pub async fn sqlite() -> Self {
        let dir = scratch_dir();
        let env = vec![
            ("STORE", "sqlite".to_owned()),
            ("DATA_DIR", dir.path().display().to_string()),
        ];
        // Opened before the tool runs: the tool must work while another process (the local
        // server, here the test) has the database open.
        let store = Arc::new(SqliteStore::open_in_dir(dir.path()).unwrap());
        Self {
            backend: Backend::Sqlite,
            env,
            store,
            dir,
            transcript: Mutex::default(),
        }
    }

    /// `None` when the DynamoDB suites are explicitly skipped (`SKIP_DYNAMODB=1`).
    pub async fn dynamodb() -> Option<Self> {
        let endpoint = ddb::endpoint()?;
        let table = ddb::unique_table_name();
        let dir = scratch_dir();
        let env = vec![
            ("STORE", "dynamodb".to_owned()),
            ("DYNAMODB_ENDPOINT", endpoint.clone()),
            ("TABLE_NAME", table.clone()),
            ("DATA_DIR", dir.path().display().to_string()),
        ];
        let target = Self {
            backend: Backend::Dynamo(DynamoStore::connect(&table, Some(&endpoint)).await),
            env,
            store: Arc::new(DynamoStore::connect(&table, Some(&endpoint)).await),
            dir,
            transcript: Mutex::default(),
        };
        // The operator's first step on a new table; run twice: it is idempotent.
        for _ in 0..2 {
            let out = target.json(&["table", "create"]);
            assert_eq!(out["store"], "dynamodb");
            assert_eq!(out["table_name"], table.as_str());
        }
        let Backend::Dynamo(raw) = &target.backend else {
            unreachable!()
        };
        let ttl = raw
            .client()
            .describe_time_to_live()
            .table_name(&table)
            .send()
            .await
            .unwrap()
            .time_to_live_description
            .unwrap();
        assert_eq!(ttl.attribute_name.as_deref(), Some("expires_at"));
        Some(target)
    }

    pub fn command(&self) -> assert_cmd::Command {
        let mut cmd = assert_cmd::Command::new(tokenctl());
        for var in CONFIG_VARS {
            cmd.env_remove(var);
        }
        cmd.envs(self.env.iter().map(|(k, v)| (*k, v.as_str())))
            .env("GEOLOCATION", HOME)
            .timeout(std::time::Duration::from_secs(120));
        cmd
    }

    pub fn output(&self, args: &[&str]) -> Output {
        self.recorded(self.command().args(args).output().unwrap())
    }

    /// Adds a run's output to the transcript.
    pub fn recorded(&self, out: Output) -> Output {
        let printed = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        self.transcript.lock().unwrap().push(printed);
        out
    }

    /// How many runs so far printed `needle`.
    pub fn runs_that_printed(&self, needle: &str) -> usize {
        let transcript = self.transcript.lock().unwrap();
        transcript
            .iter()
            .filter(|printed| printed.contains(needle))
            .count()
    }

    /// Runs with `--json`, expects success, and returns the one JSON value printed (an object, or
    /// an array of objects for a listing).
    pub fn json(&self, args: &[&str]) -> Value {
        let mut with_json = vec!["--json"];
        with_json.extend_from_slice(args);
        let out = self.output(&with_json);
        success_json(&out, args)
    }

    /// Runs without `--json`, expects success, returns the text.
    pub fn text(&self, args: &[&str]) -> String {
        let out = self.output(args);
        assert_success(&out, args);
        String::from_utf8(out.stdout).unwrap()
    }

    /// Expects failure with `code`; returns the one-line reason.
    pub fn fails(&self, args: &[&str], code: i32) -> String {
        assert_failure(&self.output(args), args, code)
    }

    /// `clients create --name <name> <flags>` with `--json`: what it printed, and the new
    /// client's id.
    pub fn create_client(&self, name: &str, flags: &[&str]) -> (Value, ClientId) {
        let created = self.json(&[&["clients", "create", "--name", name], flags].concat());
        let id = ClientId::parse(str_field(&created, "client_id")).unwrap();
        (created, id)
    }

    /// `clients secrets list <client_id>` with `--json`: one object per secret.
    pub fn list_secrets(&self, client_id: &str) -> Vec<Value> {
        let listed = self.json(&["clients", "secrets", "list", client_id]);
        listed.as_array().expect("a listing").clone()
    }

    /// The client as the store holds it now, read back through the test's own store.
    pub async fn stored_client(&self, id: &ClientId) -> Client {
        self.store
            .clients()
            .get_client(id)
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("client {id} is stored"))
    }

    /// Whether `id`'s stored secrets take `secret` now.
    pub async fn secret_verifies(&self, id: &ClientId, secret: &str) -> bool {
        let client = self.stored_client(id).await;
        matches!(
            client.check_secret(secret, client.created_at),
            SecretCheck::Valid { .. }
        )
    }

    /// Whether `needle` appears anywhere in the stored data, in clear. On SQLite only the
    /// database's own files count: DATA_DIR also holds the import files, which are clear text.
    pub async fn stored_anywhere(&self, needle: &str) -> bool {
        match &self.backend {
            Backend::Sqlite => {
                stored_data::files_contain(self.dir.path(), is_database_file, needle)
            }
            Backend::Dynamo(store) => stored_data::table_contains(store, needle).await,
        }
    }
}

/// DATA_DIR, removed with the target.
fn scratch_dir() -> TempDir {
    tempfile::Builder::new()
        .prefix("tokenctl-")
        .tempdir()
        .unwrap()
}

/// The SQLite database file and its companions (`-wal`, `-shm`).
fn is_database_file(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|name| name.to_string_lossy().starts_with(FILE_NAME))
}
