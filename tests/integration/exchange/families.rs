//! One live family per old token: a repeated exchange revokes the previous family, and
//! concurrent exchanges leave exactly one.

use crate::on_both_stores;
use crate::support::app::{jti_of, TestApp};
use crate::support::assertions::assert_token_error as assert_error;
use reqwest::StatusCode;

use super::*;

on_both_stores!(
    repeated_exchange_revokes_the_previous_family,
    concurrent_exchanges_leave_one_live_family,
);

async fn repeated_exchange_revokes_the_previous_family(app: TestApp) {
    let m = Migration::new(&app, "read").await;
    let (_, old) = m.user_with_old_token(&app, "erin").await;

    let first = m.exchange(&app, &old).await;
    let first = assert_ok(&first).clone();
    let first_jti = jti_of(first["accessToken"].as_str().unwrap());
    let first_record = app.stored_access_token(&first_jti).await.unwrap();
    assert!(!first_record.revoked);
    let first_family = first_record.family_id.unwrap();

    // A retry after a lost response: succeeds again, with new tokens.
    app.clock.advance(5);
    let second = m.exchange(&app, &old).await;
    let second = assert_ok(&second).clone();
    assert_ne!(first["refreshToken"], second["refreshToken"]);
    assert_ne!(first["accessToken"], second["accessToken"]);

    // The first family is revoked: its refresh token gets 108, its access token reads revoked.
    let stale = app
        .refresh(&m.client, first["refreshToken"].as_str().unwrap())
        .await;
    assert_error(&stale, 400, "invalid_grant", 108);
    let first_record = app
        .stored_access_token(&first_jti)
        .await
        .expect("still within its hour");
    assert!(first_record.revoked, "first family's access token revoked");
    let family = app.stored_family(&first_family).await;
    assert!(family.revoked_at.is_some());

    // The old token points at the second family, which works.
    let second_jti = jti_of(second["accessToken"].as_str().unwrap());
    let second_record = app.stored_access_token(&second_jti).await.unwrap();
    assert!(!second_record.revoked);
    let link = app
        .stored_legacy_link(&old)
        .await
        .expect("old token linked");
    assert_eq!(Some(link.family_id), second_record.family_id);
    let fresh = app
        .refresh(&m.client, second["refreshToken"].as_str().unwrap())
        .await;
    assert_eq!(fresh.0, StatusCode::OK, "{}", fresh.1);
}

async fn concurrent_exchanges_leave_one_live_family(app: TestApp) {
    let m = Migration::new(&app, "read").await;
    let (_, old) = m.user_with_old_token(&app, "frank").await;

    // Two racers at a time: the loser's one retry meets a finished winner, so both answer 200
    // (with more racers a loser can lose twice and get a retryable 503, which proves nothing).
    let mut refresh_tokens = Vec::new();
    for _round in 0..3 {
        let answers = futures::future::join(m.exchange(&app, &old), m.exchange(&app, &old)).await;
        for answer in [answers.0, answers.1] {
            refresh_tokens.push(
                assert_ok(&answer)["refreshToken"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            );
        }
    }
    let mut live = 0;
    for token in &refresh_tokens {
        let (status, body) = app.refresh(&m.client, token).await;
        match status.as_u16() {
            200 => live += 1,
            _ => assert_error(&(status, body), 400, "invalid_grant", 108),
        }
    }
    assert_eq!(live, 1, "exactly one family survives");
}
