//! A real browser for the page tests: headless Chromium driven over WebDriver (`chromedriver`
//! from Debian's `chromium-driver`, started here on a loopback port it picks itself) with
//! `fantoccini`.
//!
//! Pages are driven the way a person uses them: fields are found by their visible label,
//! buttons by their text. Screenshots go to `target/screenshots/` for review.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use url::Url;

/// ChromeDriver's WebAuthn extension command that adds a virtual authenticator.
#[derive(Debug)]
struct AddVirtualAuthenticator;

impl fantoccini::wd::WebDriverCompatibleCommand for AddVirtualAuthenticator {
    fn endpoint(&self, base: &Url, session: Option<&str>) -> Result<Url, url::ParseError> {
        base.join(&format!(
            "session/{}/webauthn/authenticator",
            session.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _: &Url) -> (http::Method, Option<String>) {
        let body = serde_json::json!({
            "protocol": "ctap2",
            "transport": "internal",
            "hasResidentKey": true,
            "hasUserVerification": true,
            "isUserVerified": true,
            "automaticPresenceSimulation": true,
        });
        (http::Method::POST, Some(body.to_string()))
    }
}

/// ChromeDriver's WebAuthn extension command that sets whether user verification succeeds.
#[derive(Debug)]
struct SetUserVerified {
    authenticator: String,
    verified: bool,
}

impl fantoccini::wd::WebDriverCompatibleCommand for SetUserVerified {
    fn endpoint(&self, base: &Url, session: Option<&str>) -> Result<Url, url::ParseError> {
        base.join(&format!(
            "session/{}/webauthn/authenticator/{}/uv",
            session.unwrap_or_default(),
            self.authenticator
        ))
    }

    fn method_and_body(&self, _: &Url) -> (http::Method, Option<String>) {
        let body = serde_json::json!({ "isUserVerified": self.verified });
        (http::Method::POST, Some(body.to_string()))
    }
}

/// Overridable for machines where the binaries live elsewhere.
fn chromedriver_path() -> String {
    std::env::var("CHROMEDRIVER").unwrap_or_else(|_| "/usr/bin/chromedriver".into())
}

fn chromium_path() -> String {
    std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into())
}

/// Flags for a quiet, sandbox-free headless run that touches no network but loopback.
const CHROMIUM_ARGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    // A phone-sized window: the pages must read well there.
    "--window-size=414,896",
];

/// Generous: on two cores, with the DynamoDB suites and schemathesis running beside it, a
/// chromedriver once took over 20 s to announce its port. A start is not what these tests measure.
const DRIVER_START_TIMEOUT: Duration = Duration::from_secs(60);
/// Also generous, for the same reason: a page once took over 10 s to answer a form in CI while
/// the DynamoDB suites ran beside it. A wrong page still fails, with the text it shows.
const NAVIGATION_TIMEOUT: Duration = Duration::from_secs(30);

pub struct Browser {
    client: Client,
    driver: Child,
    /// A fresh profile per browser, removed on drop.
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts `chromedriver` and opens a headless Chromium session.
    pub async fn start() -> anyhow::Result<Self> {
        // `--port=0`: the driver binds a port of its own and says which, so no port is picked
        // here, released, and hoped to be still free when the driver binds it.
        let mut command = Command::new(chromedriver_path());
        command
            .arg("--port=0")
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        #[cfg(unix)]
        {
            // Its own process group, so drop can end chromedriver and the browser it started.
            use std::os::unix::process::CommandExt;
            command.process_group(0);
        }
        let driver = command
            .spawn()
            .with_context(|| format!("starting {}", chromedriver_path()))?;
        let profile = tempfile::tempdir()?;
        // From here `Browser`'s drop ends the driver if the session cannot be opened.
        let mut guard = DriverGuard(Some(driver));
        let stdout = guard.0.as_mut().and_then(|driver| driver.stdout.take());
        let port = announced_port(stdout.context("chromedriver's standard output")?).await?;
        let webdriver = format!("http://127.0.0.1:{port}");
        wait_until_listening(port).await?;

        let mut args: Vec<String> = CHROMIUM_ARGS.iter().map(|a| a.to_string()).collect();
        args.push(format!("--user-data-dir={}", profile.path().display()));
        let mut capabilities = serde_json::Map::new();
        capabilities.insert(
            "goog:chromeOptions".into(),
            serde_json::json!({ "binary": chromium_path(), "args": args }),
        );
        let client = ClientBuilder::new(HttpConnector::new())
            .capabilities(capabilities)
            .connect(&webdriver)
            .await
            .context("opening a WebDriver session")?;
        Ok(Self {
            client,
            driver: guard.0.take().expect("driver still owned"),
            _profile: profile,
        })
    }

    /// Runs `script` in the page as an asynchronous script (its last argument is the callback)
    /// with `args`: the value it called back with.
    pub async fn run_async(
        &self,
        script: &str,
        args: Vec<serde_json::Value>,
    ) -> anyhow::Result<serde_json::Value> {
        Ok(self.client.execute_async(script, args).await?)
    }

    pub async fn goto(&self, url: &str) -> anyhow::Result<()> {
        Ok(self.client.goto(url).await?)
    }

    pub async fn current_url(&self) -> anyhow::Result<Url> {
        Ok(self.client.current_url().await?)
    }

    /// The page's visible text.
    pub async fn text(&self) -> anyhow::Result<String> {
        Ok(self.client.find(Locator::Css("body")).await?.text().await?)
    }

    /// Types `value` into the field whose `<label>` reads `label`, as a person would find it.
    pub async fn fill_by_label(&self, label: &str, value: &str) -> anyhow::Result<()> {
        let label_element = self
            .client
            .find(Locator::XPath(&format!(
                "//label[normalize-space(.)={}]",
                xpath_literal(label)
            )))
            .await
            .with_context(|| format!("no label {label:?}"))?;
        let Some(id) = label_element.attr("for").await? else {
            bail!("label {label:?} names no field");
        };
        let field = self.client.find(Locator::Id(&id)).await?;
        field.clear().await?;
        field.send_keys(value).await?;
        Ok(())
    }

    /// Clicks the button that reads `text`, and waits until the page it was on is gone (the
    /// form's answer may be on the same URL, so the URL alone cannot tell) and the next one has
    /// loaded.
    pub async fn click_button(&self, text: &str) -> anyhow::Result<()> {
        let button = self
            .client
            .find(Locator::XPath(&format!(
                "//button[normalize-space(.)={}]",
                xpath_literal(text)
            )))
            .await
            .with_context(|| format!("no button {text:?}"))?;
        button.clone().click().await?;
        let deadline = Instant::now() + NAVIGATION_TIMEOUT;
        // A button of the old page reads as stale once the next page replaced it.
        while button.tag_name().await.is_ok() {
            if Instant::now() > deadline {
                bail!("clicking {text:?} did not leave the page within {NAVIGATION_TIMEOUT:?}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // The next page may still be arriving: its text is read once it has all loaded.
        loop {
            let state = self.client.execute("return document.readyState", vec![]);
            // Between two documents the script may have nowhere to run: not loaded yet.
            if state.await.ok() == Some(serde_json::json!("complete")) {
                break;
            }
            if Instant::now() > deadline {
                bail!(
                    "the page after clicking {text:?} did not load within {NAVIGATION_TIMEOUT:?}"
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(())
    }

    /// Adds a WebDriver virtual authenticator (WebAuthn Level 2, §11.3): a platform passkey
    /// store that keeps resident keys and verifies the user, as a phone or laptop would.
    /// Answers the authenticator's id.
    pub async fn add_virtual_authenticator(&self) -> anyhow::Result<String> {
        let id = self
            .client
            .issue_cmd(AddVirtualAuthenticator)
            .await
            .context("POST /session/{id}/webauthn/authenticator")?;
        id.as_str()
            .map(str::to_owned)
            .context("the authenticator's id")
    }

    /// Whether the virtual authenticator verifies the user from now on.
    pub async fn set_user_verified(
        &self,
        authenticator: &str,
        verified: bool,
    ) -> anyhow::Result<()> {
        let command = SetUserVerified {
            authenticator: authenticator.to_owned(),
            verified,
        };
        self.client
            .issue_cmd(command)
            .await
            .context("POST /session/{id}/webauthn/authenticator/{id}/uv")?;
        Ok(())
    }

    /// Clicks the button that reads `text` and stays on the page (a script's button).
    pub async fn press(&self, text: &str) -> anyhow::Result<()> {
        self.client
            .find(Locator::XPath(&format!(
                "//button[normalize-space(.)={}]",
                xpath_literal(text)
            )))
            .await
            .with_context(|| format!("no button {text:?}"))?
            .click()
            .await?;
        Ok(())
    }

    /// Waits until the page's text contains `expected`; answers the text.
    pub async fn wait_for_text(&self, expected: &str) -> anyhow::Result<String> {
        let deadline = Instant::now() + NAVIGATION_TIMEOUT;
        loop {
            let text = self.text().await.unwrap_or_default();
            if text.contains(expected) {
                return Ok(text);
            }
            if Instant::now() > deadline {
                bail!("the page never said {expected:?}; it says: {text}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Saves a PNG of the viewport as `target/screenshots/<name>.png` and returns the path.
    pub async fn screenshot(&self, name: &str) -> anyhow::Result<PathBuf> {
        let png = self.client.screenshot().await?;
        let dir = screenshot_dir();
        std::fs::create_dir_all(&dir)?;
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, png)?;
        Ok(path)
    }

    /// Ends the session (and so the browser) cleanly; drop then stops the driver.
    pub async fn close(self) -> anyhow::Result<()> {
        self.client.clone().close().await?;
        Ok(())
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        stop_driver(&mut self.driver);
    }
}

/// Stops the driver if `Browser::start` fails half-way.
struct DriverGuard(Option<Child>);

impl Drop for DriverGuard {
    fn drop(&mut self) {
        if let Some(driver) = self.0.as_mut() {
            stop_driver(driver);
        }
    }
}

/// Kills the driver's process group (the driver and any browser it left behind), then reaps.
fn stop_driver(driver: &mut Child) {
    #[cfg(unix)]
    {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", driver.id())])
            .stderr(Stdio::null())
            .status();
    }
    let _ = driver.kill();
    let _ = driver.wait();
}

/// `target/screenshots/` of this workspace (or of `CARGO_TARGET_DIR`).
pub fn screenshot_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"));
    target.join("screenshots")
}

/// The port chromedriver announces ("... started successfully on port N."); its output is
/// drained until it exits, so that a full pipe never blocks it.
async fn announced_port(stdout: ChildStdout) -> anyhow::Result<u16> {
    let (sender, announced) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let mut sender = Some(sender);
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let port = line
                .split_once("started successfully on port ")
                .and_then(|(_, rest)| rest.trim().trim_end_matches('.').parse::<u16>().ok());
            if let Some(port) = port {
                if let Some(sender) = sender.take() {
                    let _ = sender.send(port);
                }
            }
        }
    });
    match tokio::time::timeout(DRIVER_START_TIMEOUT, announced).await {
        Ok(Ok(port)) => Ok(port),
        _ => bail!("chromedriver did not announce its port within {DRIVER_START_TIMEOUT:?}"),
    }
}

async fn wait_until_listening(port: u16) -> anyhow::Result<()> {
    let deadline = Instant::now() + DRIVER_START_TIMEOUT;
    while Instant::now() < deadline {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    bail!("chromedriver did not listen on port {port} within {DRIVER_START_TIMEOUT:?}")
}

/// An XPath string literal for any text (XPath 1.0 has no escapes, hence `concat`).
fn xpath_literal(text: &str) -> String {
    if !text.contains('\'') {
        format!("'{text}'")
    } else if !text.contains('"') {
        format!("\"{text}\"")
    } else {
        let parts: Vec<String> = text.split('\'').map(|p| format!("'{p}'")).collect();
        format!("concat({})", parts.join(", \"'\", "))
    }
}
