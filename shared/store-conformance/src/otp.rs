//! One-time passwords, and users' e-mail addresses (docs/decisions.md, "One-time passwords").

use std::sync::Arc;

use super::records::*;
use crate::clock::UnixTime;
use crate::domain::{AddressKey, ChannelHandle, ClientId, OtpHash, PrincipalId, User};
use crate::random::{OsRandom, RandomExt};
use crate::secrets::TokenHash;
use crate::store::prelude::*;
use crate::store::{EmailUpdate, FactsHash, Inserted, OtpId, OtpRecord};

/// An address no other call of the suite uses, in mixed case.
fn unique_address() -> ChannelHandle {
    let address = format!("Otp.{}@Example.COM", OsRandom.uuid().simple());
    ChannelHandle::parse(&address).expect("valid address")
}

/// The open password of `client` for `address` at `now`, as `find_open_otp` reads it.
async fn open_otp(
    store: &dyn Store,
    address: &AddressKey,
    client: &ClientId,
    now: UnixTime,
) -> Option<OtpRecord> {
    store
        .otp()
        .find_open_otp(address, client, now)
        .await
        .expect("find_open_otp")
}

/// How many unconsumed requests of `client` for `address` `count_otp_requests` finds since
/// `since`.
async fn requests(
    store: &dyn Store,
    address: &AddressKey,
    client: &ClientId,
    since: UnixTime,
) -> u32 {
    store
        .otp()
        .count_otp_requests(address, client, since)
        .await
        .expect("count_otp_requests")
}

fn random_client() -> ClientId {
    ClientId::new(OsRandom.uuid())
}

async fn user_with_email(store: &dyn Store, address: &ChannelHandle) -> Option<User> {
    store
        .principals()
        .get_user_by_email(address)
        .await
        .expect("get_user_by_email")
}

async fn set_email(store: &dyn Store, user: &PrincipalId, address: &ChannelHandle) -> EmailUpdate {
    store
        .principals()
        .set_user_email(user, address)
        .await
        .expect("set_user_email")
}

fn otp(address: &AddressKey, created_at: UnixTime, tries_left: u32) -> OtpRecord {
    otp_of(random_client(), address, created_at, tries_left)
}

fn otp_of(
    client_id: ClientId,
    address: &AddressKey,
    created_at: UnixTime,
    tries_left: u32,
) -> OtpRecord {
    OtpRecord {
        id: OtpId(OsRandom.uuid()),
        address: address.clone(),
        client_id,
        // A fixed PHC string: hashing a real password would only slow the suite down.
        password: OtpHash::from_phc(
            "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA".into(),
        ),
        // Any digest: the store keeps it and compares none.
        facts: FactsHash(TokenHash::of("facts")),
        created_at,
        expires_at: created_at + 600,
        tries_left,
        consumed: false,
    }
}

pub async fn otp_newest_open_record_counts_and_consumption(store: &dyn Store) {
    let now = now();
    let address = unique_address().key();
    let client = random_client();
    let window = now - 900;
    assert_eq!(requests(store, &address, &client, window).await, 0);
    assert_eq!(open_otp(store, &address, &client, now).await, None);

    let old = otp_of(client, &address, now - 1000, 5);
    let expired = otp_of(client, &address, now - 700, 5);
    let newest = otp_of(client, &address, now - 10, 5);
    for record in [&old, &expired, &newest] {
        store.otp().create_otp(record).await.expect("create_otp");
    }
    store
        .otp()
        .create_otp(&otp_of(client, &unique_address().key(), now, 5))
        .await
        .expect("create_otp for another address");

    assert_eq!(
        requests(store, &address, &client, window).await,
        2,
        "requests within the window are counted, expired ones too, older ones not"
    );
    assert_eq!(
        open_otp(store, &address, &client, now).await.as_ref(),
        Some(&newest),
        "the newest record is found, every field round-trips"
    );
    assert_eq!(
        open_otp(store, &address, &client, now + 590).await,
        None,
        "expiry is checked on read"
    );

    assert!(
        !store.otp().consume_otp(&newest, now + 590).await.unwrap(),
        "expired"
    );
    assert!(store.otp().consume_otp(&newest, now).await.unwrap());
    assert!(
        !store.otp().consume_otp(&newest, now).await.unwrap(),
        "redeems once"
    );
    assert_eq!(store.otp().spend_otp_try(&newest, now).await.unwrap(), None);
    assert_eq!(
        open_otp(store, &address, &client, now).await,
        None,
        "a consumed newest record closes the address; older ones do not come back"
    );
    assert_eq!(
        requests(store, &address, &client, window).await,
        1,
        "consumed requests are not counted"
    );

    let last_try = otp_of(client, &address, now + 1, 1);
    store.otp().create_otp(&last_try).await.unwrap();
    assert_eq!(
        store.otp().spend_otp_try(&last_try, now + 1).await.unwrap(),
        Some(0)
    );
    assert_eq!(open_otp(store, &address, &client, now + 1).await, None);
    assert!(
        store.otp().consume_otp(&last_try, now + 1).await.unwrap(),
        "the last try may be the right one"
    );
}

pub async fn otp_requests_of_one_client_neither_count_for_nor_hide_another_clients(
    store: &dyn Store,
) {
    let now = now();
    let address = unique_address().key();
    let (ours, theirs) = (random_client(), random_client());
    let own = otp_of(ours, &address, now - 60, 5);
    store.otp().create_otp(&own).await.expect("create_otp");
    for at in [now - 30, now - 20, now - 10, now - 5, now] {
        store
            .otp()
            .create_otp(&otp_of(theirs, &address, at, 5))
            .await
            .expect("create_otp of another client");
    }

    assert_eq!(
        requests(store, &address, &ours, now - 900).await,
        1,
        "another client's requests do not count against this client's cap"
    );
    assert_eq!(requests(store, &address, &theirs, now - 900).await, 5);
    assert_eq!(
        open_otp(store, &address, &ours, now).await.as_ref(),
        Some(&own),
        "another client's newer requests do not hide this client's own"
    );
    assert_eq!(
        open_otp(store, &address, &theirs, now)
            .await
            .map(|record| record.created_at),
        Some(now),
        "each client finds its own newest"
    );
    assert_eq!(
        open_otp(store, &address, &random_client(), now).await,
        None,
        "a client without a request finds none"
    );
}

pub async fn otp_is_consumed_once_by_10_parallel_requests(store: &dyn Store) {
    let now = now();
    let record = otp(&unique_address().key(), now, 5);
    store.otp().create_otp(&record).await.expect("create_otp");
    let consumptions = (0..10).map(|_| store.otp().consume_otp(&record, now));
    let winners = futures::future::join_all(consumptions)
        .await
        .into_iter()
        .map(|result| result.expect("consume_otp"))
        .filter(|consumed| *consumed)
        .count();
    assert_eq!(winners, 1, "exactly one of 10 parallel consumptions wins");
    assert_eq!(
        open_otp(store, &record.address, &record.client_id, now).await,
        None
    );
}

pub async fn otp_tries_are_spent_atomically_by_12_parallel_requests(store: &dyn Store) {
    let now = now();
    let record = Arc::new(otp(&unique_address().key(), now, 5));
    store.otp().create_otp(&record).await.expect("create_otp");
    let spends = (0..12).map(|_| store.otp().spend_otp_try(&record, now));
    let results = futures::future::join_all(spends).await;
    let mut left: Vec<u32> = results
        .into_iter()
        .filter_map(|result| result.expect("spend_otp_try"))
        .collect();
    left.sort_unstable();
    assert_eq!(
        left,
        [0, 1, 2, 3, 4],
        "exactly five tries, each counted once"
    );
    assert_eq!(
        open_otp(store, &record.address, &record.client_id, now).await,
        None
    );
}

pub async fn users_are_found_by_unique_case_insensitive_email(store: &dyn Store) {
    let now = now();
    let address = unique_address();
    let mut ann = user(now, &unique_login());
    ann.email = Some(address.as_str().to_owned());
    assert_eq!(
        store.principals().insert_user(&ann).await.unwrap(),
        Inserted::Inserted
    );
    let upper = ChannelHandle::parse(&address.as_str().to_uppercase()).unwrap();
    assert_eq!(
        user_with_email(store, &upper).await.as_ref(),
        Some(&ann),
        "found whatever the case"
    );
    assert_eq!(
        store
            .principals()
            .get_user_by_email(&unique_address())
            .await
            .unwrap(),
        None
    );

    let mut bob = user(now, &unique_login());
    bob.email = Some(upper.as_str().to_owned());
    assert_eq!(
        store.principals().insert_user(&bob).await.unwrap(),
        Inserted::AlreadyExists,
        "addresses are unique case-insensitively"
    );
    bob.email = None;
    assert_eq!(
        store.principals().insert_user(&bob).await.unwrap(),
        Inserted::Inserted
    );
    assert_eq!(set_email(store, &bob.id, &upper).await, EmailUpdate::Taken);
    let unknown = crate::domain::PrincipalId::new(OsRandom.uuid());
    assert_eq!(
        set_email(store, &unknown, &upper).await,
        EmailUpdate::UnknownUser
    );

    // Ann moves to a new address: the old one is released and Bob can take it.
    let moved = unique_address();
    assert_eq!(
        set_email(store, &ann.id, &moved).await,
        EmailUpdate::Updated
    );
    assert_eq!(user_with_email(store, &address).await, None);
    let found = user_with_email(store, &moved).await.unwrap();
    assert_eq!(
        (found.id, found.email.as_deref()),
        (ann.id, Some(moved.as_str()))
    );
    assert_eq!(
        set_email(store, &bob.id, &address).await,
        EmailUpdate::Updated
    );
    assert_eq!(
        user_with_email(store, &upper).await.map(|u| u.id),
        Some(bob.id)
    );
    // A status change through put_user keeps the address findable.
    let mut bob = store.principals().get_user(&bob.id).await.unwrap().unwrap();
    bob.status = crate::domain::UserStatus::Disabled;
    store
        .principals()
        .put_user(&bob)
        .await
        .expect("put_user keeps the address");
    assert_eq!(user_with_email(store, &address).await, Some(bob));
}
