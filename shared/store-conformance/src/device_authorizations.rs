//! Device authorizations (RFC 8628): found by either code's digest until their TTL, decided
//! once, polls recorded only from the poll read, redeemed once by their client.

use super::records::*;
use crate::domain::AuthMethod;
use crate::domain::{
    ClientId, DeviceAuthorization, DeviceDecision, DeviceStatus, PrincipalId, UserCode,
    DEVICE_CODE_TTL_SECONDS, DEVICE_POLL_INTERVAL_SECONDS,
};
use crate::random::{OsRandom, RandomExt};
use crate::store::prelude::*;

fn record(now: i64) -> DeviceAuthorization {
    DeviceAuthorization {
        device_code_hash: random_hash(),
        user_code_hash: UserCode::generate(&OsRandom).hash(),
        client_id: ClientId::new(OsRandom.uuid()),
        scopes: scopes("openid read"),
        issued_at: now,
        expires_at: DeviceAuthorization::retained_until(now),
        interval: DEVICE_POLL_INTERVAL_SECONDS,
        last_polled_at: None,
        status: DeviceStatus::Pending,
        user_id: None,
        auth_time: None,
        sid: None,
        amr: Vec::new(),
        resources: resources(&["https://api.example.com/mcp"]),
    }
}

async fn stored(store: &dyn Store, now: i64) -> DeviceAuthorization {
    let record = record(now);
    assert!(
        store
            .device_authorizations()
            .put_device_authorization(&record)
            .await
            .expect("put_device_authorization"),
        "a fresh authorization is stored"
    );
    record
}

async fn read(store: &dyn Store, record: &DeviceAuthorization, now: i64) -> DeviceAuthorization {
    store
        .device_authorizations()
        .get_device_authorization(&record.device_code_hash, now)
        .await
        .expect("get")
        .expect("stored")
}

pub async fn device_authorization_reads_by_either_code_and_is_decided_once(store: &dyn Store) {
    let now = now();
    let record = stored(store, now).await;
    let devices = store.device_authorizations();
    assert_eq!(read(store, &record, now).await, record, "reads back whole");
    assert_eq!(
        devices
            .find_device_authorization(&record.user_code_hash, now)
            .await
            .expect("find"),
        Some(record.clone()),
        "found by its user code"
    );
    let mut twin = self::record(now);
    twin.user_code_hash = record.user_code_hash.clone();
    assert!(
        !devices.put_device_authorization(&twin).await.expect("put"),
        "a live user code is not given twice"
    );
    assert_eq!(
        devices
            .get_device_authorization(&twin.device_code_hash, now)
            .await
            .expect("get"),
        None,
        "nothing of the refused pair was written"
    );

    let user = PrincipalId::new(OsRandom.uuid());
    let approve = DeviceDecision::Approved {
        user_id: user,
        auth_time: now - 3,
        sid: None,
        amr: AuthMethod::PASSWORD_AND_CODE.to_vec(),
    };
    let valid_after = now - DEVICE_CODE_TTL_SECONDS;
    assert!(devices
        .decide_device_authorization(&record.device_code_hash, &approve, valid_after)
        .await
        .expect("decide"));
    assert!(
        !devices
            .decide_device_authorization(
                &record.device_code_hash,
                &DeviceDecision::Denied,
                valid_after
            )
            .await
            .expect("decide"),
        "a decided authorization is not decided again"
    );
    let approved = read(store, &record, now).await;
    assert_eq!(approved.status, DeviceStatus::Approved);
    assert_eq!(approved.user_id, Some(user));
    assert_eq!(approved.auth_time, Some(now - 3));
    assert_eq!(approved.amr, AuthMethod::PASSWORD_AND_CODE);

    let expired = stored(store, now - DEVICE_CODE_TTL_SECONDS).await;
    assert!(
        !devices
            .decide_device_authorization(&expired.device_code_hash, &approve, valid_after)
            .await
            .expect("decide"),
        "an expired code cannot be approved"
    );
    assert_eq!(
        read(store, &expired, now).await.status,
        DeviceStatus::Pending,
        "but it is still read, for the poll to answer expired_token"
    );
}

pub async fn device_polls_are_recorded_only_from_the_poll_read(store: &dyn Store) {
    let now = now();
    let record = stored(store, now).await;
    let devices = store.device_authorizations();
    let hash = &record.device_code_hash;
    assert!(devices
        .record_device_poll(hash, None, now, 5)
        .await
        .expect("poll"));
    assert!(
        !devices
            .record_device_poll(hash, None, now + 1, 10)
            .await
            .expect("poll"),
        "a poll that read before the first one was recorded loses"
    );
    assert!(devices
        .record_device_poll(hash, Some(now), now + 2, 10)
        .await
        .expect("poll"));
    let polled = read(store, &record, now + 2).await;
    assert_eq!(
        (polled.last_polled_at, polled.interval),
        (Some(now + 2), 10)
    );
}

pub async fn device_authorization_is_redeemed_once_by_its_client(store: &dyn Store) {
    let now = now();
    let record = stored(store, now).await;
    let devices = store.device_authorizations();
    let hash = &record.device_code_hash;
    let valid_after = now - DEVICE_CODE_TTL_SECONDS;
    assert!(
        !devices
            .redeem_device_authorization(hash, &record.client_id, valid_after)
            .await
            .expect("redeem"),
        "a pending authorization is not redeemed"
    );
    let approve = DeviceDecision::Approved {
        user_id: PrincipalId::new(OsRandom.uuid()),
        auth_time: now,
        sid: None,
        amr: AuthMethod::PASSWORD.to_vec(),
    };
    assert!(devices
        .decide_device_authorization(hash, &approve, valid_after)
        .await
        .expect("decide"));
    assert!(
        !devices
            .redeem_device_authorization(hash, &ClientId::new(OsRandom.uuid()), valid_after)
            .await
            .expect("redeem"),
        "another client cannot redeem it"
    );
    let attempts =
        (0..10).map(|_| devices.redeem_device_authorization(hash, &record.client_id, valid_after));
    let winners = futures::future::join_all(attempts)
        .await
        .into_iter()
        .map(|outcome| outcome.expect("redeem"))
        .filter(|won| *won)
        .count();
    assert_eq!(winners, 1, "exactly one of 10 concurrent redemptions wins");
    assert_eq!(
        read(store, &record, now).await.status,
        DeviceStatus::Redeemed
    );

    let late = stored(store, now - DEVICE_CODE_TTL_SECONDS - 10).await;
    assert_eq!(
        devices
            .get_device_authorization(&late.device_code_hash, late.expires_at)
            .await
            .expect("get"),
        None,
        "past its TTL a record reads as absent"
    );
}
