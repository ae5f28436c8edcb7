//! The flows' abuse limits: links only to the client's registered origins, wrong passwords
//! counted across passwords (then a day's block), the open-request cap held by a counter.

use super::*;

#[tokio::test]
async fn a_link_outside_the_registered_origins_is_refused_and_nothing_is_mailed() {
    let h = Harness::new();
    for link in [
        "https://evil.example.net/continue",
        "https://app.example.com.evil.example.net/",
        "http://app.example.com/continue",
        "javascript:alert(1)",
        "https://user@app.example.com/",
        "not a url",
    ] {
        let facts = OtpFacts {
            link: Some(link.to_owned()),
            ..facts()
        };
        assert_eq!(
            code(request_otp(h.deps(), h.request(ADDRESS, facts)).await),
            Some(86),
            "{link}"
        );
    }
    assert!(h.mailer.sent.lock().unwrap().is_empty());
    assert!(h.store.records().is_empty());
    h.send(ADDRESS).await;
}

#[tokio::test]
async fn wrong_passwords_across_passwords_block_the_address_for_a_day() {
    let h = Harness::new();
    let mut password = String::new();
    // Five passwords (the open-request cap), two wrong tries each: ten in the hour.
    for _ in 0..5 {
        password = h.send(ADDRESS).await;
        for _ in 0..2 {
            let verification = h.verification(ADDRESS, &wrong(&password), facts());
            assert_eq!(code(h.verify(verification).await), Some(85));
        }
    }
    // The last password is still open (three tries left), and right: refused all the same.
    let right = h.verification(ADDRESS, &password, facts());
    let refused = h.verify(right.clone()).await.unwrap_err();
    let Refusal::Denied(OtpDenial::RateLimited(exceeded)) = refused else {
        panic!("expected a rate limit, got {refused:?}");
    };
    assert_eq!(exceeded.limit.code().code(), 143);
    assert!(exceeded.retry_after > 23 * 3600, "{exceeded:?}");
    h.clock.advance(24 * 3600);
    let password = h.send(ADDRESS).await;
    let right = h.verification(ADDRESS, &password, facts());
    assert_eq!(h.verify(right).await.unwrap(), h.user);
}

#[tokio::test]
async fn parallel_requests_never_open_more_than_the_cap() {
    let h = Harness::new();
    let requests = (0..12).map(|_| request_otp(h.deps(), h.request(ADDRESS, facts())));
    let answers = futures::future::join_all(requests).await;
    let sent = answers.iter().filter(|answer| answer.is_ok()).count();
    assert_eq!(sent, MAX_OPEN_REQUESTS as usize, "{answers:?}");
    assert!(answers
        .iter()
        .filter_map(|answer| answer.as_ref().err())
        .all(|error| matches!(error, Refusal::Denied(OtpDenial::TooManyOpenRequests))));
    assert_eq!(
        h.mailer.sent.lock().unwrap().len(),
        MAX_OPEN_REQUESTS as usize
    );
}

#[tokio::test]
async fn another_clients_requests_and_wrong_passwords_neither_cap_nor_block_this_client() {
    let h = Harness::new();
    let other = ClientId::new(uuid::Uuid::new_v4());
    let ours = h.send(ADDRESS).await;
    // The other client opens its five requests, newer than ours, and guesses wrong ten times.
    for _ in 0..5 {
        let request = OtpRequest {
            client_id: other,
            ..h.request(ADDRESS, facts())
        };
        request_otp(h.deps(), request).await.unwrap();
        let theirs = h
            .mailer
            .sent
            .lock()
            .unwrap()
            .last()
            .unwrap()
            .password
            .clone();
        for _ in 0..2 {
            let guess = OtpVerification {
                client_id: other,
                ..h.verification(ADDRESS, &wrong(theirs.expose()), facts())
            };
            assert_eq!(code(h.verify(guess).await), Some(85));
        }
    }
    let capped = OtpRequest {
        client_id: other,
        ..h.request(ADDRESS, facts())
    };
    assert_eq!(code(request_otp(h.deps(), capped).await), Some(82));
    let blocked = OtpVerification {
        client_id: other,
        ..h.verification(ADDRESS, "000000", facts())
    };
    assert_eq!(code(h.verify(blocked).await), Some(143));

    let right = h.verification(ADDRESS, &ours, facts());
    assert_eq!(
        h.verify(right).await.unwrap(),
        h.user,
        "this client's password is still found, unblocked"
    );
    h.send(ADDRESS).await;
}
