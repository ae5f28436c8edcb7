//! A refresh token read with its family's origin, in the one read the refresh grant's common
//! path makes: the same record `get_refresh_token` reads, the origin the family was created
//! with, whoever wrote the token and whatever has happened to the family since.

use super::fixtures::present_family;
use super::records::*;
use crate::clock::UnixTime;
use crate::domain::RefreshTokenRecord;
use crate::secrets::TokenHash;
use crate::store::prelude::*;
use crate::store::{FamilyOrigin, RefreshTokenWithOrigin, Renewal, Rotation};
use crate::writes::{renew_refresh_token, rotate_refresh_token, Renewed, Rotated};

/// Reads `hash` both ways and checks that they agree and that the origin is `bundle`'s.
async fn assert_reads_with_origin(
    store: &dyn Store,
    bundle: &Bundle,
    hash: &TokenHash,
    now: UnixTime,
    what: &str,
) -> RefreshTokenRecord {
    let read = store
        .families()
        .get_refresh_token_with_origin(hash, now)
        .await
        .expect("get_refresh_token_with_origin")
        .unwrap_or_else(|| panic!("{what}: the token reads with its origin"));
    let record = store
        .families()
        .get_refresh_token(hash, now)
        .await
        .expect("get_refresh_token")
        .unwrap_or_else(|| panic!("{what}: the token reads alone"));
    assert_eq!(
        read,
        RefreshTokenWithOrigin {
            record: record.clone(),
            origin: FamilyOrigin::from(&bundle.family),
        },
        "{what}: the same record as get_refresh_token, and the family's origin"
    );
    record
}

pub async fn refresh_token_reads_with_its_family_origin(store: &dyn Store) {
    let now = now();
    let bundle = Bundle::new(now, now + 120);
    bundle.create(store).await;

    let first = assert_reads_with_origin(
        store,
        &bundle,
        &bundle.refresh.token_hash,
        now,
        "a family's first token",
    )
    .await;
    assert_eq!(
        first, bundle.refresh,
        "the first token reads back as written"
    );
    assert_eq!(
        store
            .families()
            .get_refresh_token_with_origin(&random_hash(), now)
            .await
            .expect("get_refresh_token_with_origin"),
        None,
        "an unknown token is absent"
    );
    assert_eq!(
        store
            .families()
            .get_refresh_token_with_origin(&bundle.refresh.token_hash, now + 120)
            .await
            .expect("get_refresh_token_with_origin"),
        None,
        "a token is absent from its expiry on"
    );

    // The family's state is the write's to check, not this read's.
    assert!(store
        .families()
        .revoke_family(&bundle.family.id, now + 1)
        .await
        .expect("revoke_family"));
    assert_reads_with_origin(
        store,
        &bundle,
        &bundle.refresh.token_hash,
        now + 1,
        "a token of a revoked family",
    )
    .await;
}

pub async fn rotated_and_renewed_tokens_keep_their_family_origin(store: &dyn Store) {
    let now = now();
    let bundle = Bundle::live(now);
    bundle.create(store).await;
    let origin = FamilyOrigin::from(&bundle.family);

    // A successor the rotation gave the origin to.
    let (second, access) = bundle.successor(now + 10, 1);
    let rotated = rotate_refresh_token(
        store,
        Rotation {
            origin: Some(origin.clone()),
            ..rotation(
                bundle.family.id,
                &bundle.refresh.token_hash,
                &second,
                &access,
                now + 10,
            )
        },
        Vec::new(),
    )
    .await;
    assert_eq!(rotated, Rotated::Rotated);
    let old = assert_reads_with_origin(
        store,
        &bundle,
        &bundle.refresh.token_hash,
        now + 10,
        "a rotated token",
    )
    .await;
    let family = present_family(store, &bundle.family.id, now + 10, "family present").await;
    assert_eq!(
        old.rotated_at.or(family.rotated_at),
        Some(now + 10),
        "read as rotated"
    );
    let read = assert_reads_with_origin(
        store,
        &bundle,
        &second.token_hash,
        now + 10,
        "a successor written with the origin",
    )
    .await;
    assert_eq!(read, second, "the successor reads back as written");

    // A successor written as before tokens carried the origin: still read with it.
    let (third, access) = bundle.successor(now + 20, 2);
    let rotated = rotate_refresh_token(
        store,
        rotation(
            bundle.family.id,
            &second.token_hash,
            &third,
            &access,
            now + 20,
        ),
        Vec::new(),
    )
    .await;
    assert_eq!(rotated, Rotated::Rotated);
    assert_reads_with_origin(
        store,
        &bundle,
        &third.token_hash,
        now + 20,
        "a successor written without the origin",
    )
    .await;

    // Renewal moves the expiry the read reports, and nothing else.
    let (_, access) = bundle.successor(now + 30, 3);
    let expires_at = now + 360 * 86_400;
    let renewed = renew_refresh_token(
        store,
        Renewal {
            family_id: bundle.family.id,
            presented: third.token_hash.clone(),
            expires_at,
            access_token: access.clone(),
            now: now + 30,
        },
        Vec::new(),
    )
    .await;
    assert_eq!(renewed, Renewed::Renewed);
    let read = assert_reads_with_origin(
        store,
        &bundle,
        &third.token_hash,
        now + 30,
        "a renewed token",
    )
    .await;
    assert_eq!(
        read,
        RefreshTokenRecord {
            expires_at,
            ..third
        },
        "renewal changes the token's expiry only"
    );
}
