//! Password lockout.

use super::records::*;
use crate::domain::Login;
use crate::store::prelude::*;

pub async fn failed_logins_are_counted_within_the_window(store: &dyn Store) {
    let now = now();
    let window = 15 * 60;
    let raw = unique_login();
    let login = Login::parse(&raw).expect("valid login");
    let other = Login::parse(&unique_login()).expect("valid login");

    assert_eq!(
        store
            .count_failed_logins(&login, now - window)
            .await
            .expect("count_failed_logins"),
        0,
        "no failures recorded yet"
    );
    // One long before the window (its record already expired), three within it.
    for at in [now - 3600, now - 600, now - 30, now] {
        store
            .record_failed_login(&login, at, at + window)
            .await
            .expect("record_failed_login");
    }
    store
        .record_failed_login(&other, now, now + window)
        .await
        .expect("record_failed_login");

    assert_eq!(
        store
            .count_failed_logins(&login, now - window)
            .await
            .expect("count_failed_logins"),
        3,
        "failures within the window are counted, older ones are not"
    );
    assert_eq!(
        store
            .count_failed_logins(&login, now - 30)
            .await
            .expect("count_failed_logins"),
        2,
        "a failure exactly at `since` is counted"
    );
    let same_login_other_case = Login::parse(&raw.to_uppercase()).expect("valid login");
    assert_eq!(
        store
            .count_failed_logins(&same_login_other_case, now - window)
            .await
            .expect("count_failed_logins"),
        3,
        "failures count per login, whatever its case"
    );
    assert_eq!(
        store
            .count_failed_logins(&other, now - window)
            .await
            .expect("count_failed_logins"),
        1,
        "failures of another login are counted apart"
    );

    // Two failures in the same second are two failures.
    store
        .record_failed_login(&other, now, now + window)
        .await
        .expect("record_failed_login");
    assert_eq!(
        store
            .count_failed_logins(&other, now - window)
            .await
            .expect("count_failed_logins"),
        2,
        "two failures in the same second count twice"
    );
}
