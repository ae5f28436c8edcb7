//! Sign-in sessions and remembered consent: found by principal and id, ended once, never
//! written back to life, and a consent per user and client.

use super::records::*;
use crate::domain::{
    AuthMethod, ClientId, Consent, PrincipalId, SessionLimits, SessionOrigin, SignInSession,
};
use crate::random::{OsRandom, RandomExt};
use crate::store::prelude::*;

fn started(principal: PrincipalId, now: i64) -> (SignInSession, String) {
    let origin = SessionOrigin {
        user_agent: Some("Mozilla/5.0 (conformance)".into()),
        source: Some("192.0.2.7".into()),
    };
    let started = SignInSession::start(
        principal,
        AuthMethod::PASSWORD,
        origin,
        SessionLimits::DEFAULT,
        &OsRandom,
        now,
    );
    (started.session, started.cookie)
}

async fn stored(store: &dyn Store, principal: PrincipalId, now: i64) -> (SignInSession, String) {
    let (session, cookie) = started(principal, now);
    store
        .sessions()
        .put_session(&session)
        .await
        .expect("put_session");
    (session, cookie)
}

pub async fn sessions_are_listed_per_principal_and_end_once(store: &dyn Store) {
    let now = now();
    let user = PrincipalId::new(OsRandom.uuid());
    let other = PrincipalId::new(OsRandom.uuid());
    let (first, cookie) = stored(store, user, now - 10).await;
    let (second, _) = stored(store, user, now).await;
    let (theirs, _) = stored(store, other, now).await;
    let sessions = store.sessions();

    let read = sessions
        .get_session(&user, &first.sid, now)
        .await
        .unwrap()
        .expect("a live session reads back");
    assert_eq!(read, first);
    assert!(read.opened_by(&cookie), "the stored hash is the cookie's");
    assert_eq!(
        sessions.get_session(&other, &first.sid, now).await.unwrap(),
        None,
        "a session is found only under its own principal"
    );
    let listed: Vec<_> = sessions
        .list_sessions(&user, now)
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.sid)
        .collect();
    assert_eq!(listed, vec![first.sid.clone(), second.sid.clone()]);

    let ended = sessions
        .delete_session(&user, &first.sid, now)
        .await
        .unwrap();
    assert_eq!(ended.map(|s| s.sid), Some(first.sid.clone()));
    assert_eq!(
        sessions
            .delete_session(&user, &first.sid, now)
            .await
            .unwrap(),
        None,
        "a session ends once: the second deletion finds nothing"
    );
    assert_eq!(
        sessions.get_session(&user, &first.sid, now).await.unwrap(),
        None
    );
    assert!(
        !sessions
            .touch_session(&user, &first.sid, now + 120, now + 1_000)
            .await
            .unwrap(),
        "an ended session is not written back to life"
    );
    assert!(sessions
        .get_session(&other, &theirs.sid, now)
        .await
        .unwrap()
        .is_some());
}

pub async fn expired_sessions_read_as_absent_and_are_not_revived(store: &dyn Store) {
    let now = now();
    let user = PrincipalId::new(OsRandom.uuid());
    let (mut session, _) = started(user, now - 100);
    session.expires_at = now - 1;
    store.sessions().put_session(&session).await.unwrap();
    let sessions = store.sessions();
    assert_eq!(
        sessions
            .get_session(&user, &session.sid, now)
            .await
            .unwrap(),
        None
    );
    assert!(sessions.list_sessions(&user, now).await.unwrap().is_empty());
    assert!(!sessions
        .touch_session(&user, &session.sid, now, now + 500)
        .await
        .unwrap());
    let again =
        session.reauthenticated(AuthMethod::PASSWORD, SessionLimits::DEFAULT, &OsRandom, now);
    assert!(!sessions
        .reauthenticate_session(&again.session, now)
        .await
        .unwrap());
    assert!(!sessions
        .add_session_client(&user, &session.sid, &ClientId::new(OsRandom.uuid()), now)
        .await
        .unwrap());
    assert_eq!(
        sessions
            .delete_session(&user, &session.sid, now)
            .await
            .unwrap(),
        None
    );
}

pub async fn a_session_is_touched_forward_reauthenticated_and_collects_its_clients(
    store: &dyn Store,
) {
    let now = now();
    let user = PrincipalId::new(OsRandom.uuid());
    let (session, old_cookie) = stored(store, user, now - 300).await;
    let sessions = store.sessions();

    assert!(sessions
        .touch_session(&user, &session.sid, now, now + 900)
        .await
        .unwrap());
    assert!(
        !sessions
            .touch_session(&user, &session.sid, now - 60, now + 500)
            .await
            .unwrap(),
        "a late writer never moves last-seen back"
    );
    let read = sessions
        .get_session(&user, &session.sid, now)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((read.last_seen, read.expires_at), (now, now + 900));

    assert_eq!(read.amr, AuthMethod::PASSWORD, "the sign-in's methods");
    let again = read.reauthenticated(
        AuthMethod::PASSWORD_AND_CODE,
        SessionLimits::DEFAULT,
        &OsRandom,
        now,
    );
    assert!(sessions
        .reauthenticate_session(&again.session, now)
        .await
        .unwrap());
    let read = sessions
        .get_session(&user, &session.sid, now)
        .await
        .unwrap()
        .unwrap();
    assert!(read.opened_by(&again.cookie) && !read.opened_by(&old_cookie));
    assert_eq!(read.authenticated_at, now);
    assert_eq!(
        read.amr,
        AuthMethod::PASSWORD_AND_CODE,
        "the new sign-in's methods"
    );
    assert_eq!(
        read.started_at, session.started_at,
        "still the same session"
    );

    let (a, b) = (
        ClientId::new(OsRandom.uuid()),
        ClientId::new(OsRandom.uuid()),
    );
    for client in [&a, &b, &a] {
        assert!(sessions
            .add_session_client(&user, &session.sid, client, now)
            .await
            .unwrap());
    }
    let ended = sessions
        .delete_session(&user, &session.sid, now)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ended.clients, vec![a, b], "each client once, in order");
}

pub async fn consent_is_kept_per_user_and_client_until_forgotten(store: &dyn Store) {
    let user = PrincipalId::new(OsRandom.uuid());
    let (app, other_app) = (
        ClientId::new(OsRandom.uuid()),
        ClientId::new(OsRandom.uuid()),
    );
    let consent = Consent {
        principal_id: user,
        client_id: app,
        scopes: scopes("openid profile"),
        granted_at: now(),
        resources: Vec::new(),
    };
    let consents = store.consents();
    consents.put_consent(&consent).await.unwrap();
    consents
        .put_consent(&Consent {
            client_id: other_app,
            ..consent.clone()
        })
        .await
        .unwrap();
    assert_eq!(
        consents.get_consent(&user, &app).await.unwrap(),
        Some(consent.clone())
    );
    let resource = crate::domain::Resource::parse("https://mcp.example.com/mcp").unwrap();
    let wider = consent.widened(&scopes("email"), &[resource], now());
    consents.put_consent(&wider).await.unwrap();
    assert_eq!(
        consents.get_consent(&user, &app).await.unwrap(),
        Some(wider)
    );
    assert_eq!(consents.list_consents(&user).await.unwrap().len(), 2);
    assert_eq!(
        consents
            .get_consent(&PrincipalId::new(OsRandom.uuid()), &app)
            .await
            .unwrap(),
        None
    );
    assert!(consents.delete_consent(&user, &app).await.unwrap());
    assert!(!consents.delete_consent(&user, &app).await.unwrap());
    assert_eq!(consents.get_consent(&user, &app).await.unwrap(), None);
    let left: Vec<_> = consents
        .list_consents(&user)
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.client_id)
        .collect();
    assert_eq!(left, vec![other_app]);
}
