//! Sign-in refusals of the authorize page: wrong passwords typed into the public page are
//! counted per login and source address and never lock the account (strangers can reach the
//! page), while a login the token endpoint has locked is locked on the page too, and the page
//! says so; a user whose logons are denied is told that, not that the password is wrong.

use crate::support::app::TestApp;
use crate::support::assertions::assert_token_error;
use reqwest::StatusCode;
use token_domain::UserStatus;

use super::flow::*;

crate::on_both_stores!(
    wrong_passwords_on_the_page_hold_back_that_source_and_never_lock_the_account,
    a_login_locked_at_the_token_endpoint_is_locked_on_the_page,
    a_logon_denied_user_is_told_on_the_page,
);

/// The default `LOCKOUT_THRESHOLD`.
const THRESHOLD: usize = 5;
const WRONG: &str = "The login or password is not correct.";
const LOCKED: &str = "This account is locked after too many failed sign-ins.";
const HELD_BACK: &str = "Too many failed sign-ins for this account from your network.";
const DENIED: &str = "Sign-in is not allowed for this account.";
/// The password field: the answer is the sign-in page again, not the consent page.
const SIGN_IN_FORM: &str = r#"name="password""#;

/// Opens the page in a new session and submits the sign-in form; the answer's HTML.
async fn sign_in_page_answer(
    app: &TestApp,
    query: &[(&str, &str)],
    login: &str,
    password: &str,
) -> String {
    sign_in_from(Session::new(app), query, login, password).await
}

/// The same from `session`'s browser.
async fn sign_in_from(
    mut session: Session<'_>,
    query: &[(&str, &str)],
    login: &str,
    password: &str,
) -> String {
    let html = session.open(query).await.text().await.unwrap();
    let answer = session
        .post(&[
            ("csrf_token", &csrf(&html)),
            ("login", login),
            ("password", password),
        ])
        .await;
    assert_eq!(answer.status(), StatusCode::OK, "a page, not a redirect");
    answer.text().await.unwrap()
}

async fn wrong_passwords_on_the_page_hold_back_that_source_and_never_lock_the_account(
    app: TestApp,
) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = code_client(&app).await;
    let query = query(&client, &[]);
    // Each attempt opens the page anew: a new pending request does not start a new count.
    for attempt in 1..=THRESHOLD {
        let page = sign_in_page_answer(&app, &query, LOGIN, "wrong password").await;
        assert!(page.contains(WRONG), "attempt {attempt}: {page}");
    }
    let page = sign_in_page_answer(&app, &query, LOGIN, PASSWORD).await;
    assert!(page.contains(HELD_BACK), "{page}");
    assert!(!page.contains(LOCKED), "{page}");
    assert!(
        page.contains(SIGN_IN_FORM),
        "still the sign-in page: {page}"
    );
    let other_login = sign_in_page_answer(&app, &query, "someone.else", "wrong password").await;
    assert!(
        other_login.contains(WRONG),
        "another login from the same source is counted apart: {other_login}"
    );

    // The account is not locked: the token endpoint and another source sign the user in.
    let (status, body) = app.password_grant(&client, LOGIN, PASSWORD, &[]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let elsewhere = Session::from_address(&app, [127, 0, 0, 2].into());
    let page = sign_in_from(elsewhere, &query, LOGIN, PASSWORD).await;
    assert!(
        !page.contains(SIGN_IN_FORM),
        "another source signs in: {page}"
    );

    // The held-back source may try again once the window has passed.
    app.clock.advance(15 * 60);
    let page = sign_in_page_answer(&app, &query, LOGIN, PASSWORD).await;
    assert!(!page.contains(SIGN_IN_FORM), "signed in: {page}");
}

async fn a_login_locked_at_the_token_endpoint_is_locked_on_the_page(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = code_client(&app).await;
    for _ in 1..=THRESHOLD {
        assert_token_error(
            &app.password_grant(&client, LOGIN, "wrong password", &[])
                .await,
            400,
            "invalid_grant",
            5,
        );
    }
    let page = sign_in_page_answer(&app, &query(&client, &[]), LOGIN, PASSWORD).await;
    assert!(page.contains(LOCKED), "{page}");
    assert!(!page.contains(WRONG), "{page}");
    assert!(
        page.contains(SIGN_IN_FORM),
        "still the sign-in page: {page}"
    );
}

async fn a_logon_denied_user_is_told_on_the_page(app: TestApp) {
    app.create_user_with(LOGIN, PASSWORD, |u| u.status = UserStatus::LogonDenied)
        .await;
    let client = code_client(&app).await;
    let page = sign_in_page_answer(&app, &query(&client, &[]), LOGIN, PASSWORD).await;
    assert!(page.contains(DENIED), "{page}");
    assert!(!page.contains(WRONG), "{page}");
    assert!(
        page.contains(SIGN_IN_FORM),
        "still the sign-in page: {page}"
    );
}
