//! Revoking one access token, and every family of one (principal, client) connection.

use super::records::{access_token, now, Bundle};
use super::Store;
use crate::domain::{ClientId, PrincipalId, ACCESS_TOKEN_TTL_SECONDS};
use crate::random::{OsRandom, RandomExt};

/// A live family of `principal` with `client`, written.
async fn family_of(store: &dyn Store, principal: PrincipalId, client: ClientId) -> Bundle {
    let mut bundle = Bundle::live(now());
    bundle.family.principal_id = principal;
    bundle.family.client_id = client;
    bundle.refresh.client_id = client;
    bundle.access.client_id = client;
    bundle.access.subject = *principal.as_uuid();
    bundle.create(store).await;
    bundle
}

async fn is_revoked(store: &dyn Store, bundle: &Bundle) -> bool {
    let family = store
        .get_family(&bundle.family.id, now())
        .await
        .expect("get_family")
        .expect("the family exists");
    let access = store
        .get_access_token(&bundle.access.jti, now())
        .await
        .expect("get_access_token")
        .expect("the access token exists");
    assert_eq!(
        family.revoked_at.is_some(),
        access.revoked,
        "an access token reads revoked exactly when its family is"
    );
    access.revoked
}

pub async fn revoke_access_token_revokes_only_that_token(store: &dyn Store) {
    let now = now();
    let bundle = Bundle::live(now);
    bundle.create(store).await;
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

    assert!(
        store
            .revoke_access_token(&bundle.access.jti, now)
            .await
            .expect("revoke_access_token"),
        "revoking a stored access token returns true"
    );
    assert!(
        store
            .revoke_access_token(&bundle.access.jti, now + 1)
            .await
            .expect("revoke_access_token again"),
        "revoking again is idempotent"
    );
    let revoked = store
        .get_access_token(&bundle.access.jti, now)
        .await
        .expect("get_access_token")
        .expect("a revoked access token is still returned");
    assert!(revoked.revoked, "the access token reads revoked");
    let family = store
        .get_family(&bundle.family.id, now)
        .await
        .expect("get_family")
        .expect("the family exists");
    assert!(family.is_live(now), "the token's family stays live");
    let other = store
        .get_access_token(&application.jti, now)
        .await
        .expect("get_access_token")
        .expect("the other token exists");
    assert!(!other.revoked, "another access token is untouched");

    let unknown = access_token(now, ClientId::new(OsRandom.uuid()), None, now + 60);
    assert!(
        !store
            .revoke_access_token(&unknown.jti, now)
            .await
            .expect("revoke_access_token of an unknown jti"),
        "an unknown access token is reported absent"
    );
    assert_eq!(
        store
            .get_access_token(&unknown.jti, now)
            .await
            .expect("get_access_token"),
        None,
        "revoking an unknown access token creates nothing"
    );
}

pub async fn revoke_connection_revokes_the_principals_families_with_that_client(store: &dyn Store) {
    let principal = PrincipalId::new(OsRandom.uuid());
    let client = ClientId::new(OsRandom.uuid());
    let first = family_of(store, principal, client).await;
    let second = family_of(store, principal, client).await;
    let other_client = family_of(store, principal, ClientId::new(OsRandom.uuid())).await;
    let other_principal = family_of(store, PrincipalId::new(OsRandom.uuid()), client).await;

    store
        .revoke_connection(&principal, &client, now())
        .await
        .expect("revoke_connection");
    assert!(
        is_revoked(store, &first).await,
        "the first family is revoked"
    );
    assert!(
        is_revoked(store, &second).await,
        "the second family is revoked"
    );
    assert!(
        !is_revoked(store, &other_client).await,
        "the principal's family with another client stays live"
    );
    assert!(
        !is_revoked(store, &other_principal).await,
        "another principal's family with the client stays live"
    );

    store
        .revoke_connection(&principal, &client, now())
        .await
        .expect("revoke_connection is idempotent");
    let later = family_of(store, principal, client).await;
    assert!(
        !is_revoked(store, &later).await,
        "a family created after the revocation is live"
    );
    store
        .revoke_connection(&PrincipalId::new(OsRandom.uuid()), &client, now())
        .await
        .expect("revoking a connection with no families succeeds");
}
