//! A company's SAML 2.0 identity provider for the SAML tests: pysaml2, started from
//! `tests/idp/saml_idp.py` in the virtualenv `infra/identity-providers.sh` installs into
//! `.cache/idp-python`, on a loopback port, stopped when dropped. It makes its own signing key
//! at start, knows the service providers a test registers ([`SamlIdp::register_sp`]), signs its
//! users in over its login page or the JSON shortcut ([`SamlIdp::login`]), and forges the next
//! response when told to ([`SamlIdp::set_mode`]), so that tests show our SP refuses each forgery
//! a naive one would take.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::Mutex;

use super::oidc_idp::free_port;

/// Long enough for a cold start on a loaded 2-core runner (it imports pysaml2 and makes an RSA
/// key before it listens).
const START_TIMEOUT: Duration = Duration::from_secs(60);

pub struct SamlIdp {
    /// `http://127.0.0.1:PORT`; the IdP's entityID is `{base}/metadata`.
    pub base: String,
    pub port: u16,
    child: Child,
    http: reqwest::Client,
    // Its key, certificate and xmlsec1's temporary files; removed with the IdP.
    _state: tempfile::TempDir,
}

/// What the IdP makes the browser POST to the SP's assertion consumer service.
#[derive(Debug, Clone)]
pub struct SamlPost {
    pub acs: String,
    pub saml_response: String,
    pub relay_state: String,
}

impl SamlPost {
    /// The form fields, as the IdP's auto-submitting page posts them.
    pub fn form(&self) -> Vec<(&'static str, String)> {
        vec![
            ("SAMLResponse", self.saml_response.clone()),
            ("RelayState", self.relay_state.clone()),
        ]
    }

    /// The Response document itself (base64-decoded), for assertions on what was forged.
    pub fn xml(&self) -> String {
        use base64::Engine as _;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&self.saml_response)
            .expect("SAMLResponse is base64");
        String::from_utf8(bytes).expect("the Response is UTF-8")
    }

    fn from_json(answer: &Value) -> Self {
        let field = |name: &str| {
            answer[name]
                .as_str()
                .unwrap_or_else(|| panic!("the IdP's answer has no {name}: {answer}"))
                .to_owned()
        };
        Self {
            acs: field("acs"),
            saml_response: field("SAMLResponse"),
            relay_state: field("RelayState"),
        }
    }
}

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is in the workspace")
        .to_owned()
}

impl SamlIdp {
    pub async fn start() -> Self {
        let root = workspace();
        let python = root.join(".cache/idp-python/bin/python");
        assert!(
            python.is_file(),
            "the SAML IdP's virtualenv is missing: run infra/identity-providers.sh install"
        );
        let state = tempfile::tempdir().expect("a state directory for the SAML IdP");
        let port = free_port();
        let mut child = Command::new(&python)
            .arg(root.join("tests/idp/saml_idp.py"))
            .arg("--port")
            .arg(port.to_string())
            .arg("--dir")
            .arg(state.path())
            .current_dir(&root)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("the SAML IdP's python starts");
        // Both pipes are read to their end, or a full one stops the IdP mid-answer; stderr is
        // kept for the panic when it ends before it listens.
        let stderr = child.stderr.take().expect("piped");
        let errors = Arc::new(Mutex::new(String::new()));
        let kept = errors.clone();
        let drained = tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let mut kept = kept.lock().await;
                if kept.len() < 64 * 1024 {
                    kept.push_str(&line);
                    kept.push('\n');
                }
            }
        });
        let stdout = child.stdout.take().expect("piped");
        let mut lines = BufReader::new(stdout).lines();
        let base = format!("http://127.0.0.1:{port}");
        let expected = format!("listening {base}");
        let listening = tokio::time::timeout(START_TIMEOUT, async {
            loop {
                match lines.next_line().await {
                    Ok(Some(line)) if line.trim() == expected => return true,
                    Ok(Some(_)) => {}
                    Ok(None) | Err(_) => return false,
                }
            }
        })
        .await;
        let failure = match listening {
            Ok(true) => None,
            Ok(false) => Some("ended before it listened"),
            Err(_) => Some("did not listen in time"),
        };
        if let Some(how) = failure {
            let _ = child.start_kill();
            // Its last words, once stderr has closed (or after a moment, should it not).
            let _ = tokio::time::timeout(Duration::from_secs(5), drained).await;
            let why = errors.lock().await.clone();
            panic!("the SAML IdP {how}:\n{why}");
        }
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        Self {
            base,
            port,
            child,
            http,
            _state: state,
        }
    }

    /// The IdP's entityID, as an SP's configuration names it.
    pub fn entity_id(&self) -> String {
        format!("{}/metadata", self.base)
    }

    /// The IdP's metadata XML, as a company's administrator hands it to us.
    pub async fn metadata(&self) -> String {
        let answer = self.send(self.http.get(self.entity_id())).await;
        assert_eq!(answer.status(), 200, "the SAML IdP's metadata");
        answer.text().await.unwrap()
    }

    /// The IdP trusts this SP from now on (one with the same entityID is replaced).
    pub async fn register_sp(&self, sp_metadata_xml: &str) {
        let request = self
            .http
            .post(format!("{}/test/sp", self.base))
            .header(reqwest::header::CONTENT_TYPE, "application/xml")
            .body(sp_metadata_xml.to_owned());
        let answer = self.send(request).await;
        let status = answer.status();
        assert_eq!(
            status,
            204,
            "the SAML IdP refused the SP's metadata: {}",
            text(answer).await
        );
    }

    /// Only the next response is made so (`tests/idp/saml_idp.py` lists the modes); the ones
    /// after are signed again.
    pub async fn set_mode(&self, mode: &str) {
        let answer = self.post_json("/test/mode", &json!({ "mode": mode })).await;
        let status = answer.status();
        assert_eq!(
            status,
            204,
            "the SAML IdP's mode {mode}: {}",
            text(answer).await
        );
    }

    /// `username` signs in at the IdP our SP redirected to (`sso_url`, its whole HTTP-Redirect
    /// URL): what the IdP's page would post back.
    pub async fn login(&self, sso_url: &str, username: &str, mfa: bool) -> SamlPost {
        self.sso(sso_url, username, mfa, false).await
    }

    /// The user presses Cancel on the IdP's login page: a Responder status, no assertion.
    pub async fn cancel(&self, sso_url: &str) -> SamlPost {
        self.sso(sso_url, "", false, true).await
    }

    /// An unsolicited Response (no `InResponseTo`) for the SP's assertion consumer service.
    pub async fn idp_initiated(&self, sp_entity_id: &str, username: &str, mfa: bool) -> SamlPost {
        let body = json!({ "sp": sp_entity_id, "username": username, "mfa": mfa });
        SamlPost::from_json(&self.json("/test/idp-initiated", &body).await)
    }

    /// The SP's single logout URL carrying the IdP's LogoutRequest for `username`'s last
    /// session there; `signed: false` leaves out the redirect binding's signature.
    pub async fn logout_url(&self, sp_entity_id: &str, username: &str, signed: bool) -> String {
        let body = json!({ "sp": sp_entity_id, "username": username, "signed": signed });
        let answer = self.json("/test/logout", &body).await;
        answer["url"].as_str().expect("the logout URL").to_owned()
    }

    /// The IdP's LogoutRequest for `username` over the HTTP-POST binding: where to post it and
    /// the form (`SAMLRequest`, enveloped-signed unless `signed` is false, and `RelayState`).
    pub async fn logout_post(
        &self,
        sp_entity_id: &str,
        username: &str,
        signed: bool,
    ) -> (String, Vec<(&'static str, String)>) {
        let body = json!({ "sp": sp_entity_id, "username": username, "signed": signed, "binding": "post" });
        let answer = self.json("/test/logout", &body).await;
        let field = |name: &str| answer[name].as_str().expect("the logout form").to_owned();
        (
            field("url"),
            vec![
                ("SAMLRequest", field("SAMLRequest")),
                ("RelayState", field("RelayState")),
            ],
        )
    }

    /// A signed LogoutRequest for `username` whose `Destination` is `destination`, not our
    /// single logout service, sent there all the same.
    pub async fn logout_url_to(
        &self,
        sp_entity_id: &str,
        username: &str,
        destination: &str,
    ) -> String {
        let body = json!({ "sp": sp_entity_id, "username": username, "destination": destination });
        let answer = self.json("/test/logout", &body).await;
        answer["url"].as_str().expect("the logout URL").to_owned()
    }

    /// What the IdP saw at its single logout service, oldest first.
    pub async fn records(&self) -> Vec<Value> {
        let answer = self
            .send(self.http.get(format!("{}/test/records", self.base)))
            .await;
        assert_eq!(answer.status(), 200, "the SAML IdP's records");
        answer.json().await.unwrap()
    }

    pub async fn clear_records(&self) {
        let request = self.http.delete(format!("{}/test/records", self.base));
        assert_eq!(self.send(request).await.status(), 204);
    }

    /// The persistent NameID the IdP gives `username`, computed here as it does, so that a test
    /// knows its user's subject without asking the IdP.
    pub fn name_id_of(username: &str) -> String {
        let digest = Sha256::digest(username.as_bytes());
        let mut name_id = String::from("p-");
        for byte in &digest[..8] {
            let _ = write!(name_id, "{byte:02x}");
        }
        name_id
    }

    async fn sso(&self, sso_url: &str, username: &str, mfa: bool, cancel: bool) -> SamlPost {
        let body = json!({ "url": sso_url, "username": username, "mfa": mfa, "cancel": cancel });
        SamlPost::from_json(&self.json("/test/login", &body).await)
    }

    async fn json(&self, path: &str, body: &Value) -> Value {
        let answer = self.post_json(path, body).await;
        let status = answer.status();
        let text = text(answer).await;
        assert_eq!(status, 200, "the SAML IdP's {path}: {text}");
        serde_json::from_str(&text).expect("the SAML IdP answers JSON")
    }

    async fn post_json(&self, path: &str, body: &Value) -> reqwest::Response {
        let request = self
            .http
            .post(format!("{}{path}", self.base))
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_string());
        self.send(request).await
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> reqwest::Response {
        request.send().await.expect("the SAML IdP answers")
    }
}

async fn text(answer: reqwest::Response) -> String {
    answer.text().await.unwrap_or_default()
}

impl Drop for SamlIdp {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}
