//! One built function binary as a process under its own [`RuntimeApi`].

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::{json, Value};
use tempfile::TempDir;

use super::runtime_api::{Outcome, RuntimeApi};
use super::GEOLOCATION;

/// Longest wait for a start or an answer: generous for a loaded 2-core machine.
const TIMEOUT: Duration = Duration::from_secs(60);

/// Names another build's binaries, e.g. `target/release` (`infra/bench.sh` times the release
/// functions with this debug test harness, which need not be rebuilt optimised).
pub const BINARIES_DIR_VAR: &str = "LAMBDA_BINARIES_DIR";

/// Where the function binaries are: `$LAMBDA_BINARIES_DIR`, else `target/<profile>/`, as this
/// test runs from `target/<profile>/deps/`.
pub fn binaries_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os(BINARIES_DIR_VAR).filter(|dir| !dir.is_empty()) {
        return PathBuf::from(dir);
    }
    let test_exe = std::env::current_exe().expect("the test's own path");
    test_exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("the test binary lives in target/<profile>/deps")
        .to_owned()
}

fn function_binary(name: &str) -> PathBuf {
    let binary = binaries_dir().join(name);
    assert!(
        binary.is_file(),
        "the Lambda function binary {} is missing: `cargo test` does not build the binaries of \
         other packages; run `cargo build --workspace --bins` first (infra/test.sh does)",
        binary.display()
    );
    binary
}

/// The environment the functions share, as template.yaml gives it in AWS (the key ring in
/// `DATA_DIR` instead of Secrets Manager, the table on DynamoDB Local).
pub struct FunctionEnv {
    pub endpoint: String,
    pub table_name: String,
    pub data_dir: TempDir,
}

/// One function process under its own Runtime API; killed when dropped.
pub struct RunningFunction {
    pub name: &'static str,
    api: RuntimeApi,
    child: Mutex<Child>,
    log: PathBuf,
    pub init: Duration,
}

impl RunningFunction {
    /// Starts the binary and waits for its first poll of `next`: the end of its init.
    pub async fn start(name: &'static str, env: &FunctionEnv) -> Self {
        Self::start_with(name, env, &[]).await
    }

    /// As [`Self::start`], with `extra` variables set too.
    pub async fn start_with(name: &'static str, env: &FunctionEnv, extra: &[(&str, &str)]) -> Self {
        let binary = function_binary(name);
        let api = RuntimeApi::serve(name).await;
        // One file per process: two instances of one function may run side by side.
        let log = env
            .data_dir
            .path()
            .join(format!("{name}-{}.log", uuid::Uuid::new_v4().simple()));
        let output = std::fs::File::create(&log).unwrap();
        let started = Instant::now();
        let child = Command::new(&binary)
            // Only what Lambda sets and the function reads: nothing of the developer's leaks.
            .env_clear()
            .env("AWS_LAMBDA_RUNTIME_API", api.address.to_string())
            .env("AWS_LAMBDA_FUNCTION_NAME", name)
            .env("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "256")
            .env("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST")
            .env("AWS_LAMBDA_LOG_GROUP_NAME", format!("/aws/lambda/{name}"))
            .env("AWS_LAMBDA_LOG_STREAM_NAME", "2026/11/22/[$LATEST]test")
            .env("AWS_REGION", "us-east-1")
            .env("AWS_ACCESS_KEY_ID", "local")
            .env("AWS_SECRET_ACCESS_KEY", "local")
            .env("STORE", "dynamodb")
            .env("DYNAMODB_ENDPOINT", &env.endpoint)
            .env("TABLE_NAME", &env.table_name)
            .env("GEOLOCATION", GEOLOCATION)
            .env("DATA_DIR", env.data_dir.path())
            .env("RUST_LOG", "info")
            .envs(extra.iter().copied())
            .stdin(Stdio::null())
            .stdout(output.try_clone().unwrap())
            .stderr(output)
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", binary.display()));
        let mut function = Self {
            name,
            api,
            child: Mutex::new(child),
            log,
            init: Duration::ZERO,
        };
        let first_poll = function
            .while_alive("starting", function.api.first_poll())
            .await;
        function.init = first_poll - started;
        function
    }

    /// Hands `event` to the function; returns its answer and how long it took.
    pub async fn invoke(&self, event: Value) -> (FunctionResponse, Duration) {
        let (value, took) = self.invoke_raw(event).await;
        (FunctionResponse::decode(&value), took)
    }

    /// Hands `event` to a function that is not behind API Gateway (a scheduled one); returns
    /// its answer as it posted it, and how long it took.
    pub async fn invoke_raw(&self, event: Value) -> (Value, Duration) {
        let handed_out = Instant::now();
        let answer = self.api.invoke(event);
        let (outcome, arrived) = self
            .while_alive("answering an invocation", answer)
            .await
            .expect("the Runtime API keeps the answer's sender until it answers");
        match outcome {
            Outcome::Response(value) => (value, arrived - handed_out),
            Outcome::Error(value) => self.fail(&format!("reported an invocation error: {value}")),
        }
    }

    /// Waits (up to [`TIMEOUT`]) until the function's output holds a line containing `needle`.
    pub async fn wait_for_output(&self, needle: &str) -> String {
        let found = async {
            loop {
                if let Some(line) = self.output().lines().find(|line| line.contains(needle)) {
                    return line.to_owned();
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        self.while_alive(&format!("logging {needle:?}"), found)
            .await
    }

    /// Everything the function wrote to stdout and stderr so far (its JSON log lines).
    pub fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Awaits `future`, failing with the function's output if the process exits, reports an init
    /// error, or takes longer than [`TIMEOUT`].
    async fn while_alive<T>(&self, what: &str, future: impl std::future::Future<Output = T>) -> T {
        tokio::pin!(future);
        let deadline = Instant::now() + TIMEOUT;
        loop {
            tokio::select! {
                value = &mut future => return value,
                _ = tokio::time::sleep(Duration::from_millis(20)) => {}
            }
            if let Some(status) = self.child.lock().unwrap().try_wait().unwrap() {
                self.fail(&format!("exited ({status}) while {what}"));
            }
            if let Some(error) = self.api.init_error() {
                self.fail(&format!("reported an init error while {what}: {error}"));
            }
            if Instant::now() > deadline {
                self.fail(&format!("did not finish {what} within {TIMEOUT:?}"));
            }
        }
    }

    fn fail(&self, why: &str) -> ! {
        let output = self.output();
        let tail: Vec<&str> = output.lines().rev().take(30).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        panic!(
            "function {} {why}\n--- its last output lines:\n{}",
            self.name,
            tail.join("\n")
        );
    }
}

impl Drop for RunningFunction {
    fn drop(&mut self) {
        let child = self.child.get_mut().unwrap();
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// A function's answer: API Gateway's response object, its body parsed as JSON.
pub struct FunctionResponse {
    pub status: u64,
    pub body: Value,
}

impl FunctionResponse {
    fn decode(response: &Value) -> Self {
        let raw = response["body"].as_str().unwrap_or_default();
        let bytes = if response["isBase64Encoded"] == true {
            STANDARD.decode(raw).expect("a base64 body")
        } else {
            raw.as_bytes().to_vec()
        };
        Self {
            status: response["statusCode"].as_u64().expect("a statusCode"),
            body: serde_json::from_slice(&bytes).unwrap_or_else(|_| json!(raw)),
        }
    }
}
