//! `grant_type=password` (`credtype=password`) through the dispatch over a [`TestState`]: the
//! family a right password starts, and the refusals that write nothing but the attempt.

use super::testing::{code, token};
use crate::domain::audit::{AuditKind, AuditSubject, StartedBy};
use crate::domain::{AuthMethod, Geolocation, PrincipalType, User, UserStatus};
use crate::errors::ErrorCode;
use crate::test_state::{scopes, TestClient, TestState};

const LOGIN: &str = "password.user@example.com";
const PASSWORD: &str = "correct horse battery staple";

async fn user_and_client() -> (TestState, TestClient, User) {
    let state = TestState::new().await;
    let client = state.default_client().await;
    let user = state.user(LOGIN, PASSWORD).await;
    (state, client, user)
}

async fn sign_in(
    state: &TestState,
    client: &TestClient,
    login: &str,
    password: &str,
) -> Result<crate::issuance::IssuedTokens, crate::errors::GrantError> {
    token(
        state,
        client,
        &[
            ("grant_type", "password"),
            ("username", login),
            ("password", password),
            ("scope", "read"),
        ],
    )
    .await
}

#[tokio::test]
async fn a_right_password_starts_a_family_of_the_user() {
    let (state, client, user) = user_and_client().await;

    let issued = sign_in(&state, &client, LOGIN, PASSWORD)
        .await
        .expect("signed in");

    assert_eq!(issued.access.subject, *user.id.as_uuid());
    assert_eq!(issued.access.principal_type, PrincipalType::User);
    assert_eq!(issued.access.scopes, scopes("read"));
    assert!(
        issued.id_token.is_some(),
        "a user's family gets an ID token"
    );
    assert_eq!(issued.auth_time, Some(state.now()));
    assert_eq!(issued.amr, AuthMethod::PASSWORD.to_vec());
    let refresh = issued.refresh.expect("a refresh token");
    let family = state
        .stored_family(&refresh.family_id)
        .await
        .expect("stored");
    assert_eq!(family.principal_id, user.id);
    assert_eq!(family.client_id, client.client.id);
    assert_eq!(family.scopes, scopes("read"));
    assert_eq!(family.current_token, refresh.token.hash());
    assert_eq!(family.generation, 0);
    assert_eq!(family.geolocation, TestState::geolocation());
    let kinds = state
        .audit_kinds(AuditSubject::Family(refresh.family_id))
        .await;
    assert!(
        kinds.contains(&AuditKind::FamilyStarted {
            grant: StartedBy::Password,
            issued_by: None
        }),
        "{kinds:?}"
    );
}

#[tokio::test]
async fn a_wrong_password_and_an_unknown_login_answer_alike() {
    let (state, client, _) = user_and_client().await;
    assert_eq!(
        code(sign_in(&state, &client, LOGIN, "wrong").await),
        ErrorCode::IncorrectCredentials
    );
    assert_eq!(
        code(sign_in(&state, &client, "nobody@example.com", PASSWORD).await),
        ErrorCode::IncorrectCredentials
    );
}

#[tokio::test]
async fn failed_passwords_lock_the_login_until_the_window_ends() {
    let (state, client, _) = user_and_client().await;
    for _ in 0..state.services.policy.lockout_threshold {
        assert_eq!(
            code(sign_in(&state, &client, LOGIN, "wrong").await),
            ErrorCode::IncorrectCredentials
        );
    }

    assert_eq!(
        code(sign_in(&state, &client, LOGIN, PASSWORD).await),
        ErrorCode::AccountLocked,
        "locked, even with the right password"
    );

    state.advance(state.services.policy.lockout_window_seconds);
    sign_in(&state, &client, LOGIN, PASSWORD)
        .await
        .expect("the window has passed");
}

#[tokio::test]
async fn right_passwords_do_not_count_towards_the_lockout() {
    let (state, client, _) = user_and_client().await;
    for _ in 0..state.services.policy.lockout_threshold + 2 {
        sign_in(&state, &client, LOGIN, PASSWORD)
            .await
            .expect("signed in");
    }
}

#[tokio::test]
async fn a_disabled_user_is_refused_after_the_password() {
    let (state, client, user) = user_and_client().await;
    let disabled = User {
        status: UserStatus::Disabled,
        ..user
    };
    state
        .store()
        .principals()
        .put_user(&disabled)
        .await
        .unwrap();

    assert_eq!(
        code(sign_in(&state, &client, LOGIN, PASSWORD).await),
        ErrorCode::AccountDisabled
    );
    assert_eq!(
        code(sign_in(&state, &client, LOGIN, "wrong").await),
        ErrorCode::IncorrectCredentials,
        "the status is told only to whoever knows the password"
    );
}

#[tokio::test]
async fn a_user_of_another_deployment_is_sent_home_and_nothing_is_started() {
    let (state, client, user) = user_and_client().await;
    let elsewhere = Geolocation::parse("https://emea.api.example.com").unwrap();
    let moved = User {
        geolocation: elsewhere.clone(),
        ..user.clone()
    };
    state.store().principals().put_user(&moved).await.unwrap();

    let refused = sign_in(&state, &client, LOGIN, PASSWORD).await;
    assert_eq!(code(refused), ErrorCode::UserLivesElsewhere);
    let kinds = state.audit_kinds(AuditSubject::Principal(user.id)).await;
    assert!(
        !kinds
            .iter()
            .any(|kind| matches!(kind, AuditKind::FamilyStarted { .. })),
        "{kinds:?}"
    );
}

#[tokio::test]
async fn a_scope_beyond_the_clients_is_refused_before_the_password_is_checked() {
    let (state, client, _) = user_and_client().await;
    let refused = token(
        &state,
        &client,
        &[
            ("grant_type", "password"),
            ("username", LOGIN),
            ("password", "wrong"),
            ("scope", "admin"),
        ],
    )
    .await;
    assert_eq!(code(refused), ErrorCode::ScopeExceedsGrant);
    // Not counted as a failed attempt: the right password still signs in after the threshold.
    for _ in 0..state.services.policy.lockout_threshold {
        let _ = token(
            &state,
            &client,
            &[
                ("grant_type", "password"),
                ("username", LOGIN),
                ("password", "wrong"),
                ("scope", "admin"),
            ],
        )
        .await;
    }
    sign_in(&state, &client, LOGIN, PASSWORD)
        .await
        .expect("no attempt was counted");
}
