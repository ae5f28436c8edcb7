//! A company's OpenID Provider for the federation tests: node-oidc-provider, started from
//! `tests/idp/oidc_provider.mjs` with the packages `infra/identity-providers.sh` installs into
//! `.cache/idp-node`, on a loopback port, stopped when dropped. Its users sign in on its own
//! login page, over HTTP ([`OidcIdp::sign_in`]) or in Chromium; it can forge the ID tokens it
//! answers ([`OidcIdp::forge`]).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;

use reqwest::header;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// The one client the IdP knows: the service, as a company's administrator registers it.
pub const CLIENT_ID: &str = "token-service";
pub const CLIENT_SECRET: &str = "idp-client-secret-that-is-long-enough-0123456789";

pub struct OidcIdp {
    child: Child,
    pub issuer: String,
    pub port: u16,
    http: reqwest::Client,
}

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is in the workspace")
        .to_owned()
}

/// The IdP's script beside its packages (where they resolve), copied there once per test
/// process and atomically: tests start IdPs in parallel, and a node reading a half-copied
/// script would end at once.
fn installed_script(cache: &std::path::Path) -> PathBuf {
    static INSTALLED: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    INSTALLED
        .get_or_init(|| {
            let script = cache.join("oidc_provider.mjs");
            let source = std::fs::read(workspace().join("tests/idp/oidc_provider.mjs"))
                .expect("read the IdP script");
            if std::fs::read(&script).ok().as_deref() != Some(source.as_slice()) {
                let partial = cache.join(format!("oidc_provider.{}.mjs.part", std::process::id()));
                std::fs::write(&partial, &source).expect("write the IdP script");
                std::fs::rename(&partial, &script).expect("install the IdP script");
            }
            script
        })
        .clone()
}

/// A loopback port for an IdP, picked before the app that must be allowed to call it starts.
/// Below the ephemeral range (32768 and up), so that no connection another test opens takes it
/// as its own end before the IdP listens there.
pub fn free_port() -> u16 {
    loop {
        let random = uuid::Uuid::new_v4();
        let bytes = random.as_bytes();
        let port = 20_000 + u16::from_le_bytes([bytes[0], bytes[1]]) % 12_000;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

impl OidcIdp {
    /// An IdP on `port` whose client redirects to `app_address`'s callback and logout return.
    pub async fn start(port: u16, app_address: &str) -> Self {
        Self::start_with(port, app_address, "client_secret_basic").await
    }

    pub async fn start_with(
        port: u16,
        app_address: &str,
        token_endpoint_auth_method: &str,
    ) -> Self {
        let cache = workspace().join(".cache/idp-node");
        assert!(
            cache.join("node_modules/oidc-provider").is_dir(),
            "node-oidc-provider is not installed: run infra/identity-providers.sh install"
        );
        let script = installed_script(&cache);
        let config = json!({
            "port": port,
            "clients": [{
                "client_id": CLIENT_ID,
                "client_secret": CLIENT_SECRET,
                "redirect_uris": [format!("{app_address}/federation/v0/oidc/callback")],
                "post_logout_redirect_uris": [format!("{app_address}/federation/v0/oidc/logged-out")],
                "token_endpoint_auth_method": token_endpoint_auth_method,
                "grant_types": ["authorization_code"],
                "response_types": ["code"],
            }],
        });
        let mut child = Command::new("node")
            .arg(&script)
            .arg(config.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("node starts");
        let stdout = child.stdout.take().expect("piped");
        let mut stderr = child.stderr.take().expect("piped");
        let mut lines = BufReader::new(stdout).lines();
        let port = loop {
            let line = lines.next_line().await.expect("the IdP's output");
            let Some(line) = line else {
                let mut why = String::new();
                let _ = tokio::io::AsyncReadExt::read_to_string(&mut stderr, &mut why).await;
                panic!("the IdP ended before it listened: {why}");
            };
            if let Some(port) = line.strip_prefix("listening ") {
                break port.trim().parse::<u16>().expect("a port");
            }
        };
        // Its warnings go nowhere, but are read, so that a full pipe never stops it.
        tokio::spawn(async move {
            let _ = tokio::io::copy(&mut stderr, &mut tokio::io::sink()).await;
        });
        // Read on, or the provider's later notices hit a closed pipe and end it.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        Self {
            child,
            issuer: format!("http://127.0.0.1:{port}"),
            port,
            http,
        }
    }

    /// `host:port`, as `CLIENT_ID_METADATA_ALLOW_HOSTS` allows it.
    pub fn host_port(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The next ID tokens answered are forged so (see `tests/idp/oidc_provider.mjs`); `none`
    /// stops.
    pub async fn forge(&self, mode: &str) {
        let answer = self
            .http
            .post(format!("{}/test/forge", self.issuer))
            .body(json!({ "mode": mode }).to_string())
            .send()
            .await
            .expect("the IdP answers");
        assert!(answer.status().is_success());
    }

    /// The account `sub`'s email from now on (verified; its `sub` stays).
    pub async fn set_email(&self, sub: &str, email: &str) {
        let answer = self
            .http
            .post(format!("{}/test/email", self.issuer))
            .body(json!({ "sub": sub, "email": email }).to_string())
            .send()
            .await
            .expect("the IdP answers");
        assert!(answer.status().is_success());
    }

    /// A browser at the IdP with no cookies yet.
    pub fn browser(&self) -> IdpBrowser<'_> {
        IdpBrowser {
            idp: self,
            cookies: BTreeMap::new(),
        }
    }

    /// [`IdpBrowser::sign_in`] in a browser of its own.
    pub async fn sign_in(&self, authorization: &str, login: &str, cancel: bool) -> String {
        self.browser().sign_in(authorization, login, cancel).await
    }

    /// The IdP's metadata, as we fetch it.
    pub async fn metadata(&self) -> Value {
        self.http
            .get(format!("{}/.well-known/openid-configuration", self.issuer))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }
}

/// One browser's visits to the IdP: its cookies (the IdP's session) kept between them.
pub struct IdpBrowser<'a> {
    idp: &'a OidcIdp,
    cookies: BTreeMap<String, String>,
}

impl IdpBrowser<'_> {
    /// From our redirect (`authorization`) through the IdP's login page as `login` (`cancel`:
    /// the Cancel button instead), to the IdP's redirect back to us. Answers that `Location`.
    pub async fn sign_in(&mut self, authorization: &str, login: &str, cancel: bool) -> String {
        let issuer = self.idp.issuer.clone();
        let mut location = authorization.to_owned();
        let mut posted = false;
        for _ in 0..10 {
            if !location.starts_with(&issuer) {
                return location;
            }
            let page = self.send(self.idp.http.get(&location)).await;
            if page.status().is_redirection() {
                location = redirect_of(&page, &issuer);
                continue;
            }
            assert_eq!(page.status(), 200, "the IdP's login page at {location}");
            assert!(!posted, "the IdP asked twice");
            let html = page.text().await.unwrap();
            let action = attribute(&html, "action").expect("the login form");
            let go = if cancel { "cancel" } else { "login" };
            let form = [("login", login), ("password", "any"), ("go", go)];
            let post = self.idp.http.post(format!("{issuer}{action}")).form(&form);
            let answer = self.send(post).await;
            posted = true;
            location = redirect_of(&answer, &issuer);
        }
        panic!("the IdP never sent the browser back: {location}");
    }

    /// The IdP's sign-out page at `location` (its `end_session_endpoint`), confirmed: the
    /// `Location` it sends the browser back to.
    pub async fn sign_out(&mut self, location: &str) -> String {
        let issuer = self.idp.issuer.clone();
        let page = self.send(self.idp.http.get(location)).await;
        if page.status().is_redirection() {
            return redirect_of(&page, &issuer);
        }
        assert_eq!(page.status(), 200, "the IdP's sign-out page");
        let html = page.text().await.unwrap();
        let action = attribute(&html, "action").expect("the sign-out form");
        let xsrf = html
            .split("name=\"xsrf\" value=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .expect("the sign-out form's xsrf");
        let form = [("xsrf", xsrf), ("logout", "yes")];
        let answer = self.send(self.idp.http.post(action).form(&form)).await;
        redirect_of(&answer, &issuer)
    }

    async fn send(&mut self, request: reqwest::RequestBuilder) -> reqwest::Response {
        let header_value = self
            .cookies
            .iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect::<Vec<_>>()
            .join("; ");
        let response = request
            .header(header::COOKIE, header_value)
            .send()
            .await
            .expect("the IdP answers");
        for set in response.headers().get_all(header::SET_COOKIE) {
            let pair = set.to_str().unwrap().split(';').next().unwrap();
            if let Some((name, value)) = pair.split_once('=') {
                self.cookies.insert(name.to_owned(), value.to_owned());
            }
        }
        response
    }
}

/// The first `name="…"` attribute's value in `html`.
fn attribute<'h>(html: &'h str, name: &str) -> Option<&'h str> {
    html.split(&format!("{name}=\"")).nth(1)?.split('"').next()
}

/// A redirect's absolute `Location` (relative ones resolved against `base`).
fn redirect_of(response: &reqwest::Response, base: &str) -> String {
    assert!(
        response.status().is_redirection(),
        "a redirect, got {}",
        response.status()
    );
    let location = response.headers()[header::LOCATION].to_str().unwrap();
    url::Url::parse(base)
        .unwrap()
        .join(location)
        .unwrap()
        .to_string()
}

impl Drop for OidcIdp {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}
