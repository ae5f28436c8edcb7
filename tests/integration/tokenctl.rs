//! `tokenctl`, run as the operator runs it: the built binary as a separate process, configured
//! through the environment, against the embedded SQLite store and against DynamoDB Local. Every
//! verb is checked for its exit status, its output, and what it left in the store (read back
//! through a store the test opens on the same file or table).
//!
//! The binary is built once per test run (`cargo build -p tokenctl --bin tokenctl`, a debug
//! build, a no-op when up to date): binaries of another package are not built by `cargo test`.
//! `TOKENCTL_BIN=path` runs an existing binary instead.
//!
//! The million-line import is `#[ignore]`d (about a minute in a debug build); run it with
//! `cargo test -p integration-tests --test integration tokenctl -- --ignored --nocapture`, or
//! measure with `infra/bench-import.sh`.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::{Arc, Mutex, OnceLock};

use futures::stream::{self, StreamExt};
use integration_tests::dynamodb as ddb;
use serde_json::Value;
use tempfile::TempDir;
use token_service::clock::{Clock, SystemClock, UnixTime};
use token_service::domain::{
    AccessTokenRecord, ClientId, CompanyStatus, ConsumerKey, Family, FamilyId, GrantType, Login,
    PrincipalId, PrincipalType, RefreshTokenRecord, Scopes, TokenId, UserStatus,
};
use token_service::secrets::TokenHash;
use token_service::signing::{KeyRing, KeyRingDocument};
use token_service::store::dynamodb::sdk::types::AttributeValue;
use token_service::store::dynamodb::DynamoStore;
use token_service::store::sqlite::SqliteStore;
use token_service::store::{NewFamily, Store};
use uuid::Uuid;

/// Runs each listed `async fn(Target)` on a SQLite file and on a DynamoDB Local table, as
/// `sqlite::<name>` and `dynamodb::<name>`; with `SKIP_DYNAMODB=1` the DynamoDB ones are listed
/// as ignored (see `tests/build.rs`).
macro_rules! on_both_targets {
    ($($test:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    super::$test(super::Target::sqlite().await).await;
                }
            )*
        }
        mod dynamodb {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                #[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
                async fn $test() {
                    if let Some(target) = super::Target::dynamodb().await {
                        super::$test(target).await;
                    }
                }
            )*
        }
    };
}

on_both_targets!(every_admin_verb, legacy_token_import);

/// The deployment's own geolocation, as the tool is configured in these tests.
const HOME: &str = "https://us.api.example.com";

/// Configuration variables the tool reads; cleared so the test's own environment (a developer's
/// STORE, the DynamoDB endpoint of the test command) never leaks into a run.
const CONFIG_VARS: &[&str] = &[
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

/// Builds the binary once per test process and returns its path; `TOKENCTL_BIN` names an
/// already built one instead (a release build, a packaged binary).
fn tokenctl() -> &'static Path {
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
            .args(["-p", "tokenctl", "--bin", "tokenctl"]);
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
            .find(|msg| msg["reason"] == "compiler-artifact" && msg["target"]["name"] == "tokenctl")
            .and_then(|msg| msg["executable"].as_str().map(PathBuf::from))
            .expect("cargo reported the tokenctl executable")
    })
}

enum Backend {
    Sqlite,
    /// The raw client, for checks on stored items.
    Dynamo(DynamoStore),
}

/// One store the tool and the test share, and how to point the tool at it.
struct Target {
    backend: Backend,
    env: Vec<(&'static str, String)>,
    /// The test's own handle on the same store.
    store: Arc<dyn Store>,
    /// DATA_DIR (SQLite's file, the local signing key) and scratch files.
    dir: TempDir,
    /// Everything the tool printed (stdout and stderr), one entry per run, for the check that
    /// secrets are printed only where they are meant to be.
    transcript: Mutex<Vec<String>>,
}

impl Target {
    async fn sqlite() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("tokenctl-")
            .tempdir()
            .unwrap();
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
    async fn dynamodb() -> Option<Self> {
        let endpoint = ddb::endpoint()?;
        let table = ddb::unique_table_name();
        let dir = tempfile::Builder::new()
            .prefix("tokenctl-")
            .tempdir()
            .unwrap();
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

    fn command(&self) -> assert_cmd::Command {
        let mut cmd = assert_cmd::Command::new(tokenctl());
        for var in CONFIG_VARS {
            cmd.env_remove(var);
        }
        cmd.envs(self.env.iter().map(|(k, v)| (*k, v.as_str())))
            .env("GEOLOCATION", HOME)
            .timeout(std::time::Duration::from_secs(120));
        cmd
    }

    fn output(&self, args: &[&str]) -> Output {
        self.recorded(self.command().args(args).output().unwrap())
    }

    /// Adds a run's output to the transcript.
    fn recorded(&self, out: Output) -> Output {
        let printed = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        self.transcript.lock().unwrap().push(printed);
        out
    }

    /// How many runs so far printed `needle`.
    fn runs_that_printed(&self, needle: &str) -> usize {
        let transcript = self.transcript.lock().unwrap();
        transcript
            .iter()
            .filter(|printed| printed.contains(needle))
            .count()
    }

    /// Runs with `--json`, expects success, and returns the one JSON object printed.
    fn json(&self, args: &[&str]) -> Value {
        let mut with_json = vec!["--json"];
        with_json.extend_from_slice(args);
        let out = self.output(&with_json);
        success_json(&out, args)
    }

    /// Runs without `--json`, expects success, returns the text.
    fn text(&self, args: &[&str]) -> String {
        let out = self.output(args);
        assert_success(&out, args);
        String::from_utf8(out.stdout).unwrap()
    }

    /// Expects failure with `code`; returns the one-line reason.
    fn fails(&self, args: &[&str], code: i32) -> String {
        assert_failure(&self.output(args), args, code)
    }

    /// Whether `needle` appears anywhere in the stored data, in clear.
    async fn stored_anywhere(&self, needle: &str) -> bool {
        match &self.backend {
            Backend::Sqlite => std::fs::read_dir(self.dir.path())
                .unwrap()
                .map(|entry| entry.unwrap().path())
                .filter(|path| {
                    path.file_name()
                        .unwrap()
                        .to_string_lossy()
                        .starts_with("tokens.sqlite3")
                })
                .any(|path| {
                    // Read by another process: opening and closing the database file here would
                    // drop the POSIX locks this process's own SQLite connection holds on it
                    // (locks are per process), after which that connection reads stale data.
                    let out = std::process::Command::new("cat")
                        .arg(&path)
                        .output()
                        .unwrap();
                    assert!(out.status.success(), "cat {}", path.display());
                    out.stdout
                        .windows(needle.len())
                        .any(|window| window == needle.as_bytes())
                }),
            Backend::Dynamo(store) => scan(store)
                .await
                .iter()
                .any(|item| item.values().any(|value| contains(value, needle))),
        }
    }
}

type Item =
    std::collections::HashMap<String, token_service::store::dynamodb::sdk::types::AttributeValue>;

/// Whether a stored attribute, at any depth, holds `needle` in a string.
fn contains(value: &AttributeValue, needle: &str) -> bool {
    match value {
        AttributeValue::S(text) => text.contains(needle),
        AttributeValue::Ss(texts) => texts.iter().any(|text| text.contains(needle)),
        AttributeValue::L(values) => values.iter().any(|v| contains(v, needle)),
        AttributeValue::M(map) => map.values().any(|v| contains(v, needle)),
        _ => false,
    }
}

async fn scan(store: &DynamoStore) -> Vec<Item> {
    let mut items = Vec::new();
    let mut pages = store
        .client()
        .scan()
        .table_name(store.table_name())
        .into_paginator()
        .send();
    while let Some(page) = pages.next().await {
        items.extend(page.unwrap().items.unwrap_or_default());
    }
    items
}

fn describe(args: &[&str], out: &Output) -> String {
    format!(
        "tokenctl {}\nstatus: {:?}\nstdout: {}\nstderr: {}",
        args.join(" "),
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn assert_success(out: &Output, args: &[&str]) {
    assert!(
        out.status.success(),
        "expected success: {}",
        describe(args, out)
    );
    assert!(
        out.stderr.is_empty(),
        "nothing on stderr on success (no progress bar off a terminal): {}",
        describe(args, out)
    );
}

fn success_json(out: &Output, args: &[&str]) -> Value {
    assert_success(out, args);
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    assert_eq!(
        text.trim_end().lines().count(),
        1,
        "one JSON object on one line: {}",
        describe(args, out)
    );
    let value: Value = serde_json::from_str(&text).unwrap();
    assert!(value.is_object(), "{}", describe(args, out));
    value
}

fn assert_failure(out: &Output, args: &[&str], code: i32) -> String {
    assert_eq!(out.status.code(), Some(code), "{}", describe(args, out));
    assert!(
        out.stdout.is_empty(),
        "nothing on stdout: {}",
        describe(args, out)
    );
    let stderr = String::from_utf8(out.stderr.clone()).unwrap();
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "a one-line reason: {}",
        describe(args, out)
    );
    assert!(stderr.starts_with("tokenctl: "), "{}", describe(args, out));
    stderr
}

fn str_field<'a>(value: &'a Value, key: &str) -> &'a str {
    value[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} in {value}"))
}

fn now() -> UnixTime {
    SystemClock.now()
}

const UNKNOWN: &str = "00000000-0000-4000-8000-000000000000";

// ---------------------------------------------------------------------------------------------
// Applications, companies, users, legacy apps, token families.

async fn every_admin_verb(t: Target) {
    let store = &t.store;

    // clients create: the secret is printed once, verifies against the stored hash, and is
    // nowhere in the store in clear.
    let created = t.json(&[
        "clients",
        "create",
        "--name",
        "Partner App",
        "--scopes",
        "read write",
        "--grants",
        "client_credentials,refresh_token",
        "--connect-url",
        "https://partner.example.com/connect?x=1",
    ]);
    let client_id = ClientId::parse(str_field(&created, "client_id")).unwrap();
    let secret = str_field(&created, "client_secret").to_owned();
    assert!(Uuid::parse_str(&secret).is_ok(), "client_secret is a UUID");
    let client = store.get_client(&client_id).await.unwrap().unwrap();
    assert_eq!(
        client.id, client_id,
        "the printed id is the stored client's own"
    );
    assert_eq!(
        client_id.as_uuid().get_version(),
        Some(uuid::Version::Random),
        "a random (v4) id"
    );
    assert!(client.secret_hash.verify(&secret));
    assert!(!t.stored_anywhere(&secret).await, "secret stored in clear");
    assert!(
        t.stored_anywhere("Partner App").await,
        "the check sees stored text"
    );
    assert_eq!(client.name, "Partner App");
    assert_eq!(client.allowed_scopes, Scopes::parse("read write").unwrap());
    assert_eq!(
        client.grants,
        BTreeSet::from([GrantType::ClientCredentials, GrantType::RefreshToken])
    );
    assert_eq!(
        client.connect_url.as_deref(),
        Some("https://partner.example.com/connect?x=1")
    );
    assert!(client.refresh_allowed && client.enabled);

    // Defaults: every grant, no scopes; --no-refresh; readable output names the secret once.
    let text = t.text(&["clients", "create", "--name", "Other", "--no-refresh"]);
    let other_id = text
        .lines()
        .find_map(|l| l.strip_prefix("client_id:"))
        .map(|id| ClientId::parse(id.trim()).unwrap())
        .expect("client_id line");
    let other_secret = text
        .lines()
        .find_map(|l| l.strip_prefix("client_secret:"))
        .map(|s| s.trim().to_owned())
        .expect("client_secret line");
    let other = store.get_client(&other_id).await.unwrap().unwrap();
    assert!(other.secret_hash.verify(&other_secret));
    assert_eq!(other.grants, GrantType::ALL.into_iter().collect());
    assert!(other.allowed_scopes.is_empty());
    assert!(!other.refresh_allowed);

    t.fails(
        &["clients", "create", "--name", "X", "--grants", "implicit"],
        2,
    );
    t.fails(
        &[
            "clients",
            "create",
            "--name",
            "X",
            "--connect-url",
            "ftp://x",
        ],
        2,
    );
    t.fails(&["clients", "create", "--name", "  "], 2);
    t.fails(&["clients", "create"], 2);

    // companies create: the geolocation defaults to the configured GEOLOCATION.
    let company = t.json(&["companies", "create", "--name", "Acme"]);
    let company_id = PrincipalId::parse(str_field(&company, "company_id")).unwrap();
    let stored = store.get_company(&company_id).await.unwrap().unwrap();
    assert_eq!(
        (stored.name.as_str(), stored.geolocation.as_str()),
        ("Acme", HOME)
    );
    assert_eq!(stored.status, CompanyStatus::Active);
    let eu = t.json(&[
        "companies",
        "create",
        "--name",
        "Acme EU",
        "--geolocation",
        "https://eu.api.example.com/",
    ]);
    let eu_id = PrincipalId::parse(str_field(&eu, "company_id")).unwrap();
    let eu_company = store.get_company(&eu_id).await.unwrap().unwrap();
    assert_eq!(
        eu_company.geolocation.as_str(),
        "https://eu.api.example.com"
    );
    t.fails(
        &[
            "companies",
            "create",
            "--name",
            "Y",
            "--geolocation",
            "nowhere",
        ],
        2,
    );

    // companies enable-client
    assert!(!store
        .is_company_enabled_for_client(&company_id, &client_id)
        .await
        .unwrap());
    let enabled = t.json(&[
        "companies",
        "enable-client",
        &company_id.to_string(),
        &client_id.to_string(),
    ]);
    assert_eq!(enabled["enabled"], true);
    assert!(store
        .is_company_enabled_for_client(&company_id, &client_id)
        .await
        .unwrap());
    assert!(!store
        .is_company_enabled_for_client(&eu_id, &client_id)
        .await
        .unwrap());
    let reason = t.fails(
        &[
            "companies",
            "enable-client",
            UNKNOWN,
            &client_id.to_string(),
        ],
        3,
    );
    assert!(reason.contains("not found"), "{reason}");
    t.fails(
        &[
            "companies",
            "enable-client",
            &company_id.to_string(),
            UNKNOWN,
        ],
        3,
    );
    t.fails(
        &["companies", "enable-client", "acme", &client_id.to_string()],
        2,
    );

    // companies set-status
    for (arg, status) in [
        ("maintenance", CompanyStatus::Maintenance),
        ("disabled", CompanyStatus::Disabled),
        ("active", CompanyStatus::Active),
    ] {
        let out = t.json(&["companies", "set-status", &company_id.to_string(), arg]);
        assert_eq!(out["status"], arg);
        let stored = store.get_company(&company_id).await.unwrap().unwrap();
        assert_eq!(stored.status, status);
    }
    t.fails(
        &["companies", "set-status", &company_id.to_string(), "paused"],
        2,
    );
    t.fails(&["companies", "set-status", UNKNOWN, "active"], 3);

    // users create: an administrator of the company; the password verifies and is stored only
    // as a hash, and is never printed.
    let password = "correct horse battery staple";
    let out = t.output(&[
        "--json",
        "users",
        "create",
        "--login",
        "Admin@Acme.example",
        "--password",
        password,
        "--company",
        &company_id.to_string(),
        "--admin",
    ]);
    assert!(!String::from_utf8_lossy(&out.stdout).contains(password));
    let user = success_json(&out, &["users", "create"]);
    let user_id = PrincipalId::parse(str_field(&user, "user_id")).unwrap();
    let admin = store.get_user(&user_id).await.unwrap().unwrap();
    assert_eq!(admin.login.as_str(), "admin@acme.example");
    assert!(admin.password_hash.verify(password));
    assert!(!admin.password_hash.verify("wrong"));
    assert!(admin.administers(&company_id));
    assert_eq!(admin.geolocation.as_str(), HOME);
    assert_eq!(admin.status, UserStatus::Active);
    assert!(
        !t.stored_anywhere(password).await,
        "password stored in clear"
    );
    let by_login = store
        .get_user_by_login(&Login::parse("ADMIN@acme.example").unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(by_login.id, user_id);

    // A plain user elsewhere, refused logons, password from stdin.
    let out = t
        .command()
        .args([
            "--json",
            "users",
            "create",
            "--login",
            "bob",
            "--password-stdin",
            "--geolocation",
            "https://eu.api.example.com",
            "--status",
            "logon-denied",
        ])
        .write_stdin("s3cret pass\n")
        .output()
        .unwrap();
    let out = t.recorded(out);
    let bob = success_json(&out, &["users", "create", "--password-stdin"]);
    let bob = store
        .get_user(&PrincipalId::parse(str_field(&bob, "user_id")).unwrap())
        .await
        .unwrap()
        .unwrap();
    assert!(bob.password_hash.verify("s3cret pass"));
    assert_eq!(bob.status, UserStatus::LogonDenied);
    assert_eq!(bob.geolocation.as_str(), "https://eu.api.example.com");
    assert_eq!((bob.company_id, bob.is_admin), (None, false));

    let taken = t.fails(
        &[
            "users",
            "create",
            "--login",
            "admin@ACME.example",
            "--password",
            "x",
        ],
        4,
    );
    assert!(taken.contains("already taken"), "{taken}");
    t.fails(
        &[
            "users",
            "create",
            "--login",
            "c",
            "--password",
            "x",
            "--admin",
        ],
        2,
    );
    t.fails(
        &[
            "users",
            "create",
            "--login",
            "c",
            "--password",
            "x",
            "--company",
            UNKNOWN,
        ],
        3,
    );
    t.fails(&["users", "create", "--login", "c", "--password", ""], 2);
    t.fails(
        &[
            "users",
            "create",
            "--login",
            "c",
            "--password",
            "x",
            "--status",
            "locked",
        ],
        2,
    );
    t.fails(&["users", "create", "--login", "c"], 2);

    // legacy-apps link, and re-link to another client.
    let key = ConsumerKey::parse("qyprd-OLD-key").unwrap();
    let linked = t.json(&[
        "legacy-apps",
        "link",
        "qyprd-OLD-key",
        &client_id.to_string(),
    ]);
    assert_eq!(linked["consumer_key"], "qyprd-OLD-key");
    let app = store.get_legacy_app(&key).await.unwrap().unwrap();
    assert_eq!(app.client_id, client_id);
    t.json(&[
        "legacy-apps",
        "link",
        "qyprd-OLD-key",
        &other_id.to_string(),
    ]);
    let app = store.get_legacy_app(&key).await.unwrap().unwrap();
    assert_eq!(app.client_id, other_id);
    t.fails(&["legacy-apps", "link", "qyprd-NEW", UNKNOWN], 3);
    assert!(store
        .get_legacy_app(&ConsumerKey::parse("qyprd-NEW").unwrap())
        .await
        .unwrap()
        .is_none());

    // tokens revoke-family: a family the service issued stops working, access tokens included.
    let (family_id, jti) = issue_family(store.as_ref(), client_id, user_id).await;
    let out = t.json(&["tokens", "revoke-family", &family_id.to_string()]);
    assert_eq!(out["revoked"], true);
    let family = store.get_family(&family_id, now()).await.unwrap().unwrap();
    assert!(family.revoked_at.is_some());
    let access = store.get_access_token(&jti, now()).await.unwrap().unwrap();
    assert!(access.revoked);
    // Idempotent; unknown or malformed ids.
    t.json(&["tokens", "revoke-family", &family_id.to_string()]);
    t.fails(&["tokens", "revoke-family", UNKNOWN], 3);
    t.fails(&["tokens", "revoke-family", "family-1"], 2);

    // clients disable
    let out = t.json(&["clients", "disable", &client_id.to_string()]);
    assert_eq!(out["enabled"], false);
    assert!(!store.get_client(&client_id).await.unwrap().unwrap().enabled);
    assert!(store.get_client(&other_id).await.unwrap().unwrap().enabled);
    t.fails(&["clients", "disable", UNKNOWN], 3);
    t.fails(&["clients", "disable", "not-a-uuid"], 2);
    // Running servers cache clients for a few seconds, and the tool says so.
    let said = t.text(&["clients", "disable", &client_id.to_string()]);
    assert!(said.contains("may take up to 5 seconds"), "{said}");

    // Nothing the tool printed along the way leaked a secret other than at creation: each
    // client secret was printed by exactly one run (its `clients create`), the passwords by none.
    t.fails(&["no-such-verb"], 2);
    assert!(
        t.transcript.lock().unwrap().len() > 30,
        "every run is in the transcript"
    );
    for client_secret in [&secret, &other_secret] {
        assert_eq!(
            t.runs_that_printed(client_secret),
            1,
            "a client secret reprinted"
        );
    }
    for user_password in [password, "s3cret pass"] {
        assert_eq!(t.runs_that_printed(user_password), 0, "a password printed");
    }
}

/// A family with its first refresh token and access token, as a password grant writes them.
async fn issue_family(
    store: &dyn Store,
    client_id: ClientId,
    user_id: PrincipalId,
) -> (FamilyId, TokenId) {
    let now = now();
    let family_id = FamilyId::new(Uuid::new_v4());
    let refresh = TokenHash::of(&format!("refresh-{family_id}"));
    let scopes = Scopes::parse("read").unwrap();
    let family = Family {
        id: family_id,
        client_id,
        principal_type: PrincipalType::User,
        principal_id: user_id,
        scopes: scopes.clone(),
        geolocation: token_service::domain::Geolocation::parse(HOME).unwrap(),
        current_token: refresh.clone(),
        generation: 0,
        created_at: now,
        expires_at: now + 86_400,
        revoked_at: None,
    };
    let refresh_token = RefreshTokenRecord {
        token_hash: refresh,
        family_id,
        client_id,
        generation: 0,
        issued_at: now,
        expires_at: now + 86_400,
        rotated_at: None,
    };
    let jti = TokenId::new(Uuid::new_v4());
    let access_token = AccessTokenRecord {
        jti,
        client_id,
        principal_type: PrincipalType::User,
        subject: *user_id.as_uuid(),
        family_id: Some(family_id),
        scopes,
        issued_at: now,
        expires_at: now + 3600,
        revoked: false,
    };
    store
        .create_family(NewFamily {
            family: &family,
            refresh_token: &refresh_token,
            access_token: &access_token,
            legacy_exchange: None,
        })
        .await
        .unwrap();
    (family_id, jti)
}

// ---------------------------------------------------------------------------------------------
// The legacy-token import.

const IMPORT_LINES: usize = 3_000;
const USER: &str = "6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b";
const COMPANY: &str = "0e8f3c4a-1b2c-4d5e-8f90-a1b2c3d4e5f6";

fn old_token(line: usize) -> String {
    format!("old-refresh-token-{line:07}-Zm9vYmFy")
}

/// A valid line; every 10th is a WSAdmin token, every 7th a company's, every 3rd expires.
fn valid_line(line: usize, expires_at: UnixTime) -> String {
    let mut value = serde_json::json!({
        "token": old_token(line),
        "consumer_key": "qyprd-OLD",
        "principal_type": if line % 7 == 0 { "company" } else { "user" },
        "principal_id": if line % 7 == 0 { COMPANY } else { USER },
        "scopes": ["com.example.read", "com.example.write"],
        "wsadmin": line % 10 == 0,
    });
    if line % 10 == 0 {
        value["company_id"] = COMPANY.into();
    }
    if line % 3 == 0 {
        value["expires_at"] = expires_at.into();
    }
    value.to_string()
}

/// Invalid and blank lines at fixed line numbers, with the reason the report must give.
fn special_line(line: usize) -> Option<(String, Option<&'static str>)> {
    let valid: Value = serde_json::from_str(&valid_line(line, now() + 86_400)).unwrap();
    let with = |key: &str, v: Value| {
        let mut value = valid.clone();
        value[key] = v;
        value.to_string()
    };
    Some(match line {
        5 => ("this is not json".to_owned(), Some("not a JSON object")),
        9 => (
            with("principal_id", "nope".into()),
            Some("principal id must be a UUID"),
        ),
        13 => (
            {
                let mut value = valid.clone();
                value["wsadmin"] = true.into();
                value.as_object_mut().unwrap().remove("company_id");
                value.to_string()
            },
            Some("company_id is required when wsadmin is true"),
        ),
        17 => (
            with("principal_type", "application".into()),
            Some("principal_type"),
        ),
        21 => (with("expires_at", (now() - 10).into()), Some("expired")),
        25 => (
            {
                let mut value = valid.clone();
                value.as_object_mut().unwrap().remove("wsadmin");
                value.to_string()
            },
            Some("missing field `wsadmin`"),
        ),
        27 => (
            with("scopes", serde_json::json!(["two words"])),
            Some("scopes"),
        ),
        29 => (String::new(), None),
        33 => ("   ".to_owned(), None),
        _ => return None,
    })
}

const SKIPPED_LINES: [u64; 7] = [5, 9, 13, 17, 21, 25, 27];
const BLANK_LINES: u64 = 2;

fn write_import_file(path: &Path, expires_at: UnixTime) {
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for line in 1..=IMPORT_LINES {
        let text = match special_line(line) {
            Some((text, _)) => text,
            None => valid_line(line, expires_at),
        };
        writeln!(file, "{text}").unwrap();
    }
    file.flush().unwrap();
}

fn valid_line_numbers() -> impl Iterator<Item = usize> {
    (1..=IMPORT_LINES).filter(|line| special_line(*line).is_none())
}

async fn legacy_token_import(t: Target) {
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
    assert!(
        t.store
            .get_legacy_token(&TokenHash::of(&old_token(9)), now())
            .await
            .unwrap()
            .is_none(),
        "a skipped line is not imported"
    );

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
        let legacy_items = scan(store)
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
    assert!(t
        .store
        .get_legacy_token(&TokenHash::of(&old_token(4_000_001)), now())
        .await
        .unwrap()
        .is_some());

    // A file that cannot be read.
    let missing = t.dir.path().join("missing.jsonl").display().to_string();
    let reason = t.fails(&["legacy-tokens", "import", &missing], 1);
    assert!(reason.contains("cannot read"), "{reason}");
    let dir = t.dir.path().display().to_string();
    t.fails(&["legacy-tokens", "import", &dir], 1);
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

// ---------------------------------------------------------------------------------------------
// table create, keys rotate, configuration and store failures.

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
async fn keys_rotate_the_local_key_file_or_a_key_ring_document() {
    let t = Target::sqlite().await;
    let local = t.dir.path().join("signing-keys.json");

    let first = t.json(&["keys", "rotate"]);
    let second = t.json(&["keys", "rotate"]);
    assert_ne!(first["kid"], second["kid"]);
    assert_eq!(str_field(&second, "file"), local.display().to_string());
    let document: KeyRingDocument =
        serde_json::from_str(&std::fs::read_to_string(&local).unwrap()).unwrap();
    let kids: Vec<&str> = document.keys.iter().map(|k| k.kid.as_str()).collect();
    assert_eq!(kids, [str_field(&first, "kid"), str_field(&second, "kid")]);
    let ring = KeyRing::from_document(&document).unwrap();
    assert_eq!(
        ring.signing_key().0,
        str_field(&second, "kid"),
        "the newest signs"
    );

    // A document to upload to Secrets Manager: created, then rotated; private to the owner.
    let ring_file = t.dir.path().join("ring.json");
    let ring_path = ring_file.display().to_string();
    let created = t.json(&["keys", "rotate", "--file", &ring_path]);
    assert_eq!(created["keys"], 1);
    let rotated = t.json(&["keys", "rotate", "--file", &ring_path]);
    assert_eq!(rotated["keys"], 2);
    let document: KeyRingDocument =
        serde_json::from_str(&std::fs::read_to_string(&ring_file).unwrap()).unwrap();
    assert_eq!(
        document.keys.last().unwrap().kid,
        str_field(&rotated, "kid")
    );
    KeyRing::from_document(&document).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&ring_file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let text = t.text(&["keys", "rotate", "--file", &ring_path]);
    assert!(!text.contains("PRIVATE KEY"), "{text}");

    let not_a_ring = t.dir.path().join("other.json");
    std::fs::write(&not_a_ring, "{\"hello\": 1}").unwrap();
    t.fails(
        &[
            "keys",
            "rotate",
            "--file",
            &not_a_ring.display().to_string(),
        ],
        2,
    );

    // Keys kept in Secrets Manager are rotated through a downloaded file only.
    let out = t
        .command()
        .args(["keys", "rotate"])
        .env(
            "SIGNING_KEYS_SECRET_ARN",
            "arn:aws:secretsmanager:us-east-1:1:secret:k",
        )
        .output()
        .unwrap();
    let reason = assert_failure(&out, &["keys", "rotate"], 2);
    assert!(reason.contains("--file"), "{reason}");
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
    let dead = "http://127.0.0.1:9";
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
        assert!(t
            .store
            .get_legacy_token(&TokenHash::of(&old_token(line)), now())
            .await
            .unwrap()
            .is_some());
    }
}
