//! The `sliding` policy's write: the same refresh token, its expiry renewed on the token and the
//! family, the access token recorded, all at once; nothing written when the token is not current.

use super::records::*;
use crate::domain::{AccessTokenRecord, RefreshTokenRecord};
use crate::secrets::TokenHash;
use crate::store::prelude::*;
use crate::store::{Renewal, Renewed, Rotated};

fn renewal<'a>(
    bundle: &Bundle,
    presented: &'a TokenHash,
    access_token: &'a AccessTokenRecord,
    expires_at: i64,
    now: i64,
) -> Renewal<'a> {
    Renewal {
        family_id: bundle.family.id,
        presented,
        expires_at,
        access_token,
        now,
    }
}

pub async fn renewal_keeps_the_token_and_slides_its_expiry(store: &dyn Store) {
    let now = now();
    let bundle = Bundle::live(now);
    bundle.create(store).await;

    let later = now + 3600;
    let (_, access) = bundle.successor(later, 0);
    let renewed_until = bundle.family.expires_at + 3600;
    assert_eq!(
        store
            .renew_refresh_token(renewal(
                &bundle,
                &bundle.refresh.token_hash,
                &access,
                renewed_until,
                later
            ))
            .await
            .expect("renew_refresh_token"),
        Renewed::Renewed,
        "renewing the current token works"
    );
    let family = store
        .get_family(&bundle.family.id, later)
        .await
        .expect("get_family")
        .expect("family present");
    assert_eq!(
        family.current_token, bundle.refresh.token_hash,
        "the token stays"
    );
    assert_eq!(family.generation, 0, "renewal is not a rotation");
    assert_eq!(
        family.expires_at, renewed_until,
        "the family's expiry slides"
    );
    let token = store
        .get_refresh_token(&bundle.refresh.token_hash, later)
        .await
        .expect("get_refresh_token")
        .expect("token present");
    assert_eq!(
        token,
        RefreshTokenRecord {
            expires_at: renewed_until,
            ..bundle.refresh.clone()
        },
        "the token's expiry slides and nothing else changes"
    );
    assert_eq!(
        store
            .get_access_token(&access.jti, later)
            .await
            .expect("get_access_token"),
        Some(access),
        "the access token minted with the renewal reads back"
    );
}

pub async fn renewal_of_a_non_current_token_or_revoked_family_writes_nothing(store: &dyn Store) {
    let now = now();
    let bundle = Bundle::live(now);
    bundle.create(store).await;
    let (successor, rotation_access) = bundle.successor(now + 1, 1);
    assert_eq!(
        store
            .rotate_refresh_token(rotation(
                bundle.family.id,
                &bundle.refresh.token_hash,
                &successor,
                &rotation_access,
                now + 1,
            ))
            .await
            .expect("rotate_refresh_token"),
        Rotated::Rotated
    );

    let (_, refused_access) = bundle.successor(now + 2, 0);
    assert_eq!(
        store
            .renew_refresh_token(renewal(
                &bundle,
                &bundle.refresh.token_hash,
                &refused_access,
                bundle.family.expires_at + 99,
                now + 2
            ))
            .await
            .expect("renew_refresh_token"),
        Renewed::NotCurrent,
        "a rotated token is not renewed"
    );

    store
        .revoke_family(&bundle.family.id, now + 3)
        .await
        .expect("revoke_family");
    assert_eq!(
        store
            .renew_refresh_token(renewal(
                &bundle,
                &successor.token_hash,
                &refused_access,
                bundle.family.expires_at + 99,
                now + 3
            ))
            .await
            .expect("renew_refresh_token"),
        Renewed::NotCurrent,
        "a revoked family's token is not renewed"
    );

    let family = store
        .get_family(&bundle.family.id, now + 3)
        .await
        .expect("get_family")
        .expect("family present");
    assert_eq!(
        family.expires_at, successor.expires_at,
        "refused renewals leave the family's expiry"
    );
    assert_eq!(
        store
            .get_refresh_token(&successor.token_hash, now + 3)
            .await
            .expect("get_refresh_token")
            .map(|t| t.expires_at),
        Some(successor.expires_at),
        "refused renewals leave the token's expiry"
    );
    assert_eq!(
        store
            .get_access_token(&refused_access.jti, now + 3)
            .await
            .expect("get_access_token"),
        None,
        "a refused renewal records no access token"
    );
}
