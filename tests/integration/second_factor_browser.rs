//! Authenticator apps in a real headless Chromium, on both stores, read as a person reads the
//! pages: the key shown in text on the enrolment page is what the test's own authenticator
//! (`totp-rs` through the domain, as an app would) computes codes from. A user sets up the app
//! from the account page, signs out, signs in with a code, then with a recovery code, which is
//! refused the second time; a user of a company that requires a second factor is made to enrol
//! on the authorize page right after the password, sees the recovery codes, and only then is
//! signed in and sent back to the client with a code whose ID token says `pwd otp mfa`.
//! Screenshots go to `target/screenshots/second-factor-*.png`.

use token_core::admin::{self, NewClient};
use token_domain::clock::Clock;
use token_domain::{MfaPolicy, Scopes, TotpSecret, RECOVERY_CODE_COUNT};

use crate::support::app::{AppOptions, Backend, TestApp};
use crate::support::browser::Browser;

const LOGIN: &str = "totp.user@example.com";
const PASSWORD: &str = "correct horse battery staple";

/// The key the enrolment page shows in text (`Key: ...`).
fn shown_key(text: &str) -> TotpSecret {
    let key = text
        .lines()
        .find_map(|line| line.trim().strip_prefix("Key: "))
        .unwrap_or_else(|| panic!("no key in {text}"));
    TotpSecret::from_base32(key).expect("a base32 key")
}

/// The recovery codes the page lists (`xxxxx-xxxxx`).
fn shown_recovery_codes(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|line| {
            line.len() == 11
                && line.as_bytes()[5] == b'-'
                && line
                    .chars()
                    .all(|c| c == '-' || c.is_ascii_lowercase() || c.is_ascii_digit())
        })
        .map(str::to_owned)
        .collect()
}

async fn spawn(backend: Backend) -> Option<TestApp> {
    TestApp::spawn_with(backend, AppOptions::default()).await
}

async fn account_sign_in(browser: &Browser, app: &TestApp) {
    browser.goto(&app.url("/oauth2/v0/account")).await.unwrap();
    browser.fill_by_label("Login", LOGIN).await.unwrap();
    browser.fill_by_label("Password", PASSWORD).await.unwrap();
    browser.click_button("Sign in").await.unwrap();
}

/// On the code page: types `code` and signs in.
async fn type_code(browser: &Browser, code: &str) {
    browser.wait_for_text("One more step").await.unwrap();
    browser.fill_by_label("Code", code).await.unwrap();
    browser.click_button("Sign in").await.unwrap();
}

async fn sign_out(browser: &Browser) {
    browser.click_button("Sign out everywhere").await.unwrap();
    browser.wait_for_text("You are signed out").await.unwrap();
}

async fn enrolled_from_the_account_page(backend: Backend) {
    let Some(app) = spawn(backend).await else {
        return;
    };
    let user = app.create_user(LOGIN, PASSWORD).await;
    let browser = Browser::start()
        .await
        .expect("chromedriver and chromium start");

    account_sign_in(&browser, &app).await;
    browser
        .wait_for_text("Set up an authenticator app")
        .await
        .unwrap();
    browser
        .click_button("Set up an authenticator app")
        .await
        .unwrap();
    let text = browser.wait_for_text("Key: ").await.unwrap();
    let secret = shown_key(&text);
    browser
        .screenshot("second-factor-account-enrolment")
        .await
        .unwrap();
    browser
        .fill_by_label(
            "The six-digit code your app shows",
            &secret.code_at(app.clock.now()),
        )
        .await
        .unwrap();
    browser.click_button("Confirm").await.unwrap();
    let text = browser
        .wait_for_text("Your authenticator app is set up")
        .await
        .unwrap();
    let codes = shown_recovery_codes(&text);
    assert_eq!(codes.len(), RECOVERY_CODE_COUNT, "{text}");
    assert!(app
        .ctx()
        .store
        .second_factors()
        .get_totp_factor(&user.id)
        .await
        .unwrap()
        .is_some());

    // Enrolled from a password sign-in: changing factors again needs a sign-in with both.
    browser.goto(&app.url("/oauth2/v0/account")).await.unwrap();
    browser
        .wait_for_text("Sign in again to change how you sign in")
        .await
        .unwrap();
    sign_out(&browser).await;

    // The password, then a code of a later step (the enrolment used the current one).
    app.clock.advance(30);
    account_sign_in(&browser, &app).await;
    type_code(&browser, &secret.code_at(app.clock.now())).await;
    browser
        .wait_for_text("Remove the authenticator app")
        .await
        .unwrap();
    sign_out(&browser).await;

    // A recovery code signs in once.
    account_sign_in(&browser, &app).await;
    type_code(&browser, &codes[0]).await;
    browser
        .wait_for_text("Remove the authenticator app")
        .await
        .unwrap();
    sign_out(&browser).await;
    account_sign_in(&browser, &app).await;
    type_code(&browser, &codes[0]).await;
    browser
        .wait_for_text("That code was not right")
        .await
        .unwrap();
    browser
        .screenshot("second-factor-recovery-code-used")
        .await
        .unwrap();
    // The page still takes a good code.
    browser.fill_by_label("Code", &codes[1]).await.unwrap();
    browser.click_button("Sign in").await.unwrap();
    browser
        .wait_for_text("Remove the authenticator app")
        .await
        .unwrap();
    browser.close().await.unwrap();
}

async fn a_required_companys_user_enrols_at_sign_in(backend: Backend) {
    let Some(app) = spawn(backend).await else {
        return;
    };
    let company = app.create_company("Acme").await;
    admin::set_company_mfa(app.ctx(), &company.id, MfaPolicy::Required)
        .await
        .unwrap();
    let user = app
        .create_user_with(LOGIN, PASSWORD, |new| new.company_id = Some(company.id))
        .await;
    let redirect_uri = "http://127.0.0.1:9/callback".to_owned();
    let mut new = NewClient::named("Expenses", Scopes::parse("openid").unwrap());
    new.redirect_uris = vec![redirect_uri.clone()];
    let client = app.create_client_with(new).await;
    let browser = Browser::start()
        .await
        .expect("chromedriver and chromium start");

    let query = serde_urlencoded::to_string([
        ("client_id", client.id.as_str()),
        ("redirect_uri", redirect_uri.as_str()),
        ("response_type", "code"),
        ("scope", "openid"),
        ("state", "st"),
    ])
    .unwrap();
    browser
        .goto(&app.url(&format!("/oauth2/v0/authorize?{query}")))
        .await
        .unwrap();
    browser.fill_by_label("Login", LOGIN).await.unwrap();
    browser.fill_by_label("Password", PASSWORD).await.unwrap();
    browser.click_button("Sign in").await.unwrap();
    let text = browser
        .wait_for_text("Your company requires a second factor")
        .await
        .unwrap();
    let secret = shown_key(&text);
    browser
        .screenshot("second-factor-required-enrolment")
        .await
        .unwrap();
    let sessions = app.ctx().store.sessions();
    assert!(
        sessions
            .list_sessions(&user.id, app.clock.now())
            .await
            .unwrap()
            .is_empty(),
        "no session before the second factor"
    );
    browser
        .fill_by_label(
            "The six-digit code your app shows",
            &secret.code_at(app.clock.now()),
        )
        .await
        .unwrap();
    browser.click_button("Confirm").await.unwrap();
    let text = browser
        .wait_for_text("Your authenticator app is set up")
        .await
        .unwrap();
    assert_eq!(shown_recovery_codes(&text).len(), RECOVERY_CODE_COUNT);
    browser
        .screenshot("second-factor-required-recovery-codes")
        .await
        .unwrap();
    assert!(
        sessions
            .list_sessions(&user.id, app.clock.now())
            .await
            .unwrap()
            .is_empty(),
        "no session before the recovery codes were seen"
    );
    browser
        .click_button("I have saved them: continue")
        .await
        .unwrap();
    browser.wait_for_text("Allow").await.unwrap();
    browser.press("Allow").await.unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let code = loop {
        let url = browser.current_url().await.unwrap();
        if url.as_str().starts_with(&redirect_uri) {
            break url
                .query_pairs()
                .find(|(key, _)| key == "code")
                .map(|(_, value)| value.into_owned())
                .unwrap_or_else(|| panic!("{url}"));
        }
        assert!(std::time::Instant::now() < deadline, "still at {url}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    let (status, tokens) = app
        .token(&[
            ("grant_type", "authorization_code"),
            ("client_id", &client.id),
            ("client_secret", &client.secret),
            ("code", &code),
            ("redirect_uri", &redirect_uri),
        ])
        .await;
    assert_eq!(status, 200, "{tokens}");
    let id_token = tokens["id_token"].as_str().unwrap();
    let claims = crate::authorize::flow::verify_with_jwks(&app, id_token)
        .await
        .1;
    assert_eq!(claims["amr"], serde_json::json!(["pwd", "otp", "mfa"]));
    browser.close().await.unwrap();
}

#[tokio::test]
async fn an_authenticator_app_set_up_in_chromium_signs_in_with_codes_sqlite() {
    enrolled_from_the_account_page(Backend::Sqlite).await;
}

#[tokio::test]
async fn an_authenticator_app_set_up_in_chromium_signs_in_with_codes_dynamodb() {
    enrolled_from_the_account_page(Backend::DynamoDb).await;
}

#[tokio::test]
async fn a_required_companys_user_enrols_at_sign_in_in_chromium_sqlite() {
    a_required_companys_user_enrols_at_sign_in(Backend::Sqlite).await;
}

#[tokio::test]
async fn a_required_companys_user_enrols_at_sign_in_in_chromium_dynamodb() {
    a_required_companys_user_enrols_at_sign_in(Backend::DynamoDb).await;
}

/// The account page's code step in Chromium, its form posted 150 times at once by the page's own
/// script (the right code among them): no more than the lockout threshold of codes are compared,
/// counted by the `second_factor.failed` events and the sessions the posts started.
async fn parallel_codes_from_the_page(backend: Backend) {
    use token_domain::audit::{AuditKind, AuditSubject};
    let Some(app) = spawn(backend).await else {
        return;
    };
    let (login, password) = (
        crate::authorize::flow::LOGIN,
        crate::authorize::flow::PASSWORD,
    );
    let user = app.create_user(login, password).await;
    let (secret, _) = crate::openid::second_factor::enrolled(&app).await;
    let sessions = app.ctx().store.sessions();
    let before = sessions
        .list_sessions(&user.id, app.clock.now())
        .await
        .unwrap()
        .len();
    let browser = Browser::start()
        .await
        .expect("chromedriver and chromium start");
    browser.goto(&app.url("/oauth2/v0/account")).await.unwrap();
    browser.fill_by_label("Login", login).await.unwrap();
    browser.fill_by_label("Password", password).await.unwrap();
    browser.click_button("Sign in").await.unwrap();
    browser.wait_for_text("One more step").await.unwrap();
    app.clock.advance(30);
    let right = secret.code_at(app.clock.now());
    let wrong = format!("{:06}", (right.parse::<u32>().unwrap() + 1) % 1_000_000);
    let codes: Vec<serde_json::Value> = (0..150)
        .map(|i| {
            if i == 75 {
                right.clone()
            } else {
                wrong.clone()
            }
            .into()
        })
        .collect();
    let script = r"
        const [codes, done] = [arguments[0], arguments[arguments.length - 1]];
        const form = document.querySelector('form');
        Promise.all(codes.map((code) => {
            const body = new URLSearchParams(new FormData(form));
            body.set('code', code);
            return fetch(form.action, { method: 'POST', body, redirect: 'manual' })
                .then((answer) => answer.status, () => -1);
        })).then(done);
    ";
    let statuses = browser
        .run_async(script, vec![serde_json::Value::Array(codes)])
        .await
        .unwrap();
    assert_eq!(statuses.as_array().map(Vec::len), Some(150), "{statuses}");
    let failed = crate::audit::events_of(&app, AuditSubject::Principal(user.id))
        .await
        .into_iter()
        .filter(|event| event.kind == AuditKind::SecondFactorFailed)
        .count();
    let after = sessions
        .list_sessions(&user.id, app.clock.now())
        .await
        .unwrap()
        .len();
    let signed_in = after - before;
    assert!(
        failed + signed_in <= 5,
        "{failed} wrong codes and {signed_in} sign-ins compared of 150: {statuses}"
    );
    browser.close().await.unwrap();
}

#[tokio::test]
async fn parallel_codes_posted_by_the_page_compare_at_most_the_threshold_sqlite() {
    parallel_codes_from_the_page(Backend::Sqlite).await;
}

#[tokio::test]
async fn parallel_codes_posted_by_the_page_compare_at_most_the_threshold_dynamodb() {
    parallel_codes_from_the_page(Backend::DynamoDb).await;
}
