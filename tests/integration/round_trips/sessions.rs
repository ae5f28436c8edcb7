//! Budgets of single sign-on, warm: an authorization answered from a live session and a
//! remembered consent (no page at all). Within the minute the session's last-seen time is not
//! written, and a session that already lists the client is not written either
//! (docs/decisions.md, Sign-in sessions).

use super::counted::*;
use crate::authorize::flow::{query, redirect_query, Session, LOGIN};
use reqwest::StatusCode;

/// The new code's item (under 1 KB: 1).
const AUTHORIZE_FROM_A_SESSION_UNITS: f64 = 1.0;
/// Once a minute, the session's last-seen time besides (an `UpdateItem` of a small item: 1).
const LAST_SEEN_UNITS: f64 = 1.0;

/// Goal ≤ 3 within the minute: the session (`GetItem` by its sid), the remembered consent
/// (`GetItem`) and the new code (`PutItem`); the client and the session's user (whose status
/// every use reads, part 21) come from the read cache once warm. Once a minute at most, one
/// more: the session's last-seen time (`UpdateItem`); by then the user's entry has aged out of
/// the read cache (at most 5 s), so it is read again (`GetItem`): 5.
pub async fn authorize_from_a_session(c: Counted) {
    c.app.create_user(LOGIN, PASSWORD).await;
    let client = crate::openid::oidc_client(&c.app, "relying party").await;
    let mut browser = Session::new(&c.app);
    let first = browser.decide(&query(&client, &[]), "approve").await;
    assert!(first.contains_key("code"), "{first:?}");
    let silent = query(&client, &[("prompt", "none")]);
    let warm = redirect_query(&browser.open(&silent).await);
    assert!(warm.contains_key("code"), "warm: {warm:?}");

    c.app.clock.advance(1);
    let (answer, calls) = c
        .calls_of(
            "authorize from a session within the minute",
            browser.open(&silent),
        )
        .await;
    assert!(redirect_query(&answer).contains_key("code"));
    assert_within(&calls, 3, "authorize from a session within the minute");
    assert_eq!(calls.count("UpdateItem"), 0, "no write for last seen");
    assert_eq!(calls.count("PutItem"), 1, "the code only");
    assert_write_units(
        &calls,
        AUTHORIZE_FROM_A_SESSION_UNITS,
        "authorize from a session within the minute",
    );

    // A minute on, the read cache is warmed by another browser's sign-in page (the client).
    c.app.clock.advance(60);
    let mut other = Session::new(&c.app);
    assert_eq!(
        other.open(&query(&client, &[])).await.status(),
        StatusCode::OK
    );
    let (answer, calls) = c
        .calls_of("authorize from a session", browser.open(&silent))
        .await;
    assert_eq!(answer.status(), StatusCode::FOUND);
    assert!(redirect_query(&answer).contains_key("code"));
    assert_within(&calls, 5, "authorize from a session");
    assert_eq!(
        calls.count("GetItem"),
        3,
        "the session, its user, the consent"
    );
    assert_eq!(calls.count("UpdateItem"), 1, "last seen, a minute on");
    assert_write_units(
        &calls,
        AUTHORIZE_FROM_A_SESSION_UNITS + LAST_SEEN_UNITS,
        "authorize from a session",
    );
}
