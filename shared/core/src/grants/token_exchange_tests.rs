//! RFC 8693 token exchange through the dispatch over a [`TestState`]: who may exchange which
//! access token, and what the new one carries and is stored as.

use super::testing::{code, token};
use crate::domain::{NewClient, Resource};
use crate::errors::ErrorCode;
use crate::issuance::IssuedTokens;
use crate::requests::ACCESS_TOKEN_TYPE;
use crate::test_state::{scopes, TestClient, TestState};

const GRANT: &str = "urn:ietf:params:oauth:grant-type:token-exchange";

/// A user's tokens for `client`, by the password grant, with scope `read write`.
async fn signed_in(state: &TestState, client: &TestClient) -> IssuedTokens {
    state.user("exchange.user@example.com", "a password").await;
    token(
        state,
        client,
        &[
            ("grant_type", "password"),
            ("username", "exchange.user@example.com"),
            ("password", "a password"),
            ("scope", "read write"),
        ],
    )
    .await
    .expect("signed in")
}

async fn exchange(
    state: &TestState,
    client: &TestClient,
    subject: &str,
    extra: &[(&str, &str)],
) -> Result<IssuedTokens, crate::errors::GrantError> {
    let mut pairs = vec![
        ("grant_type", GRANT),
        ("subject_token", subject),
        ("subject_token_type", ACCESS_TOKEN_TYPE),
    ];
    pairs.extend_from_slice(extra);
    token(state, client, &pairs).await
}

#[tokio::test]
async fn a_clients_own_token_is_exchanged_for_an_access_token_of_the_same_family() {
    let state = TestState::new().await;
    let client = state.default_client().await;
    let subject = signed_in(&state, &client).await;

    let exchanged = exchange(&state, &client, &subject.access_token, &[("scope", "read")])
        .await
        .expect("exchanged");

    assert!(
        exchanged.refresh.is_none(),
        "an exchange answers an access token alone"
    );
    assert!(exchanged.id_token.is_none());
    assert_eq!(exchanged.access.subject, subject.access.subject);
    assert_eq!(exchanged.access.family_id, subject.access.family_id);
    assert_eq!(exchanged.access.scopes, scopes("read"));
    assert!(exchanged.access.expires_at <= subject.access.expires_at);
    let stored = state
        .store()
        .families()
        .get_access_token(&exchanged.access.jti, state.now())
        .await
        .unwrap()
        .expect("stored");
    assert_eq!(stored.family_id, subject.access.family_id);
}

#[tokio::test]
async fn more_scope_than_the_subject_token_has_is_54() {
    let state = TestState::new().await;
    let client = state
        .client(NewClient::named("wider", scopes("read write admin")))
        .await;
    let subject = signed_in(&state, &client).await;
    assert_eq!(
        code(
            exchange(
                &state,
                &client,
                &subject.access_token,
                &[("scope", "admin")]
            )
            .await
        ),
        ErrorCode::ScopeExceedsGrant
    );
}

#[tokio::test]
async fn another_clients_token_is_165_unless_meant_for_one_of_its_resources() {
    let state = TestState::new().await;
    let api = "https://api.example.com/";
    let issuer_client = state
        .client(NewClient {
            resources: vec![Resource::parse(api).unwrap()],
            ..NewClient::named("front end", scopes("read write"))
        })
        .await;
    let stranger = state.default_client().await;
    let subject = signed_in(&state, &issuer_client).await;
    assert_eq!(
        code(exchange(&state, &stranger, &subject.access_token, &[]).await),
        ErrorCode::SubjectTokenInvalid
    );

    let resource_server = state
        .client(NewClient {
            resources: vec![Resource::parse(api).unwrap()],
            ..NewClient::named("the API", scopes("read write"))
        })
        .await;
    let for_the_api = token(
        &state,
        &issuer_client,
        &[
            ("grant_type", "password"),
            ("username", "exchange.user@example.com"),
            ("password", "a password"),
            ("resource", api),
        ],
    )
    .await
    .expect("a token for the API");
    exchange(&state, &resource_server, &for_the_api.access_token, &[])
        .await
        .expect("the API may exchange a token meant for it");
}

#[tokio::test]
async fn an_unknown_or_expired_subject_token_is_165() {
    let state = TestState::new().await;
    let client = state.default_client().await;
    let subject = signed_in(&state, &client).await;
    assert_eq!(
        code(exchange(&state, &client, "not-a-token", &[]).await),
        ErrorCode::SubjectTokenInvalid
    );
    state.advance(3601);
    assert_eq!(
        code(exchange(&state, &client, &subject.access_token, &[]).await),
        ErrorCode::SubjectTokenInvalid
    );
}

#[tokio::test]
async fn nothing_widens_beyond_the_clients_scopes_or_what_was_granted() {
    let state = TestState::new().await;
    let api = "https://api.example.com/";
    let front = state
        .client(NewClient::named("front end", scopes("read write")))
        .await;
    let resource_server = state
        .client(NewClient {
            resources: vec![Resource::parse(api).unwrap()],
            ..NewClient::named("the API", scopes("read"))
        })
        .await;
    state.user("exchange.user@example.com", "a password").await;
    let subject = token(
        &state,
        &front,
        &[
            ("grant_type", "password"),
            ("username", "exchange.user@example.com"),
            ("password", "a password"),
            ("scope", "read write"),
            ("resource", api),
        ],
    )
    .await
    .expect("a token for the API");
    let held = &subject.access_token;
    assert_eq!(
        code(exchange(&state, &resource_server, held, &[("scope", "write")]).await),
        ErrorCode::ScopeExceedsGrant
    );
    let elsewhere = [("resource", "https://elsewhere.example.com/")];
    assert_eq!(
        code(exchange(&state, &resource_server, held, &elsewhere).await),
        ErrorCode::InvalidTarget
    );
    let exchanged = exchange(&state, &resource_server, held, &[])
        .await
        .expect("exchanged");
    assert_eq!(exchanged.access.scopes, scopes("read"));
    assert_eq!(exchanged.access.audience, subject.access.audience);
    assert_eq!(exchanged.access.exchanged_from, vec![subject.access.jti]);
}
