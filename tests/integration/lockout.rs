//! The race-free lockout (docs/decisions.md, Lockout) over HTTP, on both stores: attempts are
//! counted before the password is compared, so a burst of parallel guesses gets at most
//! `LOCKOUT_THRESHOLD` verdicts, and a locked login is locked for every client and every
//! deployment.

use crate::support::app::TestApp;
use crate::support::assertions::assert_token_error;
use futures::future::join_all;
use reqwest::StatusCode;
use serde_json::Value;

crate::on_both_stores!(
    parallel_wrong_passwords_get_at_most_the_threshold_verdicts,
    a_locked_login_is_locked_for_every_client_and_region,
    correct_passwords_never_lock,
);

const PASSWORD: &str = "lockout password 1";
/// The default `LOCKOUT_THRESHOLD`.
const THRESHOLD: usize = 5;

fn code_of(answer: &(StatusCode, Value)) -> u64 {
    answer.1["code"]
        .as_u64()
        .unwrap_or_else(|| panic!("no numeric code: {answer:?}"))
}

async fn parallel_wrong_passwords_get_at_most_the_threshold_verdicts(app: TestApp) {
    let client = app.create_client("read").await;
    app.create_user("burst", PASSWORD).await;
    for login in ["burst", "nobody-burst"] {
        let answers =
            join_all((0..30).map(|_| app.password_grant(&client, login, "wrong", &[]))).await;
        let verdicts = answers.iter().filter(|a| code_of(a) == 5).count();
        let locked = answers.iter().filter(|a| code_of(a) == 14).count();
        assert!(
            (1..=THRESHOLD).contains(&verdicts),
            "{login}: {verdicts} code-5 answers to 30 parallel guesses: {answers:?}"
        );
        assert_eq!(verdicts + locked, 30, "{login}: only 5 and 14: {answers:?}");
        for answer in &answers {
            assert_eq!(answer.0, StatusCode::BAD_REQUEST, "{answer:?}");
        }
    }
    // The right password is now refused too (in the next minute: the 60 guesses above used up
    // this minute's password grants from the test's one address, RATE_LIMIT_ADDRESS_PER_MINUTE).
    app.clock.advance(60);
    assert_token_error(
        &app.password_grant(&client, "burst", PASSWORD, &[]).await,
        400,
        "invalid_grant",
        14,
    );
}

async fn a_locked_login_is_locked_for_every_client_and_region(app: TestApp) {
    let (a, b) = (
        app.create_client("read").await,
        app.create_client("read").await,
    );
    app.create_user("locked", PASSWORD).await;
    for _ in 0..THRESHOLD {
        assert_token_error(
            &app.password_grant(&a, "locked", "wrong", &[]).await,
            400,
            "invalid_grant",
            5,
        );
    }
    let other_region = app.spawn_other_region().await;
    for (deployment, client) in [
        (&app, &a),
        (&app, &b),
        (&other_region, &a),
        (&other_region, &b),
    ] {
        for pw in [PASSWORD, "wrong"] {
            assert_token_error(
                &deployment.password_grant(client, "locked", pw, &[]).await,
                400,
                "invalid_grant",
                14,
            );
        }
    }
    // Until the window ends (the clock is shared by both deployments). The user lives in the
    // first region: the other one would now send the client there (code 16).
    app.clock.advance(15 * 60);
    let (status, body) = app.password_grant(&b, "locked", PASSWORD, &[]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

/// A correct password takes its attempt back: many sign-ins never lock, and earlier failures
/// plus later successes never add up to a lockout.
async fn correct_passwords_never_lock(app: TestApp) {
    let client = app.create_client("read").await;
    app.create_user("regular", PASSWORD).await;
    for _ in 0..THRESHOLD - 1 {
        assert_token_error(
            &app.password_grant(&client, "regular", "typo", &[]).await,
            400,
            "invalid_grant",
            5,
        );
    }
    for _ in 0..3 * THRESHOLD {
        let (status, body) = app.password_grant(&client, "regular", PASSWORD, &[]).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    // The failures still count: one more locks.
    assert_token_error(
        &app.password_grant(&client, "regular", "typo", &[]).await,
        400,
        "invalid_grant",
        5,
    );
    assert_token_error(
        &app.password_grant(&client, "regular", PASSWORD, &[]).await,
        400,
        "invalid_grant",
        14,
    );
}
