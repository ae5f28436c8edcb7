use super::*;
use crate::random::OsRandom;

#[test]
fn user_codes_are_eight_letters_of_the_alphabet_shown_with_a_dash() {
    for _ in 0..200 {
        let code = UserCode::generate(&OsRandom);
        let shown = code.display();
        assert_eq!(shown.len(), 9);
        assert_eq!(&shown[4..5], "-");
        assert!(shown
            .bytes()
            .filter(|b| *b != b'-')
            .all(|b| USER_CODE_ALPHABET.contains(&b)));
        assert_eq!(UserCode::parse(&shown), Some(code));
    }
}

#[test]
fn user_codes_read_case_insensitively_with_or_without_the_dash() {
    let code = UserCode::parse("BCDF-GHJK").unwrap();
    for typed in [
        "bcdfghjk",
        "BCDFGHJK",
        "bcdf-ghjk",
        " BcDf-gHjK ",
        "bcdf ghjk",
    ] {
        assert_eq!(UserCode::parse(typed).as_ref(), Some(&code), "{typed}");
        assert_eq!(UserCode::parse(typed).unwrap().hash(), code.hash());
    }
    for wrong in [
        "",
        "BCDF-GHJ",
        "BCDF-GHJKL",
        "ABCD-EFGH",
        "BCDF-GHJ1",
        "BCDF_GHJK",
    ] {
        assert_eq!(UserCode::parse(wrong), None, "{wrong}");
    }
}

fn record(status: DeviceStatus, last_polled_at: Option<UnixTime>) -> DeviceAuthorization {
    DeviceAuthorization {
        device_code_hash: TokenHash::of("device"),
        user_code_hash: TokenHash::of("BCDFGHJK"),
        client_id: ClientId::parse("11111111-2222-4333-8444-555555555555").unwrap(),
        scopes: Scopes::parse("openid").unwrap(),
        issued_at: 1000,
        expires_at: DeviceAuthorization::retained_until(1000),
        interval: DEVICE_POLL_INTERVAL_SECONDS,
        last_polled_at,
        status,
        user_id: None,
        auth_time: None,
        sid: None,
        amr: Vec::new(),
        resources: Vec::new(),
    }
}

#[test]
fn pending_polls_answer_pace_decided_ones_their_state_and_all_expire_after_ten_minutes() {
    use DeviceStatus::{Approved, Denied, Pending, Redeemed};
    assert_eq!(record(Pending, None).poll(1001), PollVerdict::Pending);
    assert_eq!(record(Pending, Some(1001)).poll(1004), PollVerdict::TooFast);
    assert_eq!(record(Pending, Some(1001)).poll(1006), PollVerdict::Pending);
    assert_eq!(record(Denied, Some(1001)).poll(1006), PollVerdict::Denied);
    assert_eq!(record(Denied, Some(1001)).poll(1002), PollVerdict::Denied);
    assert_eq!(
        record(Approved, Some(1001)).poll(1002),
        PollVerdict::Approved
    );
    assert_eq!(record(Pending, None).poll(1600), PollVerdict::Expired);
    assert_eq!(record(Redeemed, None).poll(1001), PollVerdict::Redeemed);
    assert_eq!(record(Approved, None).poll(1002), PollVerdict::Approved);
}

#[test]
fn the_stored_form_round_trips() {
    let stored = serde_json::to_value(record(DeviceStatus::Denied, Some(5))).unwrap();
    assert_eq!(stored["status"], "denied");
    let read: DeviceAuthorization = serde_json::from_value(stored).unwrap();
    assert_eq!(read, record(DeviceStatus::Denied, Some(5)));
}
