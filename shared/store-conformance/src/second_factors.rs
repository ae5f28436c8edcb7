//! Authenticator apps: one enrolment per user, each code's step and each recovery code used
//! once (also when two uses race), and removal.

use super::records::*;
use crate::domain::{recovery_codes, PrincipalId, TotpFactor};
use crate::random::{OsRandom, RandomExt};
use crate::secrets::TokenHash;
use crate::store::prelude::*;

fn factor(principal: PrincipalId, hashes: Vec<TokenHash>) -> TotpFactor {
    TotpFactor {
        principal_id: principal,
        sealed_secret: "sealed-secret-bytes".into(),
        last_used_step: 100,
        recovery_codes: hashes,
        enrolled_at: now(),
    }
}

pub async fn a_totp_enrolment_is_kept_once_and_each_step_used_once(store: &dyn Store) {
    let user = PrincipalId::new(OsRandom.uuid());
    let factors = store.second_factors();
    assert_eq!(factors.get_totp_factor(&user).await.unwrap(), None);
    assert!(
        !factors.use_totp_step(&user, 200).await.unwrap(),
        "no enrolment"
    );
    let (_, hashes) = recovery_codes(&OsRandom);
    let enrolled = factor(user, hashes);
    assert!(factors.put_totp_factor(&enrolled).await.unwrap());
    assert!(
        !factors
            .put_totp_factor(&factor(user, Vec::new()))
            .await
            .unwrap(),
        "a second enrolment does not replace the first"
    );
    assert_eq!(
        factors.get_totp_factor(&user).await.unwrap(),
        Some(enrolled.clone())
    );

    assert!(
        !factors.use_totp_step(&user, 100).await.unwrap(),
        "the step used at enrolment"
    );
    assert!(factors.use_totp_step(&user, 101).await.unwrap());
    assert!(
        !factors.use_totp_step(&user, 101).await.unwrap(),
        "a replay"
    );
    assert!(
        !factors.use_totp_step(&user, 99).await.unwrap(),
        "an older step"
    );
    let read = factors.get_totp_factor(&user).await.unwrap().unwrap();
    assert_eq!(read.last_used_step, 101);
    assert_eq!(read.recovery_codes, enrolled.recovery_codes);

    // Given back after a failure, the step may be used once more; not when a later one was.
    assert!(factors.release_totp_step(&user, 101, 100).await.unwrap());
    assert!(
        !factors.release_totp_step(&user, 101, 100).await.unwrap(),
        "no longer the last used step"
    );
    assert!(
        factors.use_totp_step(&user, 101).await.unwrap(),
        "used again"
    );
    assert!(factors.use_totp_step(&user, 102).await.unwrap());
    assert!(
        !factors.release_totp_step(&user, 101, 100).await.unwrap(),
        "a later step was used meanwhile"
    );
    assert_eq!(
        factors
            .get_totp_factor(&user)
            .await
            .unwrap()
            .unwrap()
            .last_used_step,
        102
    );

    assert!(factors.delete_totp_factor(&user).await.unwrap());
    assert!(!factors.delete_totp_factor(&user).await.unwrap());
    assert_eq!(factors.get_totp_factor(&user).await.unwrap(), None);
    assert!(
        factors.put_totp_factor(&enrolled).await.unwrap(),
        "enrolled again"
    );
}

pub async fn each_recovery_code_is_used_once_even_when_uses_race(store: &dyn Store) {
    let user = PrincipalId::new(OsRandom.uuid());
    let factors = store.second_factors();
    let (codes, hashes) = recovery_codes(&OsRandom);
    assert!(factors
        .put_totp_factor(&factor(user, hashes.clone()))
        .await
        .unwrap());
    let third = TokenHash::of(&codes[2]);
    assert!(factors.use_recovery_code(&user, &third).await.unwrap());
    assert!(
        !factors.use_recovery_code(&user, &third).await.unwrap(),
        "used"
    );
    assert!(!factors
        .use_recovery_code(&user, &TokenHash::of("not-a-code"))
        .await
        .unwrap());
    let other = PrincipalId::new(OsRandom.uuid());
    assert!(
        !factors
            .use_recovery_code(&other, &TokenHash::of(&codes[0]))
            .await
            .unwrap(),
        "another user's"
    );

    // The same code twice and two other codes at once: each succeeds exactly once.
    let first = TokenHash::of(&codes[0]);
    let last = TokenHash::of(&codes[9]);
    let (a, b, c) = tokio::join!(
        factors.use_recovery_code(&user, &first),
        factors.use_recovery_code(&user, &first),
        factors.use_recovery_code(&user, &last),
    );
    assert_eq!(
        [a.unwrap(), b.unwrap()].iter().filter(|won| **won).count(),
        1,
        "one use of a code wins"
    );
    assert!(c.unwrap(), "another code is not lost to the race");
    let read = factors.get_totp_factor(&user).await.unwrap().unwrap();
    let expected: Vec<TokenHash> = hashes
        .into_iter()
        .filter(|hash| ![&first, &third, &last].contains(&hash))
        .collect();
    assert_eq!(read.recovery_codes, expected);
}
