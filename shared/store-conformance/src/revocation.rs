//! Revoking one access token, and every family of one (principal, client) connection.

use super::fixtures::*;
use super::records::{access_token, application_access_token, now, scopes, Bundle};
use super::Store;
use crate::domain::audit::{AuditEvent, AuditKind, AuditSubject, RequestFacts};
use crate::domain::{AccessTokenRecord, ClientId, PrincipalId, TokenId};
use crate::random::{OsRandom, RandomExt};
use crate::store::{AuditQuery, Connection, TokenRevoked};

/// A live family of `principal` with `client`, written.
async fn family_of(store: &dyn Store, principal: PrincipalId, client: ClientId) -> Bundle {
    let bundle = Bundle::live_for(now(), principal, client);
    bundle.create(store).await;
    bundle
}

async fn is_revoked(store: &dyn Store, bundle: &Bundle) -> bool {
    let family = present_family(store, &bundle.family.id, now(), "the family exists").await;
    let access = read_access_token(store, &bundle.access.jti, now())
        .await
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
    let bundle = stored_bundle(store, now).await;
    let application = stored_application_token(store, now).await;

    assert!(
        store
            .revocation()
            .revoke_access_token(&bundle.access.jti, now)
            .await
            .expect("revoke_access_token"),
        "revoking a stored access token returns true"
    );
    assert!(
        store
            .revocation()
            .revoke_access_token(&bundle.access.jti, now + 1)
            .await
            .expect("revoke_access_token again"),
        "revoking again is idempotent"
    );
    let revoked = read_access_token(store, &bundle.access.jti, now)
        .await
        .expect("a revoked access token is still returned");
    assert!(revoked.revoked, "the access token reads revoked");
    let family = present_family(store, &bundle.family.id, now, "the family exists").await;
    assert!(family.is_live(now), "the token's family stays live");
    let other = read_access_token(store, &application.jti, now)
        .await
        .expect("the other token exists");
    assert!(!other.revoked, "another access token is untouched");

    let unknown = access_token(now, ClientId::new(OsRandom.uuid()), None, now + 60);
    assert!(
        !store
            .revocation()
            .revoke_access_token(&unknown.jti, now)
            .await
            .expect("revoke_access_token of an unknown jti"),
        "an unknown access token is reported absent"
    );
    assert_eq!(
        read_access_token(store, &unknown.jti, now).await,
        None,
        "revoking an unknown access token creates nothing"
    );
}

/// `from`'s token exchanged again: a new `jti`, and `from` at the end of its chain.
async fn stored_exchange(store: &dyn Store, from: &AccessTokenRecord) -> AccessTokenRecord {
    let mut exchanged_from = from.exchanged_from.clone();
    exchanged_from.push(from.jti);
    let token = AccessTokenRecord {
        jti: TokenId::new(OsRandom.uuid()),
        exchanged_from,
        ..from.clone()
    };
    store
        .families()
        .put_access_token(&token)
        .await
        .expect("put_access_token");
    token
}

async fn reads_revoked(store: &dyn Store, token: &AccessTokenRecord) -> bool {
    read_access_token(store, &token.jti, now())
        .await
        .expect("the access token exists")
        .revoked
}

pub async fn an_exchanged_token_reads_revoked_once_a_token_it_came_from_is(store: &dyn Store) {
    let now = now();
    // Without a family, so that only the chain can revoke them.
    let root = stored_application_token(store, now).await;
    let middle = stored_exchange(store, &root).await;
    let last = stored_exchange(store, &middle).await;
    let read = read_access_token(store, &last.jti, now).await;
    assert_eq!(
        read.as_ref(),
        Some(&last),
        "the chain reads back as written"
    );
    for token in [&root, &middle, &last] {
        assert!(!reads_revoked(store, token).await, "nothing is revoked yet");
    }

    store
        .revocation()
        .revoke_access_token(&middle.jti, now)
        .await
        .expect("revoke_access_token");
    assert!(
        !reads_revoked(store, &root).await,
        "what it came from stays"
    );
    assert!(reads_revoked(store, &middle).await, "the revoked token");
    assert!(
        reads_revoked(store, &last).await,
        "what was exchanged from it"
    );

    let other = stored_exchange(store, &root).await;
    assert!(
        !reads_revoked(store, &other).await,
        "another branch of the root"
    );
    store
        .revocation()
        .revoke_access_token(&root.jti, now)
        .await
        .expect("revoke_access_token");
    assert!(
        reads_revoked(store, &other).await,
        "every branch ends with the root"
    );

    // A token it came from that is gone (it outlives what came from it): revoked, not live.
    let orphan = AccessTokenRecord {
        jti: TokenId::new(OsRandom.uuid()),
        exchanged_from: vec![TokenId::new(OsRandom.uuid())],
        ..application_access_token(now)
    };
    store
        .families()
        .put_access_token(&orphan)
        .await
        .expect("put_access_token");
    assert!(
        reads_revoked(store, &orphan).await,
        "exchanged from nothing stored"
    );
}

pub async fn revoke_connection_revokes_the_principals_families_with_that_client(store: &dyn Store) {
    let principal = PrincipalId::new(OsRandom.uuid());
    let client = ClientId::new(OsRandom.uuid());
    let first = family_of(store, principal, client).await;
    let second = family_of(store, principal, client).await;
    let other_client = family_of(store, principal, ClientId::new(OsRandom.uuid())).await;
    let other_principal = family_of(store, PrincipalId::new(OsRandom.uuid()), client).await;

    let mut revoked = store
        .revocation()
        .revoke_connection(&principal, &client, now(), None)
        .await
        .expect("revoke_connection");
    revoked.sort();
    let mut expected = vec![first.family.id, second.family.id];
    expected.sort();
    assert_eq!(revoked, expected, "it answers the families it revoked");
    for (bundle, revoked, what) in [
        (&first, true, "the first family is revoked"),
        (&second, true, "the second family is revoked"),
        (
            &other_client,
            false,
            "the principal's family with another client stays live",
        ),
        (
            &other_principal,
            false,
            "another principal's family with the client stays live",
        ),
    ] {
        assert_eq!(is_revoked(store, bundle).await, revoked, "{what}");
    }

    let again = store
        .revocation()
        .revoke_connection(&principal, &client, now(), None)
        .await
        .expect("revoke_connection is idempotent");
    assert!(again.is_empty(), "a repeat revokes nothing new: {again:?}");
    let later = family_of(store, principal, client).await;
    assert!(
        !is_revoked(store, &later).await,
        "a family created after the revocation is live"
    );
    store
        .revocation()
        .revoke_connection(&PrincipalId::new(OsRandom.uuid()), &client, now(), None)
        .await
        .expect("revoking a connection with no families succeeds");
}

pub async fn revoke_connection_started_by_spares_families_started_later(store: &dyn Store) {
    let (principal, client) = (
        PrincipalId::new(OsRandom.uuid()),
        ClientId::new(OsRandom.uuid()),
    );
    let started_at = |at| {
        let mut bundle = Bundle::live_for(now(), principal, client);
        bundle.family.created_at = at;
        bundle
    };
    let hinted_at = now() - 60;
    let (earlier, same_second, later) = (
        started_at(hinted_at - 600),
        started_at(hinted_at),
        started_at(hinted_at + 1),
    );
    for bundle in [&earlier, &same_second, &later] {
        bundle.create(store).await;
    }

    let mut revoked = store
        .revocation()
        .revoke_connection_started_by(&principal, &client, hinted_at, now(), None)
        .await
        .expect("revoke_connection_started_by");
    revoked.sort();
    let mut expected = vec![earlier.family.id, same_second.family.id];
    expected.sort();
    assert_eq!(revoked, expected, "it answers the families it revoked");
    assert!(
        is_revoked(store, &earlier).await,
        "an earlier family is revoked"
    );
    assert!(
        is_revoked(store, &same_second).await,
        "a family started in the same second is revoked"
    );
    assert!(
        !is_revoked(store, &later).await,
        "a family started later stays live"
    );

    let revoked = store
        .revocation()
        .revoke_connection(&principal, &client, now(), None)
        .await
        .expect("revoke_connection");
    assert_eq!(
        revoked,
        vec![later.family.id],
        "the spared family is still part of the connection"
    );
}

pub async fn revoking_an_access_token_records_only_the_first_time(store: &dyn Store) {
    let now = now();
    let bundle = stored_bundle(store, now).await;
    let jti = bundle.access.jti;
    let event = |at| {
        AuditEvent::new(
            crate::domain::audit::AuditId::new(OsRandom.uuid()),
            at,
            AuditKind::AccessTokenRevoked {
                jti,
                reason: crate::domain::audit::RevocationReason::RevocationEndpoint,
            },
            RequestFacts::default(),
        )
        .client(bundle.family.client_id)
        .family(bundle.family.id)
    };
    let revoke = |at, audit: Vec<AuditEvent>| async move {
        store
            .revocation()
            .revoke_access_token_recorded(&jti, at, &audit)
            .await
            .expect("revoke_access_token_recorded")
    };
    let first = event(now);
    assert_eq!(
        revoke(now, vec![first.clone()]).await,
        TokenRevoked::Revoked
    );
    assert_eq!(
        revoke(now + 1, vec![event(now + 1)]).await,
        TokenRevoked::AlreadyRevoked,
        "a repeat revokes nothing and records nothing"
    );
    let unknown = access_token(now, ClientId::new(OsRandom.uuid()), None, now + 60);
    let absent = store
        .revocation()
        .revoke_access_token_recorded(&unknown.jti, now, &[])
        .await
        .expect("revoke_access_token_recorded of an unknown jti");
    assert_eq!(absent, TokenRevoked::NotFound);
    let events = store
        .audit()
        .audit_events(AuditQuery {
            subject: AuditSubject::Family(bundle.family.id),
            since: None,
            now: now + 1,
        })
        .await
        .expect("audit_events");
    assert_eq!(events, vec![first]);
    let token = read_access_token(store, &jti, now + 1).await;
    assert!(token.expect("the token").revoked);
    let family = present_family(store, &bundle.family.id, now + 1, "the family").await;
    assert!(family.is_live(now + 1), "its family stays live");
}

pub async fn user_connections_list_the_clients_of_live_families(store: &dyn Store) {
    let user = PrincipalId::new(OsRandom.uuid());
    let (kept, revoked, short_lived) = (
        ClientId::new(OsRandom.uuid()),
        ClientId::new(OsRandom.uuid()),
        ClientId::new(OsRandom.uuid()),
    );
    let mut reading = Bundle::live_for(now(), user, kept);
    reading.family.scopes = scopes("read");
    reading.create(store).await;
    let mut writing = Bundle::live_for(now(), user, kept);
    writing.family.scopes = scopes("write openid");
    writing.create(store).await;
    family_of(store, user, revoked).await;
    let mut brief = Bundle::new(now(), now() + 60);
    brief.family.principal_id = user;
    brief.family.client_id = short_lived;
    brief.refresh.client_id = short_lived;
    brief.access.client_id = short_lived;
    brief.create(store).await;
    family_of(
        store,
        PrincipalId::new(OsRandom.uuid()),
        ClientId::new(OsRandom.uuid()),
    )
    .await;
    store
        .revocation()
        .revoke_connection(&user, &revoked, now(), None)
        .await
        .expect("revoke_connection");

    let listed = store
        .revocation()
        .user_connections(&user, now())
        .await
        .expect("user_connections");
    let mut expected = vec![
        Connection {
            client_id: kept,
            scopes: scopes("read write openid"),
        },
        Connection {
            client_id: short_lived,
            scopes: scopes("read write"),
        },
    ];
    expected.sort_by_key(|connection| connection.client_id);
    assert_eq!(
        listed, expected,
        "live families' clients, scopes merged; a revoked connection and other users' absent"
    );
    let later = store
        .revocation()
        .user_connections(&user, now() + 61)
        .await
        .expect("user_connections later");
    assert_eq!(
        later.iter().map(|c| c.client_id).collect::<Vec<_>>(),
        vec![kept],
        "a client whose only family expired is no longer listed"
    );
    assert!(
        store
            .revocation()
            .user_connections(&PrincipalId::new(OsRandom.uuid()), now())
            .await
            .expect("user_connections of a stranger")
            .is_empty(),
        "a user without families has no connections"
    );
}
