//! The local server's first screen, as `cargo run` shows it: the built `token-service` binary
//! started in a fresh `DATA_DIR` (so it creates its demo data), its console read up to the line
//! that says where it listens; and its demo data on a second start. `cargo test` does not build the binaries of other packages: run
//! `cargo build --workspace --bins` first (`infra/test.sh` builds every target).

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The banner's first line and its last.
const BANNER_START: &str = "Demo data (local only";
const LISTENING: &str = "Token service listening on ";
/// Longest wait for the banner: generous for a loaded 2-core machine.
const TIMEOUT: Duration = Duration::from_secs(60);
/// How long the console is read on after the banner: more than the server's log buffer waits
/// (200 ms) before it writes, so that a line logged before the banner but written after it
/// is seen.
const AFTERWARDS: Duration = Duration::from_millis(700);

/// At the default level, the console shows start-up's own lines, then the instructions once,
/// its steps numbered 1, 2, … once each, and no audit event before or after them (they are
/// stored, and `RUST_LOG` shows them).
#[test]
fn at_the_default_level_the_first_screen_is_the_instructions_without_audit_lines() {
    let screen = first_screen(None);
    let audit: Vec<&String> = screen.iter().filter(|line| is_audit(line)).collect();
    assert!(audit.is_empty(), "audit lines on the console: {screen:#?}");
    let start = banner_start(&screen);
    assert!(
        !screen[start..].iter().any(|line| is_log_line(line)),
        "a log line inside or after the instructions: {screen:#?}"
    );
    let end = listening(&screen);
    let steps: Vec<u32> = screen[start..end]
        .iter()
        .filter_map(|line| line.split_once(". ")?.0.parse().ok())
        .collect();
    let expected: Vec<u32> = (1..=9).collect();
    assert_eq!(steps, expected, "{screen:#?}");
}

/// With `RUST_LOG=info` the demo data's audit events are shown, all of them before the
/// instructions: log lines buffered at start-up are written before the banner, not after it.
#[test]
fn with_rust_log_info_the_start_up_audit_lines_come_before_the_instructions() {
    let screen = first_screen(Some("info"));
    let start = banner_start(&screen);
    for event in [
        "client.created",
        "company.created",
        "user.created",
        "legacy_app.linked",
    ] {
        assert!(
            screen[..start]
                .iter()
                .any(|line| is_audit(line) && line.contains(event)),
            "no {event} before the instructions: {screen:#?}"
        );
    }
    assert!(
        !screen[start..].iter().any(|line| is_log_line(line)),
        "a log line inside or after the instructions: {screen:#?}"
    );
}

fn listening(screen: &[String]) -> usize {
    screen
        .iter()
        .position(|line| line.starts_with(LISTENING))
        .expect("read up to this line")
}

fn banner_start(screen: &[String]) -> usize {
    let starts: Vec<usize> = (0..screen.len())
        .filter(|&i| screen[i].starts_with(BANNER_START))
        .collect();
    assert_eq!(starts.len(), 1, "the instructions once: {screen:#?}");
    starts[0]
}

/// A line of the log (`2026-…Z  INFO target: …`), not of the banner.
fn is_log_line(line: &str) -> bool {
    line.get(..4)
        .is_some_and(|year| year.bytes().all(|b| b.is_ascii_digit()))
        && line.contains("Z ")
}

fn is_audit(line: &str) -> bool {
    is_log_line(line) && line.contains(" audit: ")
}

/// The built local server, next to this test's own directory (`target/<profile>/`).
fn binary() -> PathBuf {
    let test_exe = std::env::current_exe().expect("the test's own path");
    let binary = test_exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("the test binary lives in target/<profile>/deps")
        .join("token-service");
    assert!(
        binary.is_file(),
        "the local server binary {} is missing: `cargo test` does not build the binaries of \
         other packages; run `cargo build --workspace --bins` first (infra/test.sh does)",
        binary.display()
    );
    binary
}

/// The console of a first start on SQLite, up to the line saying where it listens and what
/// comes in the [`AFTERWARDS`] that follow (nothing calls the server meanwhile); `rust_log` is
/// `RUST_LOG`, unset when `None`. Only the variables set here reach the server.
fn first_screen(rust_log: Option<&str>) -> Vec<String> {
    let data_dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(data_dir.path(), rust_log);
    std::mem::take(&mut server.screen)
}

/// A restart on another `PORT` is another geolocation (`http://127.0.0.1:$PORT` by default):
/// the demo company and users follow it, so the banner's password grants work at the new port
/// (they answered code 16 while the users stayed at the first port's geolocation).
#[tokio::test]
async fn a_restart_on_another_port_moves_the_demo_users_to_its_geolocation() {
    let data_dir = tempfile::tempdir().unwrap();
    let first = Server::start(data_dir.path(), None);
    let first_port = first.port;
    drop(first);
    let second = Server::start(data_dir.path(), None);
    assert_ne!(second.port, first_port);
    let demo: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(data_dir.path().join("demo.json")).expect("demo.json"),
    )
    .unwrap();
    let field = |name: &str| demo[name].as_str().expect(name).to_owned();
    let http = reqwest::Client::new();
    for (client, secret, login, password) in [
        ("client_id", "client_secret", "user_login", "user_password"),
        (
            "console_client_id",
            "console_client_secret",
            "admin_login",
            "admin_password",
        ),
    ] {
        let response = http
            .post(format!("http://127.0.0.1:{}/v0/token", second.port))
            .basic_auth(field(client), Some(field(secret)))
            .form(&[
                ("grant_type", "password"),
                ("username", &field(login)),
                ("password", &field(password)),
            ])
            .send()
            .await
            .expect("the restarted server answers");
        let status = response.status();
        let body: serde_json::Value = response.json().await.unwrap();
        assert_eq!(status, 200, "{login}: {body}");
        assert!(body["access_token"].is_string(), "{login}: {body}");
    }
}

/// The local server started on a port of its own choice over `data_dir`, and its console up to
/// the line saying where it listens (and the [`AFTERWARDS`] after it); stopped when dropped.
struct Server {
    child: std::process::Child,
    port: u16,
    screen: Vec<String>,
}

impl Server {
    fn start(data_dir: &std::path::Path, rust_log: Option<&str>) -> Self {
        let mut command = Command::new(binary());
        // PORT=0: the server binds a port the system picks, named on its last line, so no
        // other test can take it between a choice here and the server's bind.
        command
            .env_clear()
            .env("DATA_DIR", data_dir)
            .env("PORT", "0")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        if let Some(filter) = rust_log {
            command.env("RUST_LOG", filter);
        }
        let mut child = command.spawn().expect("start the local server");
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut server = Self {
            child,
            port: 0,
            screen: Vec::new(),
        };
        let outcome = loop {
            match lines.recv_timeout(TIMEOUT) {
                Ok(line) => {
                    let last = line.starts_with(LISTENING);
                    server.screen.push(line);
                    if last {
                        break Ok(());
                    }
                }
                Err(error) => break Err(error),
            }
        };
        if let Err(error) = outcome {
            panic!(
                "no {LISTENING:?} line ({error}); the console so far: {:#?}",
                server.screen
            );
        }
        server.port = listening_port(server.screen.last().unwrap());
        let until = Instant::now() + AFTERWARDS;
        while let Ok(line) = lines.recv_timeout(until.saturating_duration_since(Instant::now())) {
            server.screen.push(line);
        }
        server
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The port of the "listening on http://127.0.0.1:PORT (geolocation …)" line.
fn listening_port(line: &str) -> u16 {
    line.strip_prefix(LISTENING)
        .and_then(|rest| rest.strip_prefix("http://127.0.0.1:"))
        .and_then(|rest| rest.split(' ').next())
        .and_then(|port| port.parse().ok())
        .filter(|port| *port != 0)
        .unwrap_or_else(|| panic!("no port in {line:?}"))
}
