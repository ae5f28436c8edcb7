//! `users set-status`: disabled or logon-denied takes the user's access at once (the password
//! grant answers the status's code, the session is ended, the family and its access token are
//! revoked so a refresh answers 108), each step audited; active again lets the user sign in and
//! revives nothing.

use reqwest::header;
use token_domain::audit::{AuditKind, AuditSubject, RevocationReason, SessionEndReason};
use token_domain::clock::Clock;
use token_domain::UserStatus;

use super::target::{Target, UNKNOWN};
use crate::authorize::flow::{LOGIN, PASSWORD};
use crate::openid::{account_sign_in, set_cookie_pair};
use crate::support::app::{jti_of, TestApp};
use crate::support::assertions::assert_token_error;

pub async fn set_status(t: &Target) {
    let app = super::app_on(t).await;
    let user = app.create_user(LOGIN, PASSWORD).await;
    let user_id = user.id.to_string();
    let client = app.create_client("read").await;
    let tokens = app.user_tokens(&client, LOGIN, PASSWORD).await;
    let refresh_token = tokens["refresh_token"].as_str().unwrap().to_owned();
    let jti = jti_of(tokens["access_token"].as_str().unwrap());
    let family = app
        .stored_access_token(&jti)
        .await
        .unwrap()
        .family_id
        .unwrap();
    let (_, answer) = account_sign_in(&app).await;
    let session = set_cookie_pair(&answer, "__Host-session").expect("signed in");
    assert!(signed_in(&app, &session).await);

    let done = t.json(&["users", "set-status", &user_id, "disabled"]);
    assert_eq!(done["user_id"], user_id.as_str());
    assert_eq!(done["status"], "disabled");
    assert_eq!(done["sessions_ended"], 1);
    assert_eq!(done["families_revoked"], 1);
    assert_eq!(stored_status(&app, &user).await, UserStatus::Disabled);
    let now = app.clock.now();
    let sessions = app.store.sessions().list_sessions(&user.id, now).await;
    assert!(sessions.unwrap().is_empty());
    assert!(!signed_in(&app, &session).await, "the session ended");
    assert!(app.stored_family(&family).await.revoked_at.is_some());
    assert!(app.stored_access_token(&jti).await.unwrap().revoked);
    let grant = app.password_grant(&client, LOGIN, PASSWORD, &[]).await;
    assert_token_error(&grant, 400, "invalid_grant", 10);
    // Its family revoked, the refresh answers 108 before the status would be read (123).
    let refresh = app.refresh(&client, &refresh_token).await;
    assert_token_error(&refresh, 400, "invalid_grant", 108);
    let mut audited = audited(&app, &user).await;
    // As a set: the tool's events and the test's are stamped by two clocks (the tool's real one,
    // the test's manual one), and the tool's own within one millisecond in no fixed order.
    audited.sort_unstable();
    assert_eq!(
        audited,
        ["family.revoked", "session.ended", "user.status_set"]
    );

    // Again: nothing left to end, and it says so.
    let again = t.json(&["users", "set-status", &user_id, "disabled"]);
    assert_eq!(
        (
            again["sessions_ended"].as_u64(),
            again["families_revoked"].as_u64()
        ),
        (Some(0), Some(0))
    );

    // Active: signs in again; the revoked family stays revoked.
    let active = t.json(&["users", "set-status", &user_id, "active"]);
    assert_eq!(active["status"], "active");
    let fresh = app.user_tokens(&client, LOGIN, PASSWORD).await;
    let (status, _) = app.refresh(&client, &refresh_token).await;
    assert_ne!(status, reqwest::StatusCode::OK, "nothing revived");

    // Logon-denied: 12 at the password grant; the family started since is revoked too.
    let text = t.text(&["users", "set-status", &user_id, "logon-denied"]);
    assert!(
        text.contains("logon-denied") && text.contains("1 token family(ies) revoked"),
        "{text}"
    );
    let grant = app.password_grant(&client, LOGIN, PASSWORD, &[]).await;
    assert_token_error(&grant, 400, "invalid_grant", 12);
    let fresh_jti = jti_of(fresh["access_token"].as_str().unwrap());
    assert!(app.stored_access_token(&fresh_jti).await.unwrap().revoked);
    let refresh = app
        .refresh(&client, fresh["refresh_token"].as_str().unwrap())
        .await;
    assert_token_error(&refresh, 400, "invalid_grant", 108);

    let statuses: Vec<UserStatus> = crate::audit::events_of(&app, AuditSubject::Principal(user.id))
        .await
        .into_iter()
        .filter_map(|event| match event.kind {
            AuditKind::UserStatusSet { status } => Some(status),
            _ => None,
        })
        .collect();
    assert_eq!(
        statuses,
        [
            UserStatus::LogonDenied,
            UserStatus::Active,
            UserStatus::Disabled,
            UserStatus::Disabled
        ]
    );
    t.fails(&["users", "set-status", UNKNOWN, "disabled"], 3);
    t.fails(&["users", "set-status", &user_id, "locked"], 2);
}

async fn stored_status(app: &TestApp, user: &token_domain::User) -> UserStatus {
    let stored = app.store.principals().get_user(&user.id).await.unwrap();
    stored.expect("the user is stored").status
}

/// Whether the account page opens with `session` (a session cookie pair) rather than asking
/// to sign in.
async fn signed_in(app: &TestApp, session: &str) -> bool {
    let page = app
        .http
        .get(app.url("/oauth2/v0/account"))
        .header(header::COOKIE, session)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    page.contains("Sign out everywhere")
}

/// The user's audit events an administrator's status change made: the status set, and the
/// sessions ended and families revoked by an administrator.
async fn audited(app: &TestApp, user: &token_domain::User) -> Vec<&'static str> {
    crate::audit::events_of(app, AuditSubject::Principal(user.id))
        .await
        .iter()
        .filter_map(|event| match &event.kind {
            AuditKind::UserStatusSet { .. } => Some(event.kind.name()),
            AuditKind::SessionEnded { reason, .. }
                if *reason == SessionEndReason::Administrator =>
            {
                Some(event.kind.name())
            }
            AuditKind::FamilyRevoked { reason } if *reason == RevocationReason::Admin => {
                Some(event.kind.name())
            }
            _ => None,
        })
        .collect()
}
