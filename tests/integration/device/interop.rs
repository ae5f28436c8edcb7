//! A real client library completes the device flow unchanged: openid-client 6's
//! `initiateDeviceAuthorization` and `pollDeviceAuthorizationGrant`
//! (`tests/interop/node/device.mjs`, discovery from the issuer's metadata) as a public client,
//! while this test plays the user on the verification page in Chromium. The tokens the library
//! ends with are then introspected.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use super::page::{APP_NAME, LOGIN, PASSWORD};
use super::*;
use crate::support::browser::Browser;
use crate::support::relying_party::follow_real_time;
use token_core::admin::{self, NewClient};
use token_domain::{ClientAuthMethod, ClientId, GrantType, Scopes};
use tokio::sync::mpsc;

crate::on_both_stores!(openid_client_polls_while_the_user_allows_in_a_browser);

/// A device app as an operator would set one up for a TV: the device and refresh grants, pinned
/// to `none` (its `client_id` alone).
async fn public_device_client(app: &TestApp) -> TestClient {
    let mut new = NewClient::named(APP_NAME, Scopes::parse("read").unwrap());
    new.grants = [GrantType::DeviceCode, GrantType::RefreshToken]
        .into_iter()
        .collect();
    let client = app.create_client_with(new).await;
    let id = ClientId::parse(&client.id).unwrap();
    admin::set_auth_method(app.ctx(), &id, Some(ClientAuthMethod::Public))
        .await
        .unwrap();
    client
}

/// `device.mjs` started against `app`: its JSON lines arrive on the receiver as it prints
/// them.
fn start_library(
    app: &TestApp,
    client: &TestClient,
) -> (std::process::Child, mpsc::UnboundedReceiver<Value>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let packages = root.join(".cache/rp-node");
    assert!(
        packages.join("node_modules/openid-client").exists(),
        "{} is missing: run `infra/relying-parties.sh install` (infra/test.sh does)",
        packages.display()
    );
    let mut child = Command::new(std::env::var("NODE").unwrap_or("node".into()))
        .arg(root.join("tests/interop/node/device.mjs"))
        .env("RP_NODE_DIR", packages)
        .env("ISSUER", &app.address)
        .env("CLIENT_ID", &client.id)
        .env("SCOPE", "openid read")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node starts");
    let stdout = child.stdout.take().unwrap();
    let (lines, received) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let value = serde_json::from_str(&line)
                .unwrap_or_else(|_| serde_json::json!({ "unparsed": line }));
            if lines.send(value).is_err() {
                break;
            }
        }
    });
    (child, received)
}

async fn next_line(received: &mut mpsc::UnboundedReceiver<Value>, what: &str) -> Value {
    tokio::time::timeout(Duration::from_secs(60), received.recv())
        .await
        .unwrap_or_else(|_| panic!("no {what} from device.mjs within 60 s"))
        .unwrap_or_else(|| panic!("device.mjs ended before printing {what}"))
}

/// The user's part: the page from `verification_uri_complete` (the code pre-filled), sign in,
/// allow.
async fn allow_in_a_browser(shown: &Value) {
    let browser = Browser::start()
        .await
        .expect("chromedriver and chromium start");
    let complete = shown["verification_uri_complete"].as_str().unwrap();
    browser.goto(complete).await.unwrap();
    browser.click_button("Continue").await.unwrap();
    browser.fill_by_label("Login", LOGIN).await.unwrap();
    browser.fill_by_label("Password", PASSWORD).await.unwrap();
    browser.click_button("Sign in").await.unwrap();
    let text = browser.text().await.unwrap();
    assert!(text.contains("Allow access on your device?"), "{text}");
    assert!(text.contains(APP_NAME), "{text}");
    browser.click_button("Allow").await.unwrap();
    let text = browser.text().await.unwrap();
    assert!(text.contains("Return to your device"), "{text}");
    browser.close().await.unwrap();
}

async fn openid_client_polls_while_the_user_allows_in_a_browser(app: TestApp) {
    let user = app.create_user(LOGIN, PASSWORD).await;
    let client = public_device_client(&app).await;
    // The library checks the ID token's `iat` and `exp` against its own clock.
    follow_real_time(&app);
    let (child, mut received) = start_library(&app, &client);

    let shown = next_line(&mut received, "the codes").await;
    assert_eq!(
        shown["verification_uri"],
        app.url("/oauth2/v0/device").as_str(),
        "{shown}"
    );
    assert_eq!(shown["interval"], 5, "{shown}");
    allow_in_a_browser(&shown).await;

    let outcome = next_line(&mut received, "the tokens").await;
    let output = tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(outcome["ok"], true, "{outcome:#}\n{stderr}");
    assert!(output.status.success(), "{stderr}");
    assert_eq!(
        outcome["token_type"].as_str().map(str::to_lowercase),
        Some("bearer".into())
    );
    assert_eq!(outcome["scope"], "openid read", "{outcome}");
    let claims = &outcome["claims"];
    assert_eq!(claims["sub"], user.id.to_string(), "{claims}");
    let aud = &claims["aud"];
    assert!(
        aud == client.id.as_str()
            || aud
                .as_array()
                .is_some_and(|a| a.contains(&client.id.as_str().into())),
        "{claims}"
    );
    assert_eq!(claims["iss"], app.address.as_str(), "{claims}");
    assert!(outcome["id_token"].is_string(), "{outcome}");

    // Valid tokens, as the server sees them: introspected by the same public client.
    for (token, kind) in [("access_token", "access"), ("refresh_token", "refresh")] {
        let token = outcome[token]
            .as_str()
            .unwrap_or_else(|| panic!("no {kind} token: {outcome}"));
        let (status, body) = json_of(
            app.post_form(
                "/oauth2/v0/introspect",
                &[("client_id", client.id.as_str()), ("token", token)],
            )
            .await,
        )
        .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["active"], true, "the {kind} token: {body}");
        assert_eq!(body["client_id"], client.id.as_str(), "{body}");
    }
}
