//! A real FAPI 2.0 client, unchanged: openid-client 6 (`tests/interop/node/fapi2.mjs`) with
//! `private_key_jwt`, a pushed request carrying a DPoP proof, PKCE, `iss` on the callback,
//! DPoP-bound tokens, userinfo and a refresh, against a client registered `--profile fapi2`.

use std::path::Path;
use std::process::Command;

use super::*;
use crate::support::dpop::DpopKey;
use crate::support::relying_party::{follow_real_time, LOGIN, PASSWORD};
use token_domain::{ClientProfile, GrantType};

crate::on_both_stores!(openid_client_runs_the_fapi2_profile_with_par_and_dpop);

const KID: &str = "fapi2-rp";

async fn openid_client_runs_the_fapi2_profile_with_par_and_dpop(app: TestApp) {
    let user = app.create_user(LOGIN, PASSWORD).await;
    // The client's signing key: a P-256 pair made here, its public half registered.
    let key = DpopKey::generate();
    let mut public = key.jwk();
    public["kid"] = json!(KID);
    let redirect_uri = app.url("/rp/callback");
    let mut new = NewClient::named("Bank RP", Scopes::parse("openid read").unwrap());
    new.grants = [GrantType::AuthorizationCode, GrantType::RefreshToken].into();
    new.redirect_uris = vec![redirect_uri.clone()];
    new.jwks = Some(PublicJwkSet::parse(json!({ "keys": [public] })).unwrap());
    new.profile = ClientProfile::Fapi2;
    let client = app.create_client_with(new).await;
    follow_real_time(&app);

    let mut private = key.private_jwk();
    private["kid"] = json!(KID);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let packages = root.join(".cache/rp-node");
    assert!(
        packages.join("node_modules/openid-client").exists(),
        "{} is missing: run `infra/relying-parties.sh install` (infra/test.sh does)",
        packages.display()
    );
    let mut command = Command::new(std::env::var("NODE").unwrap_or("node".into()));
    command
        .arg(root.join("tests/interop/node/fapi2.mjs"))
        .env("RP_NODE_DIR", packages)
        .env("ISSUER", &app.address)
        .env("CLIENT_ID", &client.id)
        .env("PRIVATE_JWK", private.to_string())
        .env("REDIRECT_URI", &redirect_uri)
        .env("LOGIN", LOGIN)
        .env("PASSWORD", PASSWORD)
        .env("SCOPE", "openid read");
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .unwrap()
        .expect("node starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let result: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|_| panic!("fapi2.mjs printed {stdout}\n{stderr}"));
    assert_eq!(result["ok"], true, "{result:#}\n{stderr}");
    assert!(output.status.success(), "{stderr}");
    assert_eq!(result["iss"], app.geolocation().as_str());
    assert_eq!(result["sub"], user.id.to_string());
    assert_eq!(result["userinfo_sub"], user.id.to_string());
    assert_eq!(result["refresh_token_kept"], true, "{result}");
    assert!(result["jkt"].as_str().is_some_and(|jkt| jkt.len() == 43));
}
