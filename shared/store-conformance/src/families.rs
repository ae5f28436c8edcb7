//! Families, refresh tokens and access tokens: round trips, expiry, revocation.

use super::fixtures::*;
use super::records::*;
use crate::domain::{
    ClientId, FamilyId, TokenId, ACCESS_TOKEN_TTL_SECONDS, AUTH_TOKEN_TTL_SECONDS,
};
use crate::random::{OsRandom, RandomExt};
use crate::store::prelude::*;
use crate::store::{NewFamily, Renewal};
use crate::writes::{
    create_family, renew_refresh_token, rotate_refresh_token, FamilyCreated, FamilyStart, Renewed,
    Rotated,
};

pub async fn family_refresh_and_access_records_round_trip(store: &dyn Store) {
    let now = now();
    let bundle = stored_bundle(store, now).await;
    assert_bundle_present(
        store,
        &bundle,
        now,
        "a family created with its first tokens",
    )
    .await;

    assert_eq!(
        read_family(store, &FamilyId::new(OsRandom.uuid()), now).await,
        None,
        "an unknown family is absent"
    );
    assert_eq!(
        read_refresh_token(store, &random_hash(), now).await,
        None,
        "an unknown refresh token is absent"
    );
    assert_eq!(
        read_access_token(store, &TokenId::new(OsRandom.uuid()), now).await,
        None,
        "an unknown access token is absent"
    );
}

pub async fn application_access_token_round_trip(store: &dyn Store) {
    let now = now();
    let record = stored_application_token(store, now).await;
    for (at, expected, what) in [
        (
            now,
            Some(&record),
            "an application access token reads back as written",
        ),
        (
            now + ACCESS_TOKEN_TTL_SECONDS - 1,
            Some(&record),
            "an access token is present until its last second",
        ),
        (
            now + ACCESS_TOKEN_TTL_SECONDS,
            None,
            "an access token is absent from its expires_at on",
        ),
    ] {
        assert_eq!(
            read_access_token(store, &record.jti, at).await.as_ref(),
            expected,
            "{what}"
        );
    }
}

/// Items written with `expires_at` already past are still physically stored (DynamoDB deletes
/// late, SQLite never), and must read as absent.
pub async fn expired_items_read_as_absent(store: &dyn Store) {
    let now = now();
    let past = now - 60;

    let access = access_token(now - 7200, ClientId::new(OsRandom.uuid()), None, past);
    store
        .families()
        .put_access_token(&access)
        .await
        .expect("put_access_token");
    assert_eq!(
        read_access_token(store, &access.jti, now).await,
        None,
        "an expired access token is absent"
    );

    let auth = auth_token(past - AUTH_TOKEN_TTL_SECONDS, past);
    store
        .auth_tokens()
        .put_auth_token(&auth)
        .await
        .expect("put_auth_token");
    assert_eq!(
        store
            .auth_tokens()
            .get_auth_token(&auth.token_hash, now)
            .await
            .expect("get_auth_token"),
        None,
        "an expired auth token is absent"
    );

    let expired = Bundle::new(now - 86_400, past);
    expired.create(store).await;
    assert_bundle_absent(store, &expired, now, "an expired family").await;

    let legacy_expired = legacy_token(Some(past));
    let legacy_live = legacy_token(Some(now + 60));
    store
        .legacy()
        .put_legacy_tokens(&[legacy_expired.clone(), legacy_live.clone()])
        .await
        .expect("put_legacy_tokens");
    for (token, at, expected, what) in [
        (
            &legacy_expired,
            now,
            None,
            "an expired legacy token is absent",
        ),
        (
            &legacy_live,
            now,
            Some(&legacy_live),
            "a legacy token expiring later is present",
        ),
        (
            &legacy_live,
            now + 60,
            None,
            "a legacy token is absent from its expires_at on",
        ),
    ] {
        assert_eq!(
            read_legacy_token(store, &token.token_hash, at)
                .await
                .as_ref(),
            expected,
            "{what}"
        );
    }

    // The same family read at two instants: present before its expiry, absent at it.
    let soon = Bundle::new(now, now + 120);
    soon.create(store).await;
    assert_bundle_present(store, &soon, now + 119, "a family before its expires_at").await;
    assert_bundle_absent(store, &soon, now + 120, "a family from its expires_at on").await;
}

pub async fn revoke_family_revokes_its_tokens(store: &dyn Store) {
    let now = now();
    let bundle = stored_bundle(store, now).await;
    let (successor, rotated_access) = assert_first_rotation(store, &bundle, now).await;
    // A bystander family and an application token must be untouched by the revocation.
    let bystander = stored_bundle(store, now).await;
    let application = stored_application_token(store, now).await;

    let revoked_at = now + 5;
    assert!(
        store
            .families()
            .revoke_family(&bundle.family.id, revoked_at)
            .await
            .expect("revoke_family"),
        "revoking an existing family returns true"
    );
    let family = present_family(
        store,
        &bundle.family.id,
        revoked_at,
        "a revoked family is still returned",
    )
    .await;
    assert_eq!(
        family.revoked_at,
        Some(revoked_at),
        "the family records when it was revoked"
    );
    assert!(!family.is_live(revoked_at));

    assert_rotation_refused(
        store,
        &bundle,
        &successor.token_hash,
        bundle.successor(revoked_at, 2),
        "the current token of a revoked family",
    )
    .await;
    assert!(
        read_refresh_token(store, &bundle.refresh.token_hash, revoked_at)
            .await
            .is_some(),
        "the recorded refresh tokens of a revoked family stay readable (reuse detection)"
    );

    for (jti, what) in [
        (&bundle.access.jti, "the family's first access token"),
        (&rotated_access.jti, "an access token minted by rotation"),
    ] {
        let record = read_access_token(store, jti, revoked_at)
            .await
            .unwrap_or_else(|| panic!("{what} is still present after revocation"));
        assert!(record.revoked, "{what} reads as revoked");
    }
    let untouched = read_access_token(store, &bystander.access.jti, revoked_at)
        .await
        .expect("bystander access token present");
    assert!(
        !untouched.revoked,
        "revoking one family does not revoke another's access tokens"
    );
    assert_eq!(
        read_access_token(store, &application.jti, revoked_at).await,
        Some(application),
        "revoking a family does not touch application tokens"
    );
    assert_eq!(
        read_family(store, &bystander.family.id, revoked_at)
            .await
            .and_then(|f| f.revoked_at),
        None,
        "revoking one family does not revoke another"
    );

    assert!(
        store
            .families()
            .revoke_family(&bundle.family.id, revoked_at + 60)
            .await
            .expect("revoke_family again"),
        "revoking a revoked family again returns true"
    );
    assert_eq!(
        read_family(store, &bundle.family.id, revoked_at + 60)
            .await
            .and_then(|f| f.revoked_at),
        Some(revoked_at),
        "revoking again keeps the first revocation time"
    );
    let unknown = FamilyId::new(OsRandom.uuid());
    assert!(
        !store
            .families()
            .revoke_family(&unknown, now)
            .await
            .expect("revoke_family of an unknown id"),
        "revoking an unknown family returns false"
    );
    assert_eq!(
        read_family(store, &unknown, now).await,
        None,
        "revoking an unknown family creates nothing"
    );
}

/// A family whose first token names its family is started without that token's record: nothing
/// is stored under the token's digest, and the family alone carries it (its current token and
/// expiry) through a renewal, a rotation and a revocation, as its lookup reads it.
pub async fn a_family_started_with_a_named_token_has_no_token_record(store: &dyn Store) {
    let now = now();
    let bundle = Bundle::live(now);
    let start = FamilyStart {
        new: NewFamily {
            refresh_token: None,
            ..bundle.new_family().new
        },
        ..bundle.new_family()
    };
    assert_eq!(create_family(store, start).await, FamilyCreated::Created);
    let first = &bundle.refresh.token_hash;
    assert_eq!(
        read_family(store, &bundle.family.id, now).await,
        Some(bundle.family.clone()),
        "the family reads back as written"
    );
    assert_eq!(
        read_refresh_token(store, first, now).await,
        None,
        "no record under the first token's digest"
    );
    assert_eq!(
        read_access_token(store, &bundle.access.jti, now).await,
        Some(bundle.access.clone()),
        "its first access token is written"
    );

    let later = now + 60;
    let renewal = Renewal {
        family_id: bundle.family.id,
        presented: first.clone(),
        expires_at: bundle.family.expires_at + 60,
        access_token: bundle.successor(later, 0).1,
        now: later,
        renews_record: false,
    };
    assert_eq!(
        renew_refresh_token(store, renewal, Vec::new()).await,
        Renewed::Renewed,
        "a sliding renewal of the first token renews its family"
    );
    let family = present_family(store, &bundle.family.id, later, "renewed").await;
    assert_eq!(
        (&family.current_token, family.expires_at),
        (first, bundle.family.expires_at + 60)
    );

    let (successor, access) = bundle.successor(later + 60, 1);
    assert_eq!(
        rotate_refresh_token(
            store,
            rotation(bundle.family.id, first, &successor, &access, later + 60),
            Vec::new(),
        )
        .await,
        Rotated::Rotated,
        "the first token rotates on its family's state alone"
    );
    assert_eq!(
        present_family(store, &bundle.family.id, later + 60, "rotated")
            .await
            .current_token,
        successor.token_hash
    );
    assert_eq!(
        read_refresh_token(store, first, later + 60).await,
        None,
        "a rotation writes no record for the token it rotated either"
    );
    assert!(store
        .families()
        .revoke_family(&bundle.family.id, later + 90)
        .await
        .expect("revoke_family"));
    assert!(
        present_family(store, &bundle.family.id, later + 90, "revoked")
            .await
            .revoked_at
            .is_some(),
        "revoked through its family"
    );
}
