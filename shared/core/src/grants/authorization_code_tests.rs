//! `grant_type=authorization_code` through the dispatch over a [`TestState`], with the code
//! stored as the consent page stores it: one redemption, a second use revoking what the first
//! started, and the refusals that leave the code redeemable.

use super::testing::{code, token};
use crate::domain::audit::{AuditKind, AuditSubject, RevocationReason};
use crate::domain::pkce::s256_challenge;
use crate::domain::{AuthMethod, AuthorizationCode, User};
use crate::errors::ErrorCode;
use crate::random::{OsRandom, RandomExt};
use crate::secrets::TokenHash;
use crate::test_state::{scopes, TestClient, TestState};

const REDIRECT_URI: &str = "https://app.example.com/callback";
const VERIFIER: &str = "a-code-verifier-of-at-least-forty-three-characters-0123456789";
const CODE_SECONDS: i64 = 300;

struct Approved {
    state: TestState,
    client: TestClient,
    user: User,
    code: String,
}

/// A code the user approved for the default client just now, with a PKCE challenge.
async fn approved() -> Approved {
    let state = TestState::new().await;
    let client = state.default_client().await;
    let user = state.user("code.user@example.com", "a password").await;
    let code = OsRandom.opaque_token();
    let record = AuthorizationCode {
        code_hash: TokenHash::of(&code),
        client_id: client.client.id,
        redirect_uri: REDIRECT_URI.to_owned(),
        user_id: user.id,
        scopes: scopes("openid read"),
        code_challenge: Some(s256_challenge(VERIFIER)),
        nonce: Some("n-0S6_WzA2Mj".to_owned()),
        issued_at: state.now(),
        expires_at: state.now() + CODE_SECONDS,
        redeemed_at: None,
        family_id: None,
        auth_time: Some(state.now()),
        sid: None,
        amr: AuthMethod::PASSWORD.to_vec(),
        idp: None,
        dpop_jkt: None,
        resources: Vec::new(),
    };
    state
        .store()
        .authorization_codes()
        .put_authorization_code(&record)
        .await
        .unwrap();
    Approved {
        state,
        client,
        user,
        code,
    }
}

async fn redeem(
    approved: &Approved,
    client: &TestClient,
    redirect_uri: &str,
    verifier: &str,
) -> Result<crate::issuance::IssuedTokens, crate::errors::GrantError> {
    token(
        &approved.state,
        client,
        &[
            ("grant_type", "authorization_code"),
            ("code", &approved.code),
            ("redirect_uri", redirect_uri),
            ("code_verifier", verifier),
        ],
    )
    .await
}

async fn stored_code(approved: &Approved) -> Option<AuthorizationCode> {
    approved
        .state
        .store()
        .authorization_codes()
        .get_authorization_code(&TokenHash::of(&approved.code), approved.state.now())
        .await
        .unwrap()
}

#[tokio::test]
async fn a_code_is_redeemed_once_for_a_family_of_its_user_with_an_id_token() {
    let approved = approved().await;
    let (state, client) = (&approved.state, &approved.client);

    let issued = redeem(&approved, client, REDIRECT_URI, VERIFIER)
        .await
        .expect("redeemed");

    assert!(issued.id_token.is_some());
    assert_eq!(issued.access.scopes, scopes("openid read"));
    let refresh = issued.refresh.expect("a refresh token");
    let family = state
        .stored_family(&refresh.family_id)
        .await
        .expect("stored");
    assert_eq!(family.principal_id, approved.user.id);
    assert_eq!(family.client_id, client.client.id);
    let record = stored_code(&approved).await.expect("kept after redemption");
    assert_eq!(record.redeemed_at, Some(state.now()));
    assert_eq!(record.family_id, Some(refresh.family_id));
}

#[tokio::test]
async fn a_second_use_is_refused_and_revokes_the_family_of_the_first() {
    let approved = approved().await;
    let (state, client) = (&approved.state, &approved.client);
    let first = redeem(&approved, client, REDIRECT_URI, VERIFIER)
        .await
        .expect("redeemed")
        .refresh
        .expect("a refresh token");

    assert_eq!(
        code(redeem(&approved, client, REDIRECT_URI, VERIFIER).await),
        ErrorCode::CodeBadOrExpired
    );

    let family = state.stored_family(&first.family_id).await.expect("stored");
    assert!(family.revoked_at.is_some());
    let kinds = state
        .audit_kinds(AuditSubject::Family(first.family_id))
        .await;
    assert!(
        kinds.contains(&AuditKind::FamilyRevoked {
            reason: RevocationReason::CodeReplay
        }),
        "{kinds:?}"
    );
}

#[tokio::test]
async fn another_redirect_uri_is_104_and_leaves_the_code_redeemable() {
    let approved = approved().await;
    let client = &approved.client;

    assert_eq!(
        code(redeem(&approved, client, "https://app.example.com/other", VERIFIER).await),
        ErrorCode::RedirectUriMismatch
    );
    assert!(stored_code(&approved).await.unwrap().redeemed_at.is_none());
    redeem(&approved, client, REDIRECT_URI, VERIFIER)
        .await
        .expect("still redeemable");
}

#[tokio::test]
async fn a_wrong_verifier_is_103() {
    let approved = approved().await;
    let wrong = "another-code-verifier-of-at-least-forty-three-characters-987";
    assert_eq!(
        code(redeem(&approved, &approved.client, REDIRECT_URI, wrong).await),
        ErrorCode::CodeBadOrExpired
    );
}

#[tokio::test]
async fn another_clients_request_is_105_and_redeems_nothing() {
    let approved = approved().await;
    let other = approved.state.default_client().await;

    assert_eq!(
        code(redeem(&approved, &other, REDIRECT_URI, VERIFIER).await),
        ErrorCode::GrantNotIssuedToClient
    );
    assert!(stored_code(&approved).await.unwrap().redeemed_at.is_none());
}

#[tokio::test]
async fn a_code_past_its_five_minutes_is_103() {
    let approved = approved().await;
    approved.state.advance(CODE_SECONDS);

    assert_eq!(
        code(redeem(&approved, &approved.client, REDIRECT_URI, VERIFIER).await),
        ErrorCode::CodeBadOrExpired
    );
}
