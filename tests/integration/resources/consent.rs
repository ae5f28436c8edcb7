//! The consent page names the resources asked for, and a remembered consent covers only the
//! resources it was given for: a request for another asks again (and `prompt=none` answers
//! `consent_required`), and once approved both are remembered.

use reqwest::StatusCode;

use super::{API, FILES};
use crate::authorize::flow::{code_client, csrf, query, redirect_query, Session, PASSWORD};
use crate::support::app::{TestApp, TestClient};

crate::on_both_stores!(a_remembered_consent_covers_only_the_resources_it_was_given_for,);

fn with_resources<'a>(
    client: &'a TestClient,
    extra: &[(&'a str, &'a str)],
    resources: &[&'a str],
) -> Vec<(&'a str, &'a str)> {
    let mut query = query(client, &[&[("scope", "openid read")], extra].concat());
    query.extend(resources.iter().map(|r| ("resource", *r)));
    query
}

async fn a_remembered_consent_covers_only_the_resources_it_was_given_for(app: TestApp) {
    let client = code_client(&app).await;
    app.create_user(crate::authorize::flow::LOGIN, PASSWORD)
        .await;
    let mut browser = Session::new(&app);
    let consent = browser
        .sign_in(&with_resources(&client, &[], &[API]), PASSWORD)
        .await;
    assert!(
        consent.contains(&format!("<code>{API}</code>")),
        "{consent}"
    );
    let approved = browser
        .post(&[("csrf_token", &csrf(&consent)), ("decision", "approve")])
        .await;
    assert!(redirect_query(&approved).contains_key("code"));

    // The same resource again: remembered, a code at once.
    let silent = |resources: &'static [&'static str]| {
        with_resources(&client, &[("prompt", "none")], resources)
    };
    let again = browser.open(&silent(&[API])).await;
    assert!(redirect_query(&again).contains_key("code"), "remembered");
    // Another resource: never approved, so not silently.
    let other = browser.open(&silent(&[FILES])).await;
    assert_eq!(redirect_query(&other)["error"], "consent_required");
    let both = browser.open(&silent(&[API, FILES])).await;
    assert_eq!(redirect_query(&both)["error"], "consent_required");

    // Asked, the page names it; approved, both are remembered.
    let page = browser.open(&with_resources(&client, &[], &[FILES])).await;
    assert_eq!(page.status(), StatusCode::OK);
    let page = page.text().await.unwrap();
    assert!(page.contains(&format!("<code>{FILES}</code>")), "{page}");
    assert!(
        !page.contains(&format!("<code>{API}</code>")),
        "only what is asked: {page}"
    );
    browser
        .post(&[("csrf_token", &csrf(&page)), ("decision", "approve")])
        .await;
    let both = browser.open(&silent(&[API, FILES])).await;
    assert!(
        redirect_query(&both).contains_key("code"),
        "both remembered"
    );
    let none = browser.open(&silent(&[])).await;
    assert!(
        redirect_query(&none).contains_key("code"),
        "no resource: the scopes decide"
    );
}
