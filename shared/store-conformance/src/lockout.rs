//! Password lockout: an atomic attempt counter per login.

use super::records::*;
use crate::domain::Login;
use crate::store::prelude::*;
use crate::store::{AllowedAttempt, Attempt, AttemptLimit, LoginRefund};
use crate::writes::{create_family, FamilyCreated, FamilyStart};

const LIMIT: AttemptLimit = AttemptLimit {
    threshold: 3,
    window_seconds: 15 * 60,
};

fn fresh_login() -> Login {
    Login::parse(&unique_login()).expect("valid login")
}

async fn register(store: &dyn Store, login: &Login, at: i64) -> Attempt {
    store
        .lockout()
        .register_login_attempt(login, LIMIT, at)
        .await
        .expect("register_login_attempt")
}

fn allowed(count: u32, window_start: i64) -> Attempt {
    Attempt::Allowed(AllowedAttempt {
        count,
        window_start,
    })
}

async fn is_locked(store: &dyn Store, login: &Login, at: i64) -> bool {
    store
        .lockout()
        .is_login_locked(login, LIMIT, at)
        .await
        .expect("is_login_locked")
}

pub async fn a_login_reads_locked_exactly_while_locked_and_reading_counts_nothing(
    store: &dyn Store,
) {
    let now = now();
    let login = fresh_login();
    assert!(!is_locked(store, &login, now).await, "never attempted");
    for _ in 0..10 {
        assert!(!is_locked(store, &login, now).await);
    }
    assert_eq!(
        register(store, &login, now).await,
        allowed(1, now),
        "reading counted nothing"
    );
    register(store, &login, now + 1).await;
    assert!(
        !is_locked(store, &login, now + 2).await,
        "below the threshold"
    );
    register(store, &login, now + 2).await;
    assert!(is_locked(store, &login, now + 3).await, "at the threshold");
    assert!(
        is_locked(store, &login, now + LIMIT.window_seconds - 1).await,
        "until the window ends"
    );
    assert!(
        !is_locked(store, &login, now + LIMIT.window_seconds).await,
        "not after"
    );
    assert!(
        !is_locked(store, &fresh_login(), now + 3).await,
        "another login"
    );
}

pub async fn login_attempts_lock_at_the_threshold_until_the_window_ends(store: &dyn Store) {
    let now = now();
    let raw = unique_login();
    let login = Login::parse(&raw).expect("valid login");
    let other = fresh_login();

    assert_eq!(register(store, &login, now).await, allowed(1, now));
    assert_eq!(register(store, &login, now + 10).await, allowed(2, now));
    let same_login_other_case = Login::parse(&raw.to_uppercase()).expect("valid login");
    assert_eq!(
        register(store, &same_login_other_case, now + 20).await,
        allowed(3, now),
        "attempts count per login, whatever its case"
    );
    assert_eq!(register(store, &login, now + 30).await, Attempt::Locked);
    assert_eq!(
        register(store, &login, now + LIMIT.window_seconds - 1).await,
        Attempt::Locked,
        "locked until the window opened by the first attempt ends"
    );
    assert_eq!(
        register(store, &other, now + 30).await,
        allowed(1, now + 30),
        "another login is counted apart"
    );

    let next_window = now + LIMIT.window_seconds;
    assert_eq!(
        register(store, &login, next_window).await,
        allowed(1, next_window),
        "a new window opens once the old one has ended"
    );
}

pub async fn refunded_login_attempts_never_lock(store: &dyn Store) {
    let now = now();
    let login = fresh_login();
    for i in 0..(LIMIT.threshold * 3) {
        let Attempt::Allowed(attempt) = register(store, &login, now + i64::from(i)).await else {
            panic!("attempt {i} was locked although every earlier one was refunded");
        };
        assert_eq!(attempt.count, 1);
        store
            .lockout()
            .refund_login_attempt(&login, &attempt)
            .await
            .expect("refund_login_attempt");
    }

    // A refund for a window that has ended charges nothing to the new one.
    let Attempt::Allowed(old) = register(store, &login, now).await else {
        panic!("locked");
    };
    let later = now + LIMIT.window_seconds;
    assert_eq!(register(store, &login, later).await, allowed(1, later));
    store
        .lockout()
        .refund_login_attempt(&login, &old)
        .await
        .expect("refund_login_attempt");
    assert_eq!(register(store, &login, later + 1).await, allowed(2, later));
}

/// The point of counting before comparing: parallel attempts cannot pass the threshold.
pub async fn parallel_login_attempts_never_exceed_the_threshold(store: &dyn Store) {
    let now = now();
    let login = fresh_login();
    let attempts = futures::future::join_all((0..20).map(|_| register(store, &login, now))).await;
    let mut counts: Vec<u32> = attempts
        .iter()
        .filter_map(|attempt| match attempt {
            Attempt::Allowed(allowed) => Some(allowed.count),
            Attempt::Locked => None,
        })
        .collect();
    counts.sort_unstable();
    assert_eq!(
        counts,
        (1..=LIMIT.threshold).collect::<Vec<_>>(),
        "exactly the threshold's attempts pass, each with its own count"
    );
}

/// The password grant's refund rides on the family's write: the attempt is taken back with it,
/// and an attempt whose window has ended meanwhile does not stop the family.
pub async fn a_family_write_takes_back_its_login_attempt(store: &dyn Store) {
    let now = now();
    let login = fresh_login();
    let Attempt::Allowed(attempt) = register(store, &login, now).await else {
        panic!("locked");
    };
    let bundle = Bundle::live(now);
    let created = create_family(
        store,
        FamilyStart {
            login_refund: Some(LoginRefund {
                login: login.clone(),
                attempt,
            }),
            ..bundle.new_family()
        },
    )
    .await;
    assert_eq!(created, FamilyCreated::Created);
    assert_eq!(
        register(store, &login, now + 1).await,
        allowed(1, now),
        "the family's write took the attempt back"
    );

    // The window of an attempt ends before its family is written: nothing to take back, and the
    // new window keeps its count.
    let Attempt::Allowed(old) = register(store, &login, now + 2).await else {
        panic!("locked");
    };
    let later = now + LIMIT.window_seconds;
    assert_eq!(register(store, &login, later).await, allowed(1, later));
    let late = Bundle::live(now);
    let created = create_family(
        store,
        FamilyStart {
            login_refund: Some(LoginRefund {
                login: login.clone(),
                attempt: old,
            }),
            ..late.new_family()
        },
    )
    .await;
    assert_eq!(created, FamilyCreated::Created);
    assert!(store
        .families()
        .get_family(&late.family.id, now)
        .await
        .unwrap()
        .is_some());
    assert_eq!(register(store, &login, later + 1).await, allowed(2, later));
}
