//! A second factor's code under truly simultaneous guesses, on both stores (part 22, amended):
//! each code is counted toward the login's lockout before it is compared, so 40 codes sent at
//! once, the right one among them, never get more than the threshold compared (counted by the
//! `second_factor.failed` events and the sign-ins they gave); one password step takes at most
//! five codes; and code posts count against the source address's sign-in limit, on the account
//! page and the authorize page alike.

use futures::future::join_all;
use reqwest::{header, StatusCode};
use token_core::config::{Policy, RateLimits};
use token_domain::audit::{AuditKind, AuditSubject};
use token_domain::clock::Clock;
use token_domain::{PrincipalId, TotpSecret};

use super::second_factor::{between, enrolled, post, session_cookie};
use super::*;
use crate::audit::events_of;
use crate::authorize::flow::{csrf, query, Session};
use crate::support::app::AppOptions;
use token_core::flows::second_factor::{check_code, CodeCheck};

crate::on_both_stores!(
    parallel_codes_never_get_more_than_the_threshold_compared,
    parallel_code_posts_on_the_account_page_compare_at_most_the_threshold,
    parallel_code_posts_on_the_authorize_page_compare_at_most_the_threshold,
);

/// The default `LOCKOUT_THRESHOLD`.
const THRESHOLD: usize = 5;
/// Enough to be four times the threshold and far above it in flight at once; more would only
/// measure DynamoDB Local's throughput on one hot item (one attempt may take 2 s, then 503).
const PARALLEL: usize = 40;
const WRONG_CODE: &str = "That code was not right";
const TOO_MANY_CODES: &str = "Too many codes were typed for this sign-in";

/// `PARALLEL` codes, the right one in the middle, the others wrong (a right code plus one).
fn codes(secret: &TotpSecret, now: i64) -> Vec<String> {
    let right = secret.code_at(now);
    let wrong = format!("{:06}", (right.parse::<u32>().unwrap() + 1) % 1_000_000);
    (0..PARALLEL)
        .map(|i| {
            if i == PARALLEL / 2 {
                right.clone()
            } else {
                wrong.clone()
            }
        })
        .collect()
}

/// The wrong codes the store saw compared for `user`.
async fn compared_wrong(app: &TestApp, user: PrincipalId) -> usize {
    events_of(app, AuditSubject::Principal(user))
        .await
        .into_iter()
        .filter(|event| event.kind == AuditKind::SecondFactorFailed)
        .count()
}

async fn parallel_codes_never_get_more_than_the_threshold_compared(app: TestApp) {
    let user = app.create_user(LOGIN, PASSWORD).await;
    let (secret, _) = enrolled(&app).await;
    app.clock.advance(30);
    let codes = codes(&secret, app.clock.now());
    let checks = join_all(codes.iter().map(|code| {
        let (app, user) = (&app, &user);
        async move { check_code(&app.services, user, code).await.unwrap() }
    }))
    .await;
    let accepted = checks
        .iter()
        .filter(|check| matches!(check, CodeCheck::Totp(_)))
        .count();
    let wrong = compared_wrong(&app, user.id).await;
    // A right code gives its count back (part 22), so one more wrong code may then be compared
    // in its place: the wrong ones never pass the threshold, and one code at most is accepted.
    assert!(
        wrong <= THRESHOLD && accepted <= 1,
        "{wrong} wrong and {accepted} right codes compared of {PARALLEL} under a threshold of {THRESHOLD}"
    );
}

async fn parallel_code_posts_on_the_account_page_compare_at_most_the_threshold(app: TestApp) {
    let user = app.create_user(LOGIN, PASSWORD).await;
    let (secret, _) = enrolled(&app).await;
    let (nonce, answer) = super::account_sign_in(&app).await;
    let html = answer.text().await.unwrap();
    let pending = between(&html, r#"name="pending" value=""#, '"');
    let token = csrf(&html);
    app.clock.advance(30);
    let codes = codes(&secret, app.clock.now());
    let answers = join_all(codes.iter().map(|code| {
        let (app, nonce, token, pending) = (&app, &nonce, &token, &pending);
        async move {
            let form = [
                ("csrf_token", token.as_str()),
                ("action", "sign_in_code"),
                ("pending", pending.as_str()),
                ("code", code.as_str()),
            ];
            let answer = post(app, nonce, &form).await;
            let signed_in = session_cookie(&answer);
            (answer.status(), signed_in, answer.text().await.unwrap())
        }
    }))
    .await;
    let signed_in = answers
        .iter()
        .filter(|(_, signed_in, _)| *signed_in)
        .count();
    let wrong = compared_wrong(&app, user.id).await;
    assert!(
        wrong + signed_in <= THRESHOLD,
        "{wrong} wrong codes and {signed_in} sign-ins of {PARALLEL} posts"
    );
    let told_wrong = answers
        .iter()
        .filter(|(_, _, html)| html.contains(WRONG_CODE))
        .count();
    assert!(
        told_wrong <= wrong,
        "{told_wrong} answers said a code was wrong"
    );
}

async fn parallel_code_posts_on_the_authorize_page_compare_at_most_the_threshold(app: TestApp) {
    let user = app.create_user(LOGIN, PASSWORD).await;
    let (secret, _) = enrolled(&app).await;
    let client = oidc_client(&app, "relying party").await;
    let mut browser = Session::new(&app);
    let answer = browser.sign_in_answer(&query(&client, &[]), PASSWORD).await;
    let page = answer.text().await.unwrap();
    assert!(page.contains("One more step"), "{page}");
    let (token, cookie) = (
        csrf(&page),
        browser.cookie.clone().expect("the pending cookie"),
    );
    app.clock.advance(30);
    let codes = codes(&secret, app.clock.now());
    let answers = join_all(codes.iter().map(|code| {
        let (app, token, cookie) = (&app, &token, &cookie);
        async move {
            let answer = app
                .http
                .post(app.url("/oauth2/v0/authorize"))
                .header(header::COOKIE, cookie)
                .form(&[("csrf_token", token.as_str()), ("code", code.as_str())])
                .send()
                .await
                .unwrap();
            let signed_in = session_cookie(&answer);
            (answer.status(), signed_in)
        }
    }))
    .await;
    let signed_in = answers.iter().filter(|(_, signed_in)| *signed_in).count();
    let wrong = compared_wrong(&app, user.id).await;
    assert!(
        wrong + signed_in <= THRESHOLD,
        "{wrong} wrong codes and {signed_in} sign-ins of {PARALLEL} posts: {answers:?}"
    );
}

/// One account-page sign-in of `LOGIN` up to its code page: the nonce cookie, the page's CSRF
/// token and the sealed password step.
async fn code_page(app: &TestApp) -> (String, String, String) {
    let (nonce, answer) = super::account_sign_in(app).await;
    assert_eq!(answer.status(), StatusCode::OK);
    let html = answer.text().await.unwrap();
    let pending = between(&html, r#"name="pending" value=""#, '"');
    (nonce, csrf(&html), pending)
}

async fn type_on_account_page(
    app: &TestApp,
    (nonce, token, pending): &(String, String, String),
    code: &str,
) -> (StatusCode, String) {
    let form = [
        ("csrf_token", token.as_str()),
        ("action", "sign_in_code"),
        ("pending", pending.as_str()),
        ("code", code),
    ];
    let answer = post(app, nonce, &form).await;
    (answer.status(), answer.text().await.unwrap())
}

mod per_step {
    use super::*;

    /// A lockout threshold above the per-step cap, so that the cap is what stops the codes.
    pub(crate) fn lenient_lockout() -> AppOptions {
        AppOptions {
            policy: Policy {
                lockout_threshold: 20,
                ..Policy::default()
            },
            ..AppOptions::default()
        }
    }

    crate::on_both_stores!(with crate::openid::code_races::per_step::lenient_lockout();
        one_password_step_takes_at_most_five_codes_on_either_page);

    async fn one_password_step_takes_at_most_five_codes_on_either_page(app: TestApp) {
        app.create_user(LOGIN, PASSWORD).await;
        let (secret, _) = enrolled(&app).await;
        let step = code_page(&app).await;
        for attempt in 1..=5 {
            let (status, html) = type_on_account_page(&app, &step, "000000x").await;
            assert_eq!(status, StatusCode::OK);
            assert!(html.contains(WRONG_CODE), "code {attempt}: {html}");
        }
        app.clock.advance(30);
        let right = secret.code_at(app.clock.now());
        let (_, html) = type_on_account_page(&app, &step, &right).await;
        assert!(html.contains(TOO_MANY_CODES), "the sixth code: {html}");
        assert!(
            html.contains(r#"name="password""#),
            "the password again: {html}"
        );
        // A new password step takes codes again.
        let again = code_page(&app).await;
        let (status, _) = type_on_account_page(&app, &again, &right).await;
        assert_eq!(status, StatusCode::SEE_OTHER, "signed in with the code");

        let client = oidc_client(&app, "relying party").await;
        let mut browser = Session::new(&app);
        let answer = browser.sign_in_answer(&query(&client, &[]), PASSWORD).await;
        let mut page = answer.text().await.unwrap();
        for attempt in 1..=5 {
            let answer = browser
                .post(&[("csrf_token", &csrf(&page)), ("code", "000000x")])
                .await;
            page = answer.text().await.unwrap();
            assert!(page.contains(WRONG_CODE), "code {attempt}: {page}");
        }
        app.clock.advance(30);
        let right = secret.code_at(app.clock.now());
        let answer = browser
            .post(&[("csrf_token", &csrf(&page)), ("code", &right)])
            .await;
        assert!(!session_cookie(&answer), "no session from the sixth code");
        let page = answer.text().await.unwrap();
        assert!(page.contains(TOO_MANY_CODES), "the sixth code: {page}");
    }
}

mod address {
    use super::*;

    /// Four sign-in posts a minute from one address.
    pub(crate) fn four_a_minute() -> AppOptions {
        crate::limits::with_limits(RateLimits {
            address_per_minute: 4,
            ..RateLimits::default()
        })
    }

    crate::on_both_stores!(with crate::openid::code_races::address::four_a_minute();
        code_posts_count_against_the_addresss_sign_in_limit);

    async fn code_posts_count_against_the_addresss_sign_in_limit(app: TestApp) {
        app.create_user(LOGIN, PASSWORD).await;
        enrolled(&app).await;
        let now = app.clock.now();
        app.clock.advance(60 - now.rem_euclid(60));
        // The password post, then three codes: the address's four posts this minute.
        let step = code_page(&app).await;
        for attempt in 1..=3 {
            let (status, html) = type_on_account_page(&app, &step, "000000x").await;
            assert_eq!(status, StatusCode::OK, "code {attempt}: {html}");
        }
        let (status, _) = type_on_account_page(&app, &step, "000000x").await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "the fifth post");
    }
}
