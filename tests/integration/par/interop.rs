//! A real FAPI 2.0 client, unchanged: openid-client 6 (`tests/interop/node/fapi2.mjs`) with
//! `private_key_jwt`, a pushed request carrying a DPoP proof, PKCE, `iss` on the callback,
//! DPoP-bound tokens, userinfo and a refresh, against a client registered `--profile fapi2`.

use super::*;
use crate::support::dpop::DpopKey;
use crate::support::relying_party::{follow_real_time, run_node_script, LOGIN, PASSWORD};
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
    let result = run_node_script(
        "fapi2.mjs",
        vec![
            ("ISSUER", app.address.clone()),
            ("CLIENT_ID", client.id.clone()),
            ("PRIVATE_JWK", private.to_string()),
            ("REDIRECT_URI", redirect_uri),
            ("LOGIN", LOGIN.to_owned()),
            ("PASSWORD", PASSWORD.to_owned()),
            ("SCOPE", "openid read".to_owned()),
        ],
    )
    .await;
    assert_eq!(result["iss"], app.geolocation().as_str());
    assert_eq!(result["sub"], user.id.to_string());
    assert_eq!(result["userinfo_sub"], user.id.to_string());
    assert_eq!(result["refresh_token_kept"], true, "{result}");
    assert!(result["jkt"].as_str().is_some_and(|jkt| jkt.len() == 43));
}
