//! Sign-in refusals the authorize page shares with the password grant: wrong passwords typed
//! into the page count towards the same lockout as the token endpoint's, and the page says so;
//! a user whose logons are denied is told that, not that the password is wrong.

use crate::support::app::TestApp;
use crate::support::assertions::assert_token_error;
use reqwest::StatusCode;
use token_domain::UserStatus;

use super::flow::*;

crate::on_both_stores!(
    wrong_passwords_on_the_page_lock_the_login_everywhere,
    a_logon_denied_user_is_told_on_the_page,
);

/// The default `LOCKOUT_THRESHOLD`.
const THRESHOLD: usize = 5;
const WRONG: &str = "The login or password is not correct.";
const LOCKED: &str = "This account is locked after too many failed sign-ins.";
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
    let mut session = Session::new(app);
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

async fn wrong_passwords_on_the_page_lock_the_login_everywhere(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = code_client(&app).await;
    let query = query(&client, &[]);
    for attempt in 1..=THRESHOLD {
        let page = sign_in_page_answer(&app, &query, LOGIN, "wrong password").await;
        assert!(page.contains(WRONG), "attempt {attempt}: {page}");
    }

    // The right password is now refused at the token endpoint (14) and on the page.
    assert_token_error(
        &app.password_grant(&client, LOGIN, PASSWORD, &[]).await,
        400,
        "invalid_grant",
        14,
    );
    let page = sign_in_page_answer(&app, &query, LOGIN, PASSWORD).await;
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
