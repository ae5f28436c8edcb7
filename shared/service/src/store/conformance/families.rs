//! Families, refresh tokens and access tokens: round trips, expiry, revocation.

use super::records::*;
use crate::domain::{
    AuthToken, ClientId, FamilyId, PrincipalId, TokenId, ACCESS_TOKEN_TTL_SECONDS,
    AUTH_TOKEN_TTL_SECONDS,
};
use crate::random::{OsRandom, RandomExt};
use crate::store::prelude::*;
use crate::store::Rotated;

pub async fn family_refresh_and_access_records_round_trip(store: &dyn Store) {
    let now = now();
    let bundle = Bundle::live(now);
    bundle.create(store).await;

    assert_eq!(
        store
            .get_family(&bundle.family.id, now)
            .await
            .expect("get_family"),
        Some(bundle.family.clone()),
        "a family reads back as created"
    );
    assert_eq!(
        store
            .get_refresh_token(&bundle.refresh.token_hash, now)
            .await
            .expect("get_refresh_token"),
        Some(bundle.refresh.clone()),
        "the first refresh token reads back as created"
    );
    assert_eq!(
        store
            .get_access_token(&bundle.access.jti, now)
            .await
            .expect("get_access_token"),
        Some(bundle.access.clone()),
        "the first access token reads back as created, not revoked"
    );

    assert_eq!(
        store
            .get_family(&FamilyId::new(OsRandom.uuid()), now)
            .await
            .expect("get_family"),
        None,
        "an unknown family is absent"
    );
    assert_eq!(
        store
            .get_refresh_token(&random_hash(), now)
            .await
            .expect("get_refresh_token"),
        None,
        "an unknown refresh token is absent"
    );
    assert_eq!(
        store
            .get_access_token(&TokenId::new(OsRandom.uuid()), now)
            .await
            .expect("get_access_token"),
        None,
        "an unknown access token is absent"
    );
}

pub async fn application_access_token_round_trip(store: &dyn Store) {
    let now = now();
    let record = access_token(
        now,
        ClientId::new(OsRandom.uuid()),
        None,
        now + ACCESS_TOKEN_TTL_SECONDS,
    );
    store
        .put_access_token(&record)
        .await
        .expect("put_access_token");
    assert_eq!(
        store
            .get_access_token(&record.jti, now)
            .await
            .expect("get_access_token"),
        Some(record.clone()),
        "an application access token reads back as written"
    );
    assert_eq!(
        store
            .get_access_token(&record.jti, now + ACCESS_TOKEN_TTL_SECONDS - 1)
            .await
            .expect("get_access_token"),
        Some(record.clone()),
        "an access token is present until its last second"
    );
    assert_eq!(
        store
            .get_access_token(&record.jti, now + ACCESS_TOKEN_TTL_SECONDS)
            .await
            .expect("get_access_token"),
        None,
        "an access token is absent from its expires_at on"
    );
}

/// Items written with `expires_at` already past are still physically stored (DynamoDB deletes
/// late, SQLite never), and must read as absent.
pub async fn expired_items_read_as_absent(store: &dyn Store) {
    let now = now();
    let past = now - 60;

    let access = access_token(now - 7200, ClientId::new(OsRandom.uuid()), None, past);
    store
        .put_access_token(&access)
        .await
        .expect("put_access_token");
    assert_eq!(
        store
            .get_access_token(&access.jti, now)
            .await
            .expect("get_access_token"),
        None,
        "an expired access token is absent"
    );

    let auth = AuthToken {
        token_hash: random_hash(),
        company_id: PrincipalId::new(OsRandom.uuid()),
        client_id: ClientId::new(OsRandom.uuid()),
        issued_by: PrincipalId::new(OsRandom.uuid()),
        issued_at: past - AUTH_TOKEN_TTL_SECONDS,
        expires_at: past,
    };
    store.put_auth_token(&auth).await.expect("put_auth_token");
    assert_eq!(
        store
            .get_auth_token(&auth.token_hash, now)
            .await
            .expect("get_auth_token"),
        None,
        "an expired auth token is absent"
    );

    let expired = Bundle::new(now - 86_400, past);
    expired.create(store).await;
    assert_eq!(
        store
            .get_family(&expired.family.id, now)
            .await
            .expect("get_family"),
        None,
        "an expired family is absent"
    );
    assert_eq!(
        store
            .get_refresh_token(&expired.refresh.token_hash, now)
            .await
            .expect("get_refresh_token"),
        None,
        "an expired refresh token is absent"
    );
    assert_eq!(
        store
            .get_access_token(&expired.access.jti, now)
            .await
            .expect("get_access_token"),
        None,
        "an expired access token of a family is absent"
    );

    let legacy_expired = legacy_token(Some(past));
    let legacy_live = legacy_token(Some(now + 60));
    store
        .put_legacy_tokens(&[legacy_expired.clone(), legacy_live.clone()])
        .await
        .expect("put_legacy_tokens");
    assert_eq!(
        store
            .get_legacy_token(&legacy_expired.token_hash, now)
            .await
            .expect("get_legacy_token"),
        None,
        "an expired legacy token is absent"
    );
    assert_eq!(
        store
            .get_legacy_token(&legacy_live.token_hash, now)
            .await
            .expect("get_legacy_token"),
        Some(legacy_live.clone()),
        "a legacy token expiring later is present"
    );
    assert_eq!(
        store
            .get_legacy_token(&legacy_live.token_hash, now + 60)
            .await
            .expect("get_legacy_token"),
        None,
        "a legacy token is absent from its expires_at on"
    );

    // The same family read at two instants: present before its expiry, absent at it.
    let soon = Bundle::new(now, now + 120);
    soon.create(store).await;
    assert_eq!(
        store
            .get_family(&soon.family.id, now + 119)
            .await
            .expect("get_family"),
        Some(soon.family.clone()),
        "a family expiring later is present"
    );
    assert_eq!(
        store
            .get_refresh_token(&soon.refresh.token_hash, now + 119)
            .await
            .expect("get_refresh_token"),
        Some(soon.refresh.clone()),
        "a refresh token expiring later is present"
    );
    assert_eq!(
        store
            .get_family(&soon.family.id, now + 120)
            .await
            .expect("get_family"),
        None,
        "a family is absent from its expires_at on"
    );
    assert_eq!(
        store
            .get_refresh_token(&soon.refresh.token_hash, now + 120)
            .await
            .expect("get_refresh_token"),
        None,
        "a refresh token is absent from its expires_at on"
    );
}

pub async fn revoke_family_revokes_its_tokens(store: &dyn Store) {
    let now = now();
    let bundle = Bundle::live(now);
    bundle.create(store).await;
    let (successor, rotated_access) = bundle.successor(now, 1);
    assert_eq!(
        store
            .rotate_refresh_token(rotation(
                bundle.family.id,
                &bundle.refresh.token_hash,
                &successor,
                &rotated_access,
                now,
            ))
            .await
            .expect("rotate_refresh_token"),
        Rotated::Rotated
    );
    // A bystander family and an application token must be untouched by the revocation.
    let bystander = Bundle::live(now);
    bystander.create(store).await;
    let application = access_token(
        now,
        ClientId::new(OsRandom.uuid()),
        None,
        now + ACCESS_TOKEN_TTL_SECONDS,
    );
    store
        .put_access_token(&application)
        .await
        .expect("put_access_token");

    let revoked_at = now + 5;
    assert!(
        store
            .revoke_family(&bundle.family.id, revoked_at)
            .await
            .expect("revoke_family"),
        "revoking an existing family returns true"
    );
    let family = store
        .get_family(&bundle.family.id, revoked_at)
        .await
        .expect("get_family")
        .expect("a revoked family is still returned");
    assert_eq!(
        family.revoked_at,
        Some(revoked_at),
        "the family records when it was revoked"
    );
    assert!(!family.is_live(revoked_at));

    let (next, next_access) = bundle.successor(revoked_at, 2);
    assert_eq!(
        store
            .rotate_refresh_token(rotation(
                bundle.family.id,
                &successor.token_hash,
                &next,
                &next_access,
                revoked_at,
            ))
            .await
            .expect("rotate_refresh_token"),
        Rotated::NotCurrent,
        "the current token of a revoked family no longer rotates"
    );
    assert_eq!(
        store
            .get_refresh_token(&next.token_hash, revoked_at)
            .await
            .expect("get_refresh_token"),
        None,
        "a refused rotation writes no successor"
    );
    assert!(
        store
            .get_refresh_token(&successor.token_hash, revoked_at)
            .await
            .expect("get_refresh_token")
            .is_some(),
        "the refresh tokens of a revoked family stay readable (reuse detection)"
    );

    for (jti, what) in [
        (&bundle.access.jti, "the family's first access token"),
        (&rotated_access.jti, "an access token minted by rotation"),
    ] {
        let record = store
            .get_access_token(jti, revoked_at)
            .await
            .expect("get_access_token")
            .unwrap_or_else(|| panic!("{what} is still present after revocation"));
        assert!(record.revoked, "{what} reads as revoked");
    }
    let untouched = store
        .get_access_token(&bystander.access.jti, revoked_at)
        .await
        .expect("get_access_token")
        .expect("bystander access token present");
    assert!(
        !untouched.revoked,
        "revoking one family does not revoke another's access tokens"
    );
    assert_eq!(
        store
            .get_access_token(&application.jti, revoked_at)
            .await
            .expect("get_access_token"),
        Some(application),
        "revoking a family does not touch application tokens"
    );
    assert_eq!(
        store
            .get_family(&bystander.family.id, revoked_at)
            .await
            .expect("get_family")
            .and_then(|f| f.revoked_at),
        None,
        "revoking one family does not revoke another"
    );

    assert!(
        store
            .revoke_family(&bundle.family.id, revoked_at + 60)
            .await
            .expect("revoke_family again"),
        "revoking a revoked family again returns true"
    );
    assert_eq!(
        store
            .get_family(&bundle.family.id, revoked_at + 60)
            .await
            .expect("get_family")
            .and_then(|f| f.revoked_at),
        Some(revoked_at),
        "revoking again keeps the first revocation time"
    );
    assert!(
        !store
            .revoke_family(&FamilyId::new(OsRandom.uuid()), now)
            .await
            .expect("revoke_family of an unknown id"),
        "revoking an unknown family returns false"
    );
    assert_eq!(
        store
            .get_family(&FamilyId::new(OsRandom.uuid()), now)
            .await
            .expect("get_family"),
        None,
        "revoking an unknown family creates nothing"
    );
}
