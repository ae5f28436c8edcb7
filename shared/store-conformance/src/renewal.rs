//! The `sliding` policy's write: the same refresh token, its expiry renewed on the token and the
//! family, the access token recorded, all at once; nothing written when the token is not current.

use super::fixtures::*;
use super::records::*;
use crate::domain::{AccessTokenRecord, RefreshTokenRecord};
use crate::secrets::TokenHash;
use crate::store::prelude::*;
use crate::store::Renewal;
use crate::writes::{renew_refresh_token, Renewed};

/// Renews `presented` in the bundle's family until `expires_at`, recording `access_token`.
async fn renew(
    store: &dyn Store,
    bundle: &Bundle,
    presented: &TokenHash,
    access_token: &AccessTokenRecord,
    expires_at: i64,
    now: i64,
) -> Renewed {
    let renewal = Renewal {
        family_id: bundle.family.id,
        presented: presented.clone(),
        expires_at,
        access_token: access_token.clone(),
        now,
        // The family's first token has a record; a successor names its family and has none.
        renews_record: presented == &bundle.refresh.token_hash,
    };
    renew_refresh_token(store, renewal, Vec::new()).await
}

pub async fn renewal_keeps_the_token_and_slides_its_expiry(store: &dyn Store) {
    let now = now();
    let bundle = stored_bundle(store, now).await;

    let later = now + 3600;
    let (_, access) = bundle.successor(later, 0);
    let renewed_until = bundle.family.expires_at + 3600;
    assert_eq!(
        renew(
            store,
            &bundle,
            &bundle.refresh.token_hash,
            &access,
            renewed_until,
            later
        )
        .await,
        Renewed::Renewed,
        "renewing the current token works"
    );
    let family = present_family(store, &bundle.family.id, later, "family present").await;
    assert_eq!(
        family.current_token, bundle.refresh.token_hash,
        "the token stays"
    );
    assert_eq!(family.generation, 0, "renewal is not a rotation");
    assert_eq!(
        family.expires_at, renewed_until,
        "the family's expiry slides"
    );
    assert_eq!(
        read_refresh_token(store, &bundle.refresh.token_hash, later).await,
        Some(RefreshTokenRecord {
            expires_at: renewed_until,
            ..bundle.refresh.clone()
        }),
        "the token's expiry slides and nothing else changes"
    );
    assert_eq!(
        read_access_token(store, &access.jti, later).await,
        Some(access),
        "the access token minted with the renewal reads back"
    );
}

pub async fn renewal_of_a_non_current_token_or_revoked_family_writes_nothing(store: &dyn Store) {
    let now = now();
    let bundle = stored_bundle(store, now).await;
    let (successor, _) = assert_first_rotation(store, &bundle, now + 1).await;

    let (_, refused_access) = bundle.successor(now + 2, 0);
    let later_expiry = bundle.family.expires_at + 99;
    assert_eq!(
        renew(
            store,
            &bundle,
            &bundle.refresh.token_hash,
            &refused_access,
            later_expiry,
            now + 2
        )
        .await,
        Renewed::NotCurrent,
        "a rotated token is not renewed"
    );

    store
        .families()
        .revoke_family(&bundle.family.id, now + 3)
        .await
        .expect("revoke_family");
    assert_eq!(
        renew(
            store,
            &bundle,
            &successor.token_hash,
            &refused_access,
            later_expiry,
            now + 3
        )
        .await,
        Renewed::NotCurrent,
        "a revoked family's token is not renewed"
    );

    let family = present_family(store, &bundle.family.id, now + 3, "family present").await;
    assert_eq!(
        family.expires_at, successor.expires_at,
        "refused renewals leave the family's expiry"
    );
    assert_eq!(
        read_access_token(store, &refused_access.jti, now + 3).await,
        None,
        "a refused renewal records no access token"
    );
}
