//! A refresh token read with its family's origin, in the one read the refresh grant's common
//! path makes: the same record `get_refresh_token` reads, the origin the family was created
//! with, whoever wrote the token and whatever has happened to the family since.

use super::fixtures::present_family;
use super::records::*;
use crate::clock::UnixTime;
use crate::domain::{Family, RefreshTokenRecord};
use crate::secrets::TokenHash;
use crate::store::prelude::*;
use crate::store::{FamilyOrigin, RefreshTokenWithOrigin, Renewal};
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

/// A rotation writes no record for its successor, which names its family: the family keeps
/// what the successor's record held (its digest, generation, expiry and binding), when it was
/// rotated and by which access token, and from which generation it is bound.
pub async fn a_rotation_is_kept_by_its_family(store: &dyn Store) {
    let now = now();
    let bundle = Bundle::live(now);
    bundle.create(store).await;

    // Unbound first: nothing is bound yet.
    let (second, access) = bundle.successor(now + 10, 1);
    let second = RefreshTokenRecord {
        jkt: None,
        ..second
    };
    let rotated = rotate_refresh_token(
        store,
        rotation(
            bundle.family.id,
            &bundle.refresh.token_hash,
            &second,
            &access,
            now + 10,
        ),
        Vec::new(),
    )
    .await;
    assert_eq!(rotated, Rotated::Rotated);
    let family = present_family(store, &bundle.family.id, now + 10, "family present").await;
    assert_eq!(
        (
            &family.current_token,
            family.generation,
            family.expires_at,
            family.rotated_at,
            family.rotated_by,
            &family.current_jkt,
            family.bound_from,
        ),
        (
            &second.token_hash,
            1,
            second.expires_at,
            Some(now + 10),
            Some(access.jti),
            &None,
            None,
        ),
        "the family holds its successor and its rotation"
    );
    assert_eq!(
        store
            .families()
            .get_refresh_token(&second.token_hash, now + 10)
            .await
            .expect("get_refresh_token"),
        None,
        "the successor has no record of its own"
    );

    // Bound from the next generation on, and that generation is kept.
    for generation in [2, 3] {
        let at = now + 10 * i64::from(generation);
        let (next, access) = bundle.successor(at, generation);
        let presented = present_family(store, &bundle.family.id, now, "family present")
            .await
            .current_token;
        let rotated = rotate_refresh_token(
            store,
            rotation(bundle.family.id, &presented, &next, &access, at),
            Vec::new(),
        )
        .await;
        assert_eq!(rotated, Rotated::Rotated);
        let family = present_family(store, &bundle.family.id, at, "family present").await;
        assert_eq!(
            (
                family.current_jkt.as_deref(),
                family.bound_from,
                family.rotated_at,
                family.rotated_by
            ),
            (next.jkt.as_deref(), Some(2), Some(at), Some(access.jti)),
            "generation {generation}: bound from the first bound successor"
        );
    }

    // Renewal moves the family's expiry, and nothing else.
    let family = present_family(store, &bundle.family.id, now + 30, "family present").await;
    let (_, access) = bundle.successor(now + 40, 4);
    let expires_at = now + 360 * 86_400;
    let renewed = renew_refresh_token(
        store,
        Renewal {
            family_id: bundle.family.id,
            presented: family.current_token.clone(),
            expires_at,
            access_token: access.clone(),
            now: now + 40,
            renews_record: false,
        },
        Vec::new(),
    )
    .await;
    assert_eq!(renewed, Renewed::Renewed);
    let renewed = present_family(store, &bundle.family.id, now + 40, "family present").await;
    assert_eq!(
        renewed,
        Family {
            expires_at,
            ..family
        },
        "renewal changes the family's expiry only"
    );
}
