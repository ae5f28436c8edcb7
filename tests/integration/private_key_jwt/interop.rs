//! Real clients: authlib's `PrivateKeyJWT` (Python, `tests/interop/python/rp.py`, case
//! `private-key-jwt`: discovery, client_credentials, introspection, a replay, another key), and
//! the Rust `oauth2` crate, which has no `private_key_jwt` of its own: its client_credentials
//! request carries the assertion as extra parameters, with `client_id` in the body.

use std::path::Path;
use std::process::Command;

use crate::support::app::TestApp;
use oauth2::basic::BasicClient;
use oauth2::{AuthType, TokenResponse, TokenUrl};
use serde_json::Value;
use token_core::admin;
use token_domain::ClientId;

use super::keys::ClientKey;
use super::*;

crate::on_both_stores!(authlib_private_key_jwt, oauth2_crate_with_an_assertion);

fn python() -> std::path::PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned();
    let python = root.join(".cache/rp-venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run `infra/relying-parties.sh install` (infra/test.sh does)",
        python.display()
    );
    python
}

fn rp_script() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("interop/python/rp.py")
}

/// Runs rp.py with `env`; its JSON result, once it exited successfully.
async fn run_rp(env: Vec<(&'static str, String)>) -> Value {
    let mut command = Command::new(python());
    command.arg(rp_script()).envs(env);
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .unwrap()
        .expect("start the authlib driver");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "rp.py: {stdout}\n{stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|_| panic!("rp.py printed {stdout}"))
}

async fn authlib_private_key_jwt(app: TestApp) {
    // The client is registered first with a secret only, then the driver's key, as an operator
    // does with `tokenctl clients set-jwks`.
    let mut new = admin::NewClient::named("authlib app", Scopes::parse("read").unwrap());
    new.grants = [GrantType::ClientCredentials].into_iter().collect();
    let client = app.create_client_with(new).await;
    let dir = tempfile::tempdir().unwrap();
    let (jwks, key) = (dir.path().join("jwks.json"), dir.path().join("key.json"));
    run_rp(vec![
        ("MODE", "register".into()),
        ("ISSUER", app.address.clone()),
        ("JWKS_OUT", jwks.display().to_string()),
        ("PRIVATE_KEY_FILE", key.display().to_string()),
    ])
    .await;
    let set = admin::parse_jwks(&std::fs::read_to_string(&jwks).unwrap()).unwrap();
    let id = ClientId::parse(&client.id).unwrap();
    admin::set_client_jwks(app.ctx(), &id, set).await.unwrap();

    let results = run_rp(vec![
        ("CASE", "private-key-jwt".into()),
        ("ISSUER", app.address.clone()),
        ("CLIENT_ID", client.id.clone()),
        ("PRIVATE_KEY_FILE", key.display().to_string()),
    ])
    .await;
    let result = &results["private-key-jwt"];
    assert_eq!(result["ok"], true, "{result}");
    assert_eq!(result["replay"], 401, "{result}");
    assert_eq!(result["other_key"], 401, "{result}");
}

async fn oauth2_crate_with_an_assertion(app: TestApp) {
    let key = ClientKey::ps256("rsa");
    let client = client_with_keys(&app, &[&key]).await;
    let oauth = BasicClient::new(oauth2::ClientId::new(client.id.clone()))
        .set_auth_type(AuthType::RequestBody)
        .set_token_uri(TokenUrl::new(app.url("/oauth2/v0/token")).unwrap());
    let assertion = key.sign(&claims(&app, &client));
    let tokens = oauth
        .exchange_client_credentials()
        .add_extra_param("client_assertion_type", ASSERTION_TYPE)
        .add_extra_param("client_assertion", assertion.clone())
        .request_async(&app.http)
        .await
        .expect("client_credentials with an assertion");
    assert_eq!(
        tokens.access_token().secret().split('.').count(),
        3,
        "a JWT access token"
    );
    let replayed = oauth
        .exchange_client_credentials()
        .add_extra_param("client_assertion_type", ASSERTION_TYPE)
        .add_extra_param("client_assertion", assertion)
        .request_async(&app.http)
        .await;
    assert!(replayed.is_err(), "the library sees the replay refused");
}
