//! `sessions list` and `sessions revoke`: an administrator sees a user's sign-in sessions and
//! ends them all, each audited with the administrator as its reason.

use token_domain::audit::{AuditKind, AuditSubject, SessionEndReason};
use token_domain::clock::{Clock, SystemClock};
use token_domain::random::{OsRandom, RandomExt};
use token_domain::{AuthMethod, PrincipalId, SessionLimits, SessionOrigin, SignInSession};
use token_store::AuditQuery;

use super::target::Target;

pub async fn sessions_list_and_revoke(t: &Target) {
    let store = &t.store;
    let user = PrincipalId::new(OsRandom.uuid());
    let now = SystemClock.now();
    let origin = SessionOrigin {
        user_agent: Some("Mozilla/5.0 (tokenctl test)".into()),
        source: Some("198.51.100.7".into()),
    };
    let mut sids = Vec::new();
    for _ in 0..2 {
        let amr = AuthMethod::PASSWORD;
        let started = SignInSession::start(
            user,
            amr,
            origin.clone(),
            SessionLimits::DEFAULT,
            &OsRandom,
            now,
        );
        store
            .sessions()
            .put_session(&started.session)
            .await
            .unwrap();
        sids.push(started.session.sid.to_string());
    }
    let principal = user.to_string();

    let listed = t.json(&["sessions", "list", "--principal", &principal]);
    let mut found: Vec<String> = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["sid"].as_str().unwrap().to_owned())
        .collect();
    found.sort();
    sids.sort();
    assert_eq!(found, sids);
    assert_eq!(listed["sessions"][0]["source_address"], "198.51.100.7");
    assert_eq!(
        listed["sessions"][0]["browser"],
        "Mozilla/5.0 (tokenctl test)"
    );

    let revoked = t.json(&["sessions", "revoke", "--principal", &principal]);
    assert_eq!(revoked["ended"], 2);
    let now = SystemClock.now();
    assert!(store
        .sessions()
        .list_sessions(&user, now)
        .await
        .unwrap()
        .is_empty());
    let again = t.json(&["sessions", "revoke", "--principal", &principal]);
    assert_eq!(again["ended"], 0, "nothing left to end");
    let events = store
        .audit()
        .audit_events(AuditQuery {
            subject: AuditSubject::Principal(user),
            since: None,
            now,
        })
        .await
        .unwrap();
    let reasons: Vec<SessionEndReason> = events
        .iter()
        .filter_map(|event| match &event.kind {
            AuditKind::SessionEnded { reason, .. } => Some(*reason),
            _ => None,
        })
        .collect();
    assert_eq!(reasons, vec![SessionEndReason::Administrator; 2]);
    t.fails(&["sessions", "list", "--principal", "nobody"], 2);
}
