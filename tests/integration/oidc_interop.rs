//! Standard relying-party libraries drive the server through the real pages (the sign-in and
//! consent forms posted as a browser would), then discovery-driven token, userinfo, refresh,
//! introspection, revocation and logout: openid-client 6 (Node), authlib (Python), and the Rust
//! `openidconnect` and `oauth2` crates. One test per case and store; cases are named after the
//! OpenID Foundation's basic OP certification plan where one fits (docs/oidc-conformance.md).

mod node;
mod python;
mod rust;

use crate::support::app::TestApp;
use crate::support::relying_party::{run_case, Driver, RelyingParty};
use serde_json::Value;

/// Registers the relying party and its user on `app`, runs `case` with `driver`, and checks
/// what the case reports beyond its own pass.
async fn passes(app: TestApp, driver: Driver, case: &str) {
    let rp = RelyingParty::register(&app).await;
    let result = run_case(&app, &rp, driver, case).await;
    expect(&app, &rp, case, &result);
}

/// The facts each case reports, checked against the server's own view.
fn expect(app: &TestApp, rp: &RelyingParty, case: &str, result: &Value) {
    let sub = rp.user.id.to_string();
    match case {
        "discovery" => {
            assert_eq!(result["issuer"], app.address.as_str());
            assert_eq!(result["iss_parameter"], true);
            assert_eq!(result["userinfo_endpoint"], app.url("/oauth2/v0/userinfo"));
            assert_eq!(result["end_session_endpoint"], app.url("/oauth2/v0/logout"));
        }
        "oidcc-server" => {
            assert_eq!(result["sub"], sub.as_str());
            let scope = result["scope"].as_str().unwrap();
            assert!(scope.split(' ').any(|s| s == "openid"), "{scope}");
        }
        "rfc9207-iss" => {
            assert_eq!(result["success_iss"], app.address.as_str());
            assert_eq!(result["error_iss"], app.address.as_str());
        }
        "oidcc-userinfo-get" | "oidcc-userinfo-post-header" | "oidcc-userinfo-post-body" => {
            let claims: Vec<&str> = result["claims"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap())
                .collect();
            for claim in ["sub", "email", "email_verified", "preferred_username"] {
                assert!(claims.contains(&claim), "{case}: {claims:?}");
            }
        }
        "oidcc-refresh-token" => {
            let scope = result["scope"].as_str().unwrap();
            assert!(scope.split(' ').any(|s| s == "openid"), "kept: {scope}");
            assert_eq!(result["id_token"], true);
        }
        "oidcc-codereuse" => {
            assert_eq!(result["second_redemption"], "invalid_request", "code 103");
        }
        "oidcc-ensure-redirect-uri-in-authorization-request"
        | "oidcc-ensure-registered-redirect-uri" => {
            assert_eq!(result["status"], 400);
            assert!(result["location"].is_null());
        }
        "oidcc-prompt-none-not-logged-in" => assert_eq!(result["error"], "login_required"),
        "oidcc-id-token-hint" => assert_eq!(result["outcome"], "signed in silently"),
        "oidcc-prompt-none-logged-in" => {
            assert_eq!(result["sid_kept"], true, "{result}");
            assert!(result["auth_time"].is_i64(), "{result}");
        }
        "oidcc-prompt-login" | "oidcc-max-age-1" => {
            assert!(result["auth_time"].is_i64(), "{result}");
        }
        "oidcc-rp-initiated-logout" => {
            let location = result["location"].as_str().unwrap();
            assert!(
                location.starts_with(&rp.post_logout_redirect_uri),
                "{location}"
            );
        }
        "dpop-openid-client" => {
            // The code bound by dpop_jkt, userinfo and refresh with proofs passed in the driver;
            // a refresh of the bound family without a proof is refused (108).
            assert_eq!(result["refresh_without_proof"], "invalid_grant", "{result}");
            assert!(result["jkt"].as_str().is_some_and(|jkt| jkt.len() == 43));
        }
        "dpop-client-credentials" => {
            assert_eq!(result["replay"], "invalid_dpop_proof", "{result}");
            assert!(result["jkt"].as_str().is_some_and(|jkt| jkt.len() == 43));
        }
        "oidcc-unsigned-request-object-supported-correctly-or-rejected-as-unsupported" => {
            assert_eq!(result["error"], "invalid_request_object");
        }
        _ => {}
    }
}

/// One test function per case: `$name => "case"` becomes `async fn $name(app)`.
macro_rules! cases {
    ($driver:expr; $($name:ident => $case:literal),* $(,)?) => {
        $(
            async fn $name(app: crate::support::app::TestApp) {
                super::passes(app, $driver, $case).await;
            }
        )*
        crate::on_both_stores!($($name),*);
    };
}
use cases;
