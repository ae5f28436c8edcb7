//! The OpenID Foundation's RP-Initiated Logout OP plan, module by module, against a browser
//! signed in with a sign-in session: whether the browser is sent back to the relying party, and
//! whether its session ended (a `prompt=none` authorization afterwards answers a code only while
//! it lives).

use std::collections::HashMap;

use crate::support::app::TestApp;
use reqwest::{header, StatusCode};

use super::*;
use crate::authorize::flow::redirect_query;

crate::on_both_stores!(the_rp_initiated_logout_plans_modules_with_a_signed_in_browser,);

/// What the end-session endpoint answered and what became of the browser's session.
#[derive(Debug, PartialEq, Eq)]
struct LogoutOutcome {
    /// The redirect's `Location`, if any.
    location: Option<String>,
    status: StatusCode,
    session_ended: bool,
}

/// Signs a browser in and approves, then sends it to the end-session endpoint with `params`
/// built from the ID token it got.
async fn module(
    app: &TestApp,
    client: &TestClient,
    params: impl FnOnce(&str) -> Vec<(&'static str, String)>,
) -> LogoutOutcome {
    let mut browser = Session::new(app);
    let redirect = browser.decide(&query(client, &[]), "approve").await;
    let (_, tokens) = exchange(app, client, &redirect["code"], &[("code_verifier", "")]).await;
    let params = params(tokens["id_token"].as_str().unwrap());
    let answer = app
        .http
        .get(app.url("/oauth2/v0/logout"))
        .query(&params)
        .header(header::COOKIE, browser.sso_cookie.clone().unwrap())
        .send()
        .await
        .unwrap();
    let status = answer.status();
    let location = answer
        .headers()
        .get(header::LOCATION)
        .map(|value| value.to_str().unwrap().to_owned());
    let silent: HashMap<String, String> =
        redirect_query(&browser.open(&query(client, &[("prompt", "none")])).await);
    LogoutOutcome {
        location,
        status,
        session_ended: silent.get("error").map(String::as_str) == Some("login_required"),
    }
}

/// A page (the signed-out page, or the confirmation page while the session lives).
fn signed_out_page(session_ended: bool) -> LogoutOutcome {
    LogoutOutcome {
        location: None,
        status: StatusCode::OK,
        session_ended,
    }
}

fn refused_page() -> LogoutOutcome {
    LogoutOutcome {
        location: None,
        status: StatusCode::BAD_REQUEST,
        session_ended: false,
    }
}

async fn the_rp_initiated_logout_plans_modules_with_a_signed_in_browser(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = oidc_client(&app, "relying party").await;
    let address = || POST_LOGOUT_REDIRECT_URI.to_owned();

    // oidcc-rp-initiated-logout: back to the relying party with its state, signed out.
    let ended = module(&app, &client, |hint| {
        vec![
            ("id_token_hint", hint.to_owned()),
            ("post_logout_redirect_uri", address()),
            ("state", "s-1".to_owned()),
        ]
    })
    .await;
    assert_eq!(
        ended,
        LogoutOutcome {
            location: Some(format!("{POST_LOGOUT_REDIRECT_URI}?state=s-1")),
            status: StatusCode::FOUND,
            session_ended: true,
        }
    );
    // oidcc-rp-initiated-logout-no-state: back without a state.
    let ended = module(&app, &client, |hint| {
        vec![
            ("id_token_hint", hint.to_owned()),
            ("post_logout_redirect_uri", address()),
        ]
    })
    .await;
    assert_eq!(ended.location, Some(address()));
    assert!(ended.session_ended);
    // oidcc-rp-initiated-logout-no-post-logout-redirect-uri: the signed-out page.
    let ended = module(&app, &client, |hint| {
        vec![("id_token_hint", hint.to_owned())]
    })
    .await;
    assert_eq!(ended, signed_out_page(true));
    // oidcc-rp-initiated-logout-no-params and -only-state: a page asks the user first, and
    // until they confirm the session lives (the confirmation is `logout_confirm`'s).
    assert_eq!(
        module(&app, &client, |_| vec![]).await,
        signed_out_page(false)
    );
    let only_state = module(&app, &client, |_| vec![("state", "s-2".to_owned())]).await;
    assert_eq!(only_state, signed_out_page(false));
    // oidcc-rp-initiated-logout-no-id-token-hint: an address without a hint is never
    // redirected to (nothing names the client it would be registered for).
    let no_hint = module(&app, &client, |_| {
        vec![
            ("post_logout_redirect_uri", address()),
            ("state", "s".into()),
        ]
    })
    .await;
    assert_eq!(no_hint, refused_page());
    // -query-added-to-post-logout-redirect-uri and -bad-post-logout-redirect-uri: an address
    // not registered as it is.
    for bad in [
        format!("{POST_LOGOUT_REDIRECT_URI}?foo=bar"),
        "https://evil.example/".into(),
    ] {
        let ended = module(&app, &client, |hint| {
            vec![
                ("id_token_hint", hint.to_owned()),
                ("post_logout_redirect_uri", bad),
            ]
        })
        .await;
        assert_eq!(ended, refused_page());
    }
    // -modified-id-token-hint (alg none) and -bad-id-token-hint (another signature): refused.
    let unsigned = |hint: &str| {
        let mut parts = hint.split('.');
        let _header = parts.next();
        let payload = parts.next().unwrap();
        format!("eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.{payload}.")
    };
    let ended = module(&app, &client, |hint| {
        vec![
            ("id_token_hint", unsigned(hint)),
            ("post_logout_redirect_uri", address()),
        ]
    })
    .await;
    assert_eq!(ended, refused_page());
    let ended = module(&app, &client, |hint| {
        let mut tampered = hint.to_owned();
        let last = tampered.pop().unwrap();
        tampered.push(if last == 'A' { 'B' } else { 'A' });
        vec![
            ("id_token_hint", tampered),
            ("post_logout_redirect_uri", address()),
        ]
    })
    .await;
    assert_eq!(ended, refused_page());
}
