//! A `client_credentials` request whose signing key is held in a KMS that does not answer.

use std::sync::Arc;

use p256::pkcs8::DecodePrivateKey;

use crate::clock::{Clock, ManualClock};
use crate::random::OsRandom;
use crate::signing::document::{generate_key, public_coordinates};
use crate::signing::{kms, ring, KeyRing, KeyRingDocument};
use crate::store::sqlite::SqliteStore;

/// A KMS-held active key whose KMS does not answer (nothing listens at its endpoint): the
/// token request fails with a server error worth a retry (503) whose message and logged detail
/// say signing failed, not the store (which answered: the client was read and nothing else was
/// written). The 503 body itself is `token-http`'s, the same for every server failure.
#[tokio::test]
async fn a_token_kms_cannot_sign_answers_503_naming_signing_not_the_store() {
    use crate::auth::dpop::DpopRequest;
    use crate::context::Context;
    use crate::domain::NewClient;
    use crate::domain::{ClientId, ClientSecrets, Geolocation, Scopes};
    use crate::errors::Refusal;
    use crate::jwt::AccessTokenCodec;
    use crate::random::RandomExt;
    use crate::requests::TokenRequest;
    use crate::secrets::TokenHash;
    use crate::services::Services;

    let clock = Arc::new(ManualClock::new(1_700_000_000));
    let key = generate_key(&OsRandom, clock.now());
    let public = p256::SecretKey::from_pkcs8_pem(&key.private_key_pem)
        .unwrap()
        .public_key();
    let (x, y) = public_coordinates(&public);
    let ring_document = ring::RingDocument {
        keys: vec![ring::RingKey {
            kid: key.kid,
            state: ring::KeyState::Active,
            created: clock.now(),
            activated: Some(clock.now()),
            retired: None,
            x,
            y,
            private: ring::PrivateKey::Kms {
                key_arn: "arn:aws:kms:us-east-1:000000000000:key/test".to_owned(),
            },
        }],
    };
    let kms: kms::Kms = Arc::new(kms::UnreachableKms);
    let mut secret_document = KeyRingDocument::default();
    secret_document.rotate(&OsRandom, clock.as_ref());
    let server_secret = secret_document.server_secret().unwrap();
    let keys = KeyRing::from_ring(
        &ring_document,
        Arc::new(server_secret),
        Some(&kms),
        clock.now(),
    )
    .unwrap();

    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open_in_dir(dir.path()).unwrap());
    let ctx = Context::new(store).with_clock(clock.clone());
    let codec = AccessTokenCodec::new(
        Arc::new(keys),
        Geolocation::parse("https://us.api.example.com").unwrap(),
    );
    let services = Arc::new(Services::new(ctx, codec, Default::default()));
    let secret = "a-client-secret-for-this-test";
    let client = NewClient::named("app", Scopes::parse("read").unwrap()).into_client(
        ClientId::new(OsRandom.uuid()),
        ClientSecrets::from_single_hash(TokenHash::of(secret)),
        clock.now(),
    );
    services
        .ctx
        .store
        .clients()
        .put_client(&client)
        .await
        .unwrap();

    let id = client.id.to_string();
    let request = TokenRequest::parse(
        [
            ("grant_type", "client_credentials"),
            ("client_id", id.as_str()),
            ("client_secret", secret),
        ],
        None,
    )
    .unwrap();
    let outcome =
        crate::grants::token_grant(&services, request, None, &DpopRequest::default()).await;
    let Err(Refusal::Server(failure)) = outcome else {
        panic!("expected a server failure");
    };
    assert!(failure.is_unavailable(), "{failure:?}");
    let message = failure.public_message();
    assert!(message.contains("signing"), "{message}");
    assert!(!message.contains("store"), "{message}");
    let detail = failure.to_string();
    assert!(detail.contains("signing unavailable"), "{detail}");
    assert!(!detail.contains("store"), "{detail}");
}

/// The application token over a [`TestState`](crate::test_state::TestState): what is issued
/// and stored, and the refusals.
mod over_test_state {
    use crate::domain::{GrantType, NewClient, PrincipalType};
    use crate::errors::ErrorCode;
    use crate::grants::testing::{code, token};
    use crate::test_state::{scopes, TestState};

    #[tokio::test]
    async fn an_application_token_is_issued_and_its_jti_stored_without_refresh_or_id_token() {
        let state = TestState::new().await;
        let client = state.default_client().await;

        let issued = token(
            &state,
            &client,
            &[("grant_type", "client_credentials"), ("scope", "read")],
        )
        .await
        .expect("issued");

        assert!(issued.refresh.is_none());
        assert!(issued.id_token.is_none());
        assert_eq!(issued.access.principal_type, PrincipalType::Application);
        assert_eq!(issued.access.scopes, scopes("read"));
        assert_eq!(issued.access.expires_at, state.now() + 3600);
        let stored = state
            .store()
            .families()
            .get_access_token(&issued.access.jti, state.now())
            .await
            .unwrap()
            .expect("the jti is stored");
        assert_eq!(stored.client_id, client.client.id);
        // Expiry by the clock: the record reads as absent after its hour.
        state.advance(3600);
        assert!(state
            .store()
            .families()
            .get_access_token(&issued.access.jti, state.now())
            .await
            .unwrap()
            .is_none());
    }

    #[tokio::test]
    async fn a_scope_beyond_the_clients_is_54_and_a_client_without_the_grant_60() {
        let state = TestState::new().await;
        let client = state.default_client().await;
        assert_eq!(
            code(
                token(
                    &state,
                    &client,
                    &[("grant_type", "client_credentials"), ("scope", "admin")],
                )
                .await
            ),
            ErrorCode::ScopeExceedsGrant
        );
        let without = state
            .client(NewClient {
                grants: [GrantType::Password].into(),
                ..NewClient::named("no client credentials", scopes("read"))
            })
            .await;
        assert_eq!(
            code(token(&state, &without, &[("grant_type", "client_credentials")]).await),
            ErrorCode::UnsupportedGrant
        );
    }

    #[tokio::test]
    async fn a_wrong_secret_is_refused_before_anything_is_issued() {
        let state = TestState::new().await;
        let mut client = state.default_client().await;
        client.secret = "not-the-secret".to_owned();
        assert_eq!(
            code(token(&state, &client, &[("grant_type", "client_credentials")]).await),
            ErrorCode::IncorrectClientSecret
        );
    }
}
