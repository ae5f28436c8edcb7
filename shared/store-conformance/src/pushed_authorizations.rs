//! Pushed authorization requests (RFC 9126): taken once, only by their client, only before
//! they expire; of racing takes, one gets the record.

use std::collections::BTreeMap;

use super::records::*;
use crate::domain::{ClientId, PushedAuthorization, PUSHED_REQUEST_TTL_SECONDS};
use crate::random::{OsRandom, RandomExt};
use crate::store::prelude::*;

fn record(now: i64) -> PushedAuthorization {
    PushedAuthorization {
        request_uri_hash: random_hash(),
        client_id: ClientId::new(OsRandom.uuid()),
        parameters: BTreeMap::from([
            ("response_type".to_owned(), "code".to_owned()),
            (
                "redirect_uri".to_owned(),
                "https://app.example/cb".to_owned(),
            ),
            ("state".to_owned(), "s t\u{e9}".to_owned()),
        ]),
        pushed_at: now,
        expires_at: now + PUSHED_REQUEST_TTL_SECONDS,
    }
}

pub async fn pushed_authorization_is_taken_once_by_its_client(store: &dyn Store) {
    let now = now();
    let pushed = store.pushed_authorizations();
    let record = record(now);
    pushed
        .put_pushed_authorization(&record)
        .await
        .expect("put_pushed_authorization");
    let other = ClientId::new(OsRandom.uuid());
    assert_eq!(
        pushed
            .take_pushed_authorization(&record.request_uri_hash, &other, now)
            .await
            .unwrap(),
        None,
        "another client's"
    );
    assert_eq!(
        pushed
            .take_pushed_authorization(&random_hash(), &record.client_id, now)
            .await
            .unwrap(),
        None,
        "unknown"
    );
    assert_eq!(
        pushed
            .take_pushed_authorization(&record.request_uri_hash, &record.client_id, now + 1)
            .await
            .unwrap(),
        Some(record.clone()),
        "its client takes it, after another client's attempt left it in place"
    );
    assert_eq!(
        pushed
            .take_pushed_authorization(&record.request_uri_hash, &record.client_id, now + 1)
            .await
            .unwrap(),
        None,
        "used"
    );
}

pub async fn expired_pushed_authorization_is_not_taken(store: &dyn Store) {
    let now = now();
    let pushed = store.pushed_authorizations();
    let record = record(now);
    pushed.put_pushed_authorization(&record).await.unwrap();
    assert_eq!(
        pushed
            .take_pushed_authorization(
                &record.request_uri_hash,
                &record.client_id,
                record.expires_at
            )
            .await
            .unwrap(),
        None,
        "expired at its expiry, even while the item lingers"
    );
}

pub async fn concurrent_takes_of_a_pushed_authorization_have_one_winner(store: &dyn Store) {
    let now = now();
    let record = record(now);
    store
        .pushed_authorizations()
        .put_pushed_authorization(&record)
        .await
        .unwrap();
    let takes = (0..10).map(|_| {
        store.pushed_authorizations().take_pushed_authorization(
            &record.request_uri_hash,
            &record.client_id,
            now,
        )
    });
    let taken = futures::future::join_all(takes).await;
    let winners = taken
        .into_iter()
        .filter_map(|taken| taken.expect("take_pushed_authorization"))
        .count();
    assert_eq!(winners, 1);
}
