//! Relying-party interoperability: a client and a user registered as an operator would, the
//! app's clock held on real time (the libraries check `iat`, `exp` and `auth_time` against
//! their own clock), and the Node and Python drivers of `tests/interop/` run against the app.
//!
//! The libraries are installed by `infra/relying-parties.sh install` (a step of
//! `infra/test.sh`) into `.cache/`; without them these tests fail and say so.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use token_core::admin::NewClient;
use token_domain::clock::{Clock, SystemClock};
use token_domain::{GrantType, Scopes, User};

use crate::support::app::{TestApp, TestClient};

/// The scope the relying parties ask for. `openid` is not registered for the client: every
/// client that signs users in may ask for it.
pub const SCOPE: &str = "openid profile email payroll";
const REGISTERED_SCOPES: &str = "profile email payroll";
pub const LOGIN: &str = "rp.user@example.com";
pub const PASSWORD: &str = "relying party password 1";

/// A registered relying party and the user who signs in to it.
pub struct RelyingParty {
    pub client: TestClient,
    pub user: User,
    pub redirect_uri: String,
    pub post_logout_redirect_uri: String,
}

impl RelyingParty {
    /// Registers the client (code flow, refresh, client credentials; a redirect URI and a
    /// post-logout one on the app's own origin, where nothing needs to listen: the user agents
    /// stop at the redirect) and a user with an e-mail address.
    pub async fn register(app: &TestApp) -> Self {
        let redirect_uri = app.url("/rp/callback");
        let post_logout_redirect_uri = app.url("/rp/signed-out");
        let mut new = NewClient::named("Interop RP", Scopes::parse(REGISTERED_SCOPES).unwrap());
        new.grants = [
            GrantType::AuthorizationCode,
            GrantType::RefreshToken,
            GrantType::ClientCredentials,
        ]
        .into_iter()
        .collect();
        new.redirect_uris = vec![redirect_uri.clone()];
        new.post_logout_redirect_uris = vec![post_logout_redirect_uri.clone()];
        let client = app.create_client_with(new).await;
        let user = app
            .create_user_with(LOGIN, PASSWORD, |user| {
                user.email = Some(LOGIN.to_owned());
            })
            .await;
        follow_real_time(app);
        Self {
            client,
            user,
            redirect_uri,
            post_logout_redirect_uri,
        }
    }

    /// The environment `tests/interop/*/rp.*` read.
    fn environment(&self, app: &TestApp, case: &str) -> Vec<(&'static str, String)> {
        vec![
            ("ISSUER", app.address.clone()),
            ("CLIENT_ID", self.client.id.clone()),
            ("CLIENT_SECRET", self.client.secret.clone()),
            ("REDIRECT_URI", self.redirect_uri.clone()),
            (
                "POST_LOGOUT_REDIRECT_URI",
                self.post_logout_redirect_uri.clone(),
            ),
            ("LOGIN", LOGIN.to_owned()),
            ("PASSWORD", PASSWORD.to_owned()),
            ("SCOPE", SCOPE.to_owned()),
            ("CASE", case.to_owned()),
        ]
    }
}

/// Keeps the app's manual clock on the system's time while the test runs.
pub fn follow_real_time(app: &TestApp) {
    let clock = app.clock.clone();
    clock.set(SystemClock.now());
    tokio::spawn(async move {
        loop {
            clock.set(SystemClock.now());
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
}

/// Which library drives the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Driver {
    /// `openid-client` 6 (`tests/interop/node/rp.mjs`).
    Node,
    /// `authlib` (`tests/interop/python/rp.py`).
    Python,
    /// The MCP TypeScript SDK's OAuth client, as an agent (`tests/interop/node/mcp.mjs`): it
    /// registers itself, so it uses only the user of the relying party.
    McpNode,
    /// The MCP Python SDK's OAuth client, as an agent (`tests/interop/python/mcp_agent.py`).
    McpPython,
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is inside the workspace")
        .to_owned()
}

fn installed(path: PathBuf) -> PathBuf {
    assert!(
        path.exists(),
        "{} is missing: run `infra/relying-parties.sh install` (infra/test.sh does)",
        path.display()
    );
    path
}

impl Driver {
    fn command(self) -> Command {
        let root = workspace_root();
        match self {
            Self::Node => {
                let packages = root.join(".cache/rp-node");
                installed(packages.join("node_modules/openid-client"));
                let mut command = Command::new(std::env::var("NODE").unwrap_or("node".into()));
                command
                    .arg(root.join("tests/interop/node/rp.mjs"))
                    .env("RP_NODE_DIR", packages);
                command
            }
            Self::McpNode => {
                let packages = root.join(".cache/rp-node");
                installed(packages.join("node_modules/@modelcontextprotocol/sdk"));
                let mut command = Command::new(std::env::var("NODE").unwrap_or("node".into()));
                command
                    .arg(root.join("tests/interop/node/mcp.mjs"))
                    .env("RP_NODE_DIR", packages);
                command
            }
            Self::McpPython => {
                let python = installed(root.join(".cache/rp-venv/bin/python"));
                let mut command = Command::new(python);
                command.arg(root.join("tests/interop/python/mcp_agent.py"));
                command
            }
            Self::Python => {
                let mut command = Command::new(installed(root.join(".cache/rp-venv/bin/python")));
                command.arg(root.join("tests/interop/python/rp.py"));
                command
            }
        }
    }
}

/// Runs one case of `driver` as `rp` against `app`; returns the case's result once it passed,
/// and fails the test with the driver's own message otherwise.
pub async fn run_case(app: &TestApp, rp: &RelyingParty, driver: Driver, case: &str) -> Value {
    run_case_with(app, rp, driver, case, Vec::new()).await
}

/// [`run_case`] with `extra` in the driver's environment too.
pub async fn run_case_with(
    app: &TestApp,
    rp: &RelyingParty,
    driver: Driver,
    case: &str,
    extra: Vec<(&'static str, String)>,
) -> Value {
    let mut command = driver.command();
    command.envs(rp.environment(app, case)).envs(extra);
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .unwrap()
        .unwrap_or_else(|e| panic!("{driver:?} driver did not start: {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let results: Value = serde_json::from_str(&stdout).unwrap_or_else(|_| {
        panic!(
            "{driver:?} {case}: no JSON result (exit {:?})\n{stdout}\n{stderr}",
            output.status
        )
    });
    let result = results[case].clone();
    assert_eq!(
        result["ok"], true,
        "{driver:?} {case} failed: {result:#}\n{stderr}"
    );
    assert!(output.status.success(), "{driver:?} {case}: {stderr}");
    result
}

/// Runs the Node driver `tests/interop/node/<script>` (on `.cache/rp-node`'s packages) with
/// `env`; its one JSON result, once it said `"ok": true` and exited 0.
pub async fn run_node_script(script: &str, env: Vec<(&'static str, String)>) -> Value {
    let root = workspace_root();
    let packages = root.join(".cache/rp-node");
    installed(packages.join("node_modules/openid-client"));
    let mut command = Command::new(std::env::var("NODE").unwrap_or("node".into()));
    command
        .arg(root.join("tests/interop/node").join(script))
        .env("RP_NODE_DIR", packages)
        .envs(env);
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .unwrap()
        .expect("node starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let result: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|_| panic!("{script} printed {stdout}\n{stderr}"));
    assert_eq!(result["ok"], true, "{script}: {result:#}\n{stderr}");
    assert!(output.status.success(), "{script}: {stderr}");
    result
}
