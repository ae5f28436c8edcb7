//! `verify_otp`: the parameters' order, expiry and supersession, the five tries, the bound
//! facts, and an unknown address told only after the password.

use super::*;

#[tokio::test]
async fn the_right_password_yields_the_user_once() {
    let h = Harness::new();
    let password = h.send(ADDRESS).await;
    let verification = h.verification("ann@example.com", &password, facts());
    assert_eq!(h.verify(verification.clone()).await.unwrap(), h.user);
    assert!(h.store.records()[0].consumed);
    assert_eq!(code(h.verify(verification).await), Some(83));
}

#[tokio::test]
async fn verification_checks_its_parameters_in_order() {
    let h = Harness::new();
    let mut missing_otp = h.verification(ADDRESS, "", facts());
    missing_otp.channel_type = None;
    assert_eq!(code(h.verify(missing_otp).await), Some(56));
    let mut no_type = h.verification(ADDRESS, "123456", facts());
    no_type.channel_type = None;
    assert_eq!(code(h.verify(no_type).await), Some(57));
    let mut no_handle = h.verification(ADDRESS, "123456", facts());
    no_handle.channel_handle = None;
    assert_eq!(code(h.verify(no_handle).await), Some(58));
    let mut sms = h.verification(ADDRESS, "123456", facts());
    sms.channel_type = Some("sms".to_owned());
    assert_eq!(code(h.verify(sms).await), Some(80));
    assert_eq!(
        code(
            h.verify(h.verification("not an address", "1", facts()))
                .await
        ),
        Some(81)
    );
    assert_eq!(
        code(h.verify(h.verification(ADDRESS, "123456", facts())).await),
        Some(83)
    );
}

#[tokio::test]
async fn expired_superseded_and_other_clients_passwords_are_not_found() {
    let h = Harness::new();
    let first = h.send(ADDRESS).await;
    let second = h.send(ADDRESS).await;
    if first != second {
        assert_eq!(
            code(h.verify(h.verification(ADDRESS, &first, facts())).await),
            Some(85),
            "a newer request supersedes"
        );
    }
    let mut other_client = h.verification(ADDRESS, &second, facts());
    other_client.client_id = ClientId::new(uuid::Uuid::new_v4());
    assert_eq!(code(h.verify(other_client).await), Some(83));

    h.clock.advance(600);
    assert_eq!(
        code(h.verify(h.verification(ADDRESS, &second, facts())).await),
        Some(83)
    );
}

#[tokio::test]
async fn the_fifth_wrong_try_closes_the_password() {
    let h = Harness::new();
    let password = h.send(ADDRESS).await;
    for _ in 0..5 {
        let attempt = h.verification(ADDRESS, &wrong(&password), facts());
        assert_eq!(code(h.verify(attempt).await), Some(85));
    }
    assert_eq!(h.store.records()[0].tries_left, 0);
    assert_eq!(
        code(h.verify(h.verification(ADDRESS, &password, facts())).await),
        Some(83)
    );
}

#[tokio::test]
async fn the_last_try_may_be_the_right_one() {
    let h = Harness::new();
    let password = h.send(ADDRESS).await;
    for _ in 0..4 {
        let attempt = h.verification(ADDRESS, &wrong(&password), facts());
        assert_eq!(code(h.verify(attempt).await), Some(85));
    }
    let verified = h.verify(h.verification(ADDRESS, &password, facts())).await;
    assert_eq!(verified.unwrap(), h.user);
}

#[tokio::test]
async fn parallel_guesses_never_exceed_five_tries() {
    let h = Arc::new(Harness::new());
    let password = h.send(ADDRESS).await;
    let guesses = (0..12).map(|_| {
        let h = Arc::clone(&h);
        let guess = wrong(&password);
        async move { code(h.verify(h.verification(ADDRESS, &guess, facts())).await) }
    });
    let mut codes = futures::future::join_all(guesses).await;
    codes.sort();
    assert_eq!(codes.iter().filter(|c| **c == Some(85)).count(), 5);
    assert_eq!(codes.iter().filter(|c| **c == Some(83)).count(), 7);
}

#[tokio::test]
async fn different_facts_fail_after_the_password_and_spend_a_try() {
    let h = Harness::new();
    let password = h.send(ADDRESS).await;
    for changed in [
        OtpFacts {
            name: Some("Eve".to_owned()),
            ..facts()
        },
        OtpFacts {
            company: Some("Acme".to_owned()),
            ..facts()
        },
        OtpFacts {
            link: None,
            ..facts()
        },
    ] {
        let attempt = h.verification(ADDRESS, &password, changed);
        assert_eq!(code(h.verify(attempt).await), Some(84));
    }
    assert_eq!(h.store.records()[0].tries_left, 2);
    // Absent and empty are the same fact.
    let same = OtpFacts {
        company: Some(String::new()),
        ..facts()
    };
    let verified = h.verify(h.verification(ADDRESS, &password, same)).await;
    assert_eq!(verified.unwrap(), h.user);
}

#[tokio::test]
async fn an_unknown_address_is_told_only_after_the_password_is_verified() {
    let h = Harness::new();
    let stranger = "stranger@example.com";
    let password = h.send(stranger).await;
    let looked_up = Mutex::new(false);
    let lookup = |_: ChannelHandle| async {
        *looked_up.lock().unwrap() = true;
        Ok(None::<PrincipalId>)
    };
    let attempt = h.verification(stranger, &wrong(&password), facts());
    assert_eq!(code(verify_otp(h.deps(), attempt, lookup).await), Some(85));
    assert!(!*looked_up.lock().unwrap(), "no lookup before verification");
    assert_eq!(
        code(h.verify(h.verification(stranger, &password, facts())).await),
        Some(55)
    );
}
