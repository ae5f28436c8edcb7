//! Redemptions whose answer DynamoDB never delivered: the write landed and the service could not
//! know. The store repeats it (the SDK resubmits; the same family, or the consumption's own mark,
//! still satisfies the condition) or reads it back, so the client gets its tokens instead of a
//! "code already used" or "no open password" for its own redemption; and both stay single-use.

use crate::support::assertions::assert_token_error;
use crate::support::ddb_proxy::Fault;
use reqwest::StatusCode;
use token_domain::clock::Clock;
use token_domain::secrets::TokenHash;
use token_domain::{ChannelHandle, ClientId};
use token_store::prelude::*;

use super::other_endpoints::otp_request_to;
use super::{user_with_email, FaultyApp, Outage};
use crate::authorize::flow::{approved_code, code_client, exchange, LOGIN, PASSWORD};
use crate::refresh_faults::proxied_app;
use crate::refresh_rotation::field;

#[tokio::test]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn a_code_redemption_whose_answers_are_lost_still_answers_the_tokens() {
    let Some((app, proxy, direct)) = proxied_app().await else {
        return;
    };
    app.create_user(LOGIN, PASSWORD).await;
    let client = code_client(&app).await;
    let code = approved_code(&app, &client).await;

    // The exchange's first UpdateItem records the client secret's first use (hourly), its
    // second counts the client's request (its rate limit), its third is the redemption: every
    // attempt of that one lands, no answer returns.
    proxy.take_calls();
    proxy.inject(Fault::DropResponse.only_for("UpdateItem").sparing_first(2));
    let (status, body) = exchange(&app, &client, &code, &[]).await;
    proxy.clear_fault();
    assert_eq!(status, StatusCode::OK, "{body}");
    // How many of its three attempts the SDK makes depends on time (a 5 s operation timeout
    // over 2 s attempts with jittered backoff) and on the process-wide retry quota that every
    // test's client shares; what matters is that the lost answers still end in the tokens.
    let updates = proxy.calls().count("UpdateItem");
    assert!(
        (2 + 1..=2 + 3).contains(&updates),
        "the secret's last use, the client's counter, then the redemption's UpdateItem on each \
         of the SDK's attempts (one to three): {updates}"
    );

    let now = app.clock.now();
    let family_id = app
        .stored_refresh_token(field(&body, "refresh_token"))
        .await
        .family_id;
    let stored = direct
        .authorization_codes()
        .get_authorization_code(&TokenHash::of(&code), now)
        .await
        .unwrap()
        .expect("the code is kept after redemption");
    assert!(stored.redeemed_at.is_some(), "redeemed");
    assert_eq!(
        stored.family_id,
        Some(family_id),
        "linked to the answered family"
    );
    let family = direct
        .families()
        .get_family(&family_id, now)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(family.revoked_at, None, "the answered family is live");

    // Still single-use: a second use is refused and revokes that family (RFC 6749 §4.1.2).
    let reuse = exchange(&app, &client, &code, &[]).await;
    assert_token_error(&reuse, 400, "invalid_request", 103);
    let family = direct
        .families()
        .get_family(&family_id, now)
        .await
        .unwrap()
        .unwrap();
    assert!(family.revoked_at.is_some(), "a reuse revokes the family");
}

#[tokio::test]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn a_password_consumption_whose_answers_are_lost_still_answers_the_tokens() {
    let Some(app) = FaultyApp::dynamodb(Outage::Everything).await else {
        return;
    };
    let client = app.create_client("read").await;
    let address = "lost.answer@example.com";
    user_with_email(&app, "lost-answer", address).await;
    let sent = otp_request_to(&app, &client, address).send().await.unwrap();
    assert_eq!(sent.status(), 200);
    let password = app.mailed_passwords().pop().expect("a password was mailed");
    let form = [
        ("grant_type", "otp"),
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
        ("otp", password.as_str()),
        ("channel_type", "email"),
        ("channel_handle", address),
    ];

    // The grant's first UpdateItem counts the client's request (its rate limit), the second
    // spends a try, the third consumes the password: that one lands on every attempt and no
    // answer returns. (So does the open-request count's refund after it, which is best effort.)
    let proxy = app.proxy();
    proxy.take_calls();
    proxy.inject(Fault::DropResponse.only_for("UpdateItem").sparing_first(2));
    let (status, body) = app.token(&form).await;
    proxy.clear_fault();
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["principal_type"], "user");
    assert_eq!(
        proxy.calls().count("UpdateItem"),
        2 + 3 + 3,
        "the client's counter, the spent try, then the consumption and the refund on each of the \
         SDK's three attempts"
    );

    let key = ChannelHandle::parse(address).unwrap().key();
    let open = app
        .store
        .otp()
        .find_open_otp(&key, &ClientId::parse(&client.id).unwrap(), app.clock.now())
        .await
        .unwrap();
    assert!(open.is_none(), "the password is consumed");
    let again = app.token(&form).await;
    assert_token_error(&again, 400, "invalid_request", 83);
}
