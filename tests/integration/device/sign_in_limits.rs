//! The verification page's sign-in under the sign-in page's rules (part 20: "the page's sign-in,
//! lockout and limits"): wrong passwords hold back that login from that source without locking
//! the account, and a login the token endpoint has locked is locked here too.

use super::page::{device_client, field, Page, LOGIN, PASSWORD};
use super::*;
use crate::authorize::flow::csrf;
use crate::support::assertions::assert_token_error;
use reqwest::StatusCode;

crate::on_both_stores!(
    wrong_passwords_on_the_device_page_hold_back_that_source_and_never_lock_the_account,
    a_login_locked_at_the_token_endpoint_is_locked_on_the_device_page,
);

/// The default `LOCKOUT_THRESHOLD`.
const THRESHOLD: usize = 5;
const WRONG: &str = "The login or password is not correct.";
const LOCKED: &str = "This account is locked after too many failed sign-ins.";
const HELD_BACK: &str = "Too many failed sign-ins for this account from your network.";

/// A new browser enters a fresh code and signs in with `password`; the answer's HTML.
async fn sign_in(app: &TestApp, client: &TestClient, password: &str) -> String {
    let body = codes(app, client, "read").await;
    let mut page = Page::new(app);
    let (status, form) = page.enter(body["user_code"].as_str().unwrap()).await;
    assert_eq!(status, StatusCode::OK, "{form}");
    let answer = page
        .post(&[
            ("csrf_token", &csrf(&form)),
            ("action", "sign_in"),
            ("user_code", &field(&form, "user_code")),
            ("login", LOGIN),
            ("password", password),
        ])
        .await;
    answer.text().await.unwrap()
}

fn is_sign_in_form(html: &str) -> bool {
    html.contains(r#"name="password""#)
}

async fn wrong_passwords_on_the_device_page_hold_back_that_source_and_never_lock_the_account(
    app: TestApp,
) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = device_client(&app).await;
    for attempt in 1..=THRESHOLD {
        let page = sign_in(&app, &client, "wrong password").await;
        assert!(page.contains(WRONG), "attempt {attempt}: {page}");
    }
    let page = sign_in(&app, &client, PASSWORD).await;
    assert!(page.contains(HELD_BACK), "{page}");
    assert!(!page.contains(LOCKED), "{page}");
    assert!(is_sign_in_form(&page), "still the sign-in form: {page}");

    // Not a lock: the token endpoint still signs the user in.
    let password_client = app.create_client("read").await;
    let (status, body) = app
        .password_grant(&password_client, LOGIN, PASSWORD, &[])
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");

    app.clock.advance(15 * 60);
    let page = sign_in(&app, &client, PASSWORD).await;
    assert!(
        !is_sign_in_form(&page),
        "signed in once the window passed: {page}"
    );
}

async fn a_login_locked_at_the_token_endpoint_is_locked_on_the_device_page(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let password_client = app.create_client("read").await;
    for _ in 1..=THRESHOLD {
        assert_token_error(
            &app.password_grant(&password_client, LOGIN, "wrong password", &[])
                .await,
            400,
            "invalid_grant",
            5,
        );
    }
    let client = device_client(&app).await;
    let page = sign_in(&app, &client, PASSWORD).await;
    assert!(page.contains(LOCKED), "{page}");
    assert!(!page.contains(WRONG), "{page}");
    assert!(is_sign_in_form(&page), "still the sign-in form: {page}");
}
