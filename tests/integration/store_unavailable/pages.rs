//! The authorize endpoint's pages: the first page (`GET`), the sign-in form and the consent
//! form (`POST`). A failure answers the JSON 503 (see the module above) and leaves the pending
//! request's cookie alone, so the same form posted again continues the flow.

use crate::support::logs::assert_no_secret_logged;
use reqwest::{header, StatusCode};

use super::{assert_unavailable, FaultyApp};
use crate::authorize::flow::{
    code_client, csrf, query, redirect_query, Session, APP_NAME, LOGIN, PASSWORD,
};

in_every_outage!(first_page, sign_in_form, consent_form);

/// The first page only reads the client: it fails only when reads do.
async fn first_page(app: FaultyApp) {
    let client = code_client(&app).await;
    let query = query(&client, &[]);
    let mut session = Session::new(&app);
    let page = app.during_outage(session.open(&query)).await;
    if app.reads_fail() {
        assert_unavailable("authorize page", page).await;
    } else {
        assert_eq!(page.status(), StatusCode::OK);
    }
    let page = session.open(&query).await;
    assert_eq!(page.status(), StatusCode::OK);
    assert!(page.text().await.unwrap().contains(APP_NAME));
}

/// The sign-in is not counted towards the lockout by the failure (`LOCKOUT_THRESHOLD=1`: a
/// leftover count would answer the retry with the sign-in page and its lockout sentence).
async fn sign_in_form(app: FaultyApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = code_client(&app).await;
    let query = query(&client, &[]);
    let mut session = Session::new(&app);
    let page = session.open(&query).await.text().await.unwrap();
    let form = [
        ("csrf_token", csrf(&page)),
        ("login", LOGIN.to_owned()),
        ("password", PASSWORD.to_owned()),
    ];
    let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let failed = app.during_outage(session.post(&form)).await;
    assert!(!failed.headers().contains_key(header::SET_COOKIE));
    assert_unavailable("sign-in form", failed).await;

    let answer = session.post(&form).await;
    assert_eq!(answer.status(), StatusCode::OK);
    let consent = answer.text().await.unwrap();
    assert!(
        consent.contains(r#"name="decision""#),
        "the consent page: {consent}"
    );
    assert_no_secret_logged(&[PASSWORD, &client.secret]);
}

/// No code is handed out by the failure; the same approval again redirects with one.
async fn consent_form(app: FaultyApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = code_client(&app).await;
    let query = query(&client, &[]);
    let mut session = Session::new(&app);
    let consent = session.sign_in(&query, PASSWORD).await;
    let csrf = csrf(&consent);
    let form = [("csrf_token", csrf.as_str()), ("decision", "approve")];
    let failed = app.during_outage(session.post(&form)).await;
    assert!(!failed.headers().contains_key(header::SET_COOKIE));
    assert_unavailable("consent form", failed).await;

    let redirect = redirect_query(&session.post(&form).await);
    let code = &redirect["code"];
    assert_eq!(code.len(), 43, "a code: {redirect:?}");
    assert_no_secret_logged(&[PASSWORD, &client.secret, code]);
}
