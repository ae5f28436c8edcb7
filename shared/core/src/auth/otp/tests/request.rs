//! `request_otp`: the channel's checks, the mail, the stored hash, the per-address cap.

use super::*;

#[tokio::test]
async fn request_checks_the_channel_in_order_and_sends_nothing_when_refused() {
    let h = Harness::new();
    let cases = [
        (None, None, 57),
        (Some(""), Some(ADDRESS), 57),
        (Some("sms"), None, 58),
        (Some("sms"), Some(ADDRESS), 80),
        (Some("email"), Some("ann@"), 81),
    ];
    for (channel_type, channel_handle, expected) in cases {
        let mut request = h.request(ADDRESS, facts());
        request.channel_type = channel_type.map(str::to_owned);
        request.channel_handle = channel_handle.map(str::to_owned);
        assert_eq!(code(request_otp(h.deps(), request).await), Some(expected));
    }
    assert!(h.mailer.sent.lock().unwrap().is_empty());
    assert!(h.store.records().is_empty());
}

#[tokio::test]
async fn request_mails_the_password_and_stores_only_its_hash() {
    let h = Harness::new();
    let password = h.send(ADDRESS).await;
    // No user has this address: the request cannot tell, and answers the same.
    h.send("stranger@example.com").await;

    let mail = h.mailer.sent.lock().unwrap()[0].clone();
    assert_eq!(mail.to.as_str(), ADDRESS);
    assert_eq!(mail.app_name, "Expenses");
    assert_eq!(
        mail.link.as_deref(),
        Some("https://app.example.com/continue")
    );
    let record = &h.store.records()[0];
    let now = h.clock.now();
    assert_eq!(record.expires_at, now + 600);
    assert_eq!((record.tries_left, record.consumed), (5, false));
    assert_eq!(record.client_id, h.client);
    assert_eq!(record.facts, facts().hash());
    assert!(!record.password.as_phc().contains(&password));
    assert!(record.password.verify(&Secret::new(&password)));
}

#[tokio::test]
async fn a_failed_send_leaves_no_password_behind() {
    let mut h = Harness::new();
    h.mailer.down = true;
    let result = request_otp(h.deps(), h.request(ADDRESS, facts())).await;
    assert!(
        matches!(&result, Err(Refusal::Server(error)) if error.is_unavailable()),
        "{result:?}"
    );
    assert!(h.store.records().is_empty());
}

#[tokio::test]
async fn five_unconsumed_requests_per_address_in_fifteen_minutes() {
    let h = Harness::new();
    for _ in 0..5 {
        h.send(ADDRESS).await;
    }
    // Same address in another case: same cap. Nothing is mailed.
    let refused = request_otp(h.deps(), h.request("ann@example.COM", facts())).await;
    assert!(matches!(
        refused,
        Err(Refusal::Denied(OtpDenial::TooManyOpenRequests))
    ));
    assert_eq!(
        refused.unwrap_err().denial().map(OtpDenial::error_code),
        Some(crate::errors::ErrorCode::TooManyOpenOtpRequests)
    );
    assert_eq!(h.mailer.sent.lock().unwrap().len(), 5);
    h.send("other@example.com").await;

    h.clock.advance(15 * 60 + 1);
    h.send(ADDRESS).await;
}

#[tokio::test]
async fn a_redeemed_request_no_longer_counts_toward_the_cap() {
    let h = Harness::new();
    for _ in 0..4 {
        h.send(ADDRESS).await;
    }
    let password = h.send(ADDRESS).await;
    h.verify(h.verification(ADDRESS, &password, facts()))
        .await
        .unwrap();
    h.send(ADDRESS).await;
}
