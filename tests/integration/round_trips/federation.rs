//! The budget of a returning user's sign-in through the company's OpenID Provider, on DynamoDB
//! behind the counting proxy (docs/decisions.md, "Company identity providers: the sign-in").
//! The IdP's documents are in the instance's memory after the first sign-in, and the client,
//! the IdP and the company come from the read cache once warm.

use super::counted::*;
use crate::authorize::flow::{query, Session};
use crate::federation::fixture::{add_idp, see_other, Federated, DOMAIN};
use crate::support::app::AppOptions;
use crate::support::oidc_idp::{free_port, OidcIdp};
use reqwest::StatusCode;
use token_core::outbound::AllowedHosts;

/// Leaving: the sign-in post counted against the address and the pending request (2 updates,
/// `RATE_LIMIT` each), the domain's IdPs (one `Query`), the pending upstream request
/// (`PutItem`): 4.
const LEAVING: usize = 2 * RATE_LIMIT + 2;
/// The callback: the pending request taken (`DeleteItem` with its condition), the IdP and the
/// link (`GetItem` each; the linked user from the read cache), `federation.signed_in` (one
/// transaction filing it under the user): 4.
const CALLBACK: usize = 4;
/// Back on the authorize page: the user's own second factors (the authenticator app `GetItem`,
/// the passkeys `Query`), the new session (`PutItem`) and `session.started`, the remembered
/// consent (`GetItem`), the code (`PutItem`), the session's client list (`UpdateItem`): 7.
const RESUME: usize = 7;

pub async fn federated_sign_in(c: Counted) {
    let port = free_port();
    let allowed = AllowedHosts::parse(&format!("127.0.0.1:{port}")).unwrap();
    let options = AppOptions {
        document_fetcher: Some(token_adapters::outbound::fetcher(allowed)),
        ..AppOptions::default()
    };
    let Counted { proxy, app, .. } = c.with_options(options).await;
    let idp = OidcIdp::start(port, &app.address).await;
    let company = app.create_company("Acme").await;
    let client = crate::authorize::flow::code_client(&app).await;
    let idp_id = add_idp(&app, &idp, &company, "Sign in with Acme", &[DOMAIN]).await;
    let login = format!("tom@{DOMAIN}");
    let f = Federated {
        app,
        idp,
        company,
        idp_id,
        client,
    };
    // The first sign-in links and approves (and warms the caches and the IdP's documents).
    let mut first = Session::new(&f.app);
    let consent = f.sign_in(&mut first, &login).await;
    crate::federation::oidc::approve(&f, &mut first, consent).await;

    let mut browser = Session::new(&f.app);
    let page = browser.open(&query(&f.client, &[])).await;
    let html = page.text().await.unwrap();
    let token = crate::authorize::flow::csrf(&html);
    let form = [
        ("csrf_token", token.as_str()),
        ("login", login.as_str()),
        ("password", ""),
    ];
    let (leaving, calls) =
        calls_through(&proxy, "federated sign-in: leaving", browser.post(&form)).await;
    assert_within(&calls, LEAVING, "federated sign-in: leaving");
    let callback = f.idp.sign_in(&see_other(&leaving), &login, false).await;
    let what = "federated sign-in: the callback";
    let (answer, calls) = calls_through(&proxy, what, f.app.http.get(&callback).send()).await;
    assert_within(&calls, CALLBACK, "federated sign-in: the callback");
    let resume = see_other(&answer.unwrap());
    let query = resume.split_once('?').unwrap().1.to_owned();
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect();
    let pairs: Vec<(&str, &str)> = pairs
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    let what = "federated sign-in: back on the page";
    let (code, calls) = calls_through(&proxy, what, browser.resume(&pairs)).await;
    assert_eq!(
        code.status(),
        StatusCode::FOUND,
        "the remembered consent: a code"
    );
    assert_within(&calls, RESUME, "federated sign-in: back on the page");
}
