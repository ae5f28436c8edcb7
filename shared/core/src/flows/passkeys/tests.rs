//! The ceremonies end to end in process, with a software authenticator producing real answers:
//! a passkey added and used, and every refusal of a sign-in (replayed or expired challenge,
//! unknown or removed credential, wrong origin, wrong RP ID, a registration answer posted as a
//! sign-in).

use std::sync::Arc;

use serde_json::Value;
use url::Url;
use webauthn_authenticator_rs::softpasskey::SoftPasskey;
use webauthn_authenticator_rs::WebauthnAuthenticator;
use webauthn_rs::prelude::{CreationChallengeResponse, RequestChallengeResponse};

use super::*;
use crate::clock::ManualClock;
use crate::context::Context;
use crate::domain::audit::AuditSubject;
use crate::domain::{Geolocation, SessionLimits, SessionOrigin};
use crate::jwt::AccessTokenCodec;
use crate::random::OsRandom;
use crate::signing::KeyRing;
use crate::store::sqlite::SqliteStore;
use crate::store::AuditQuery;

const ORIGIN: &str = "https://eu.example.com";

struct Fixture {
    services: Services,
    clock: Arc<ManualClock>,
    session: SignInSession,
    authenticator: SoftPasskey,
    _dir: tempfile::TempDir,
}

async fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open_in_dir(dir.path()).unwrap();
    let clock = Arc::new(ManualClock::new(1_800_000_000));
    let ctx = Context::new(Arc::new(store)).with_clock(clock.clone());
    let keys = Arc::new(KeyRing::generate(&OsRandom, clock.as_ref()));
    let geolocation = Geolocation::parse(ORIGIN).unwrap();
    let codec = AccessTokenCodec::new(keys, geolocation.clone());
    let services = Services::new(ctx, codec, Default::default());
    let mut user = token_store_conformance::records::user(1_800_000_000, "pat");
    user.geolocation = geolocation;
    services
        .ctx
        .store
        .principals()
        .insert_user(&user)
        .await
        .unwrap();
    let session = SignInSession::start(
        user.id,
        PASSKEY_AMR,
        SessionOrigin::default(),
        SessionLimits::DEFAULT,
        &OsRandom,
        1_800_000_000,
    )
    .session;
    Fixture {
        services,
        clock,
        session,
        authenticator: SoftPasskey::new(true),
        _dir: dir,
    }
}

fn origin(text: &str) -> Url {
    Url::parse(text).unwrap()
}

/// The software authenticator keeps no resident keys: it is given the options without that
/// requirement (the server's state does not depend on it).
fn creation_options(start: &CeremonyStart) -> CreationChallengeResponse {
    let mut options = start.options.clone();
    let selection = &mut options["publicKey"]["authenticatorSelection"];
    selection["requireResidentKey"] = Value::Bool(false);
    selection["residentKey"] = Value::String("discouraged".into());
    serde_json::from_value(options).unwrap()
}

/// Discoverable options name no credential, and the software authenticator finds its key only
/// by one: the test names it, as the browser's credential picker would choose it.
fn request_options(
    start: &CeremonyStart,
    credential_id: &str,
    rp_id: Option<&str>,
) -> RequestChallengeResponse {
    let mut options = start.options.clone();
    options["publicKey"]["allowCredentials"] =
        serde_json::json!([{ "type": "public-key", "id": credential_id }]);
    if let Some(rp_id) = rp_id {
        options["publicKey"]["rpId"] = Value::String(rp_id.into());
    }
    serde_json::from_value(options).unwrap()
}

impl Fixture {
    async fn add_passkey(&mut self) -> PasskeyCredential {
        let start = registration_options(&self.services, &self.session)
            .await
            .unwrap();
        let answer = self
            .authenticator
            .do_registration(origin(ORIGIN), creation_options(&start))
            .unwrap();
        let answer = serde_json::to_string(&answer).unwrap();
        add(
            &self.services,
            &self.session,
            &start.ceremony,
            &answer,
            " Laptop ",
        )
        .await
        .unwrap()
    }

    /// A sign-in answer from `at`, the browser's origin, for the RP ID `rp_id` (the server's own
    /// when `None`), carrying `user_handle`.
    async fn answer(
        &mut self,
        credential_id: &str,
        at: &str,
        rp_id: Option<&str>,
    ) -> (String, String) {
        let start = authentication_options(&self.services).await.unwrap();
        let mut answer = self
            .authenticator
            .do_authentication(origin(at), request_options(&start, credential_id, rp_id))
            .unwrap();
        answer.response.user_handle = Some(self.session.principal_id.as_uuid().as_bytes().to_vec());
        (start.ceremony, serde_json::to_string(&answer).unwrap())
    }

    async fn refusals(&self) -> Vec<PasskeyRefusal> {
        let query = AuditQuery {
            subject: AuditSubject::Principal(self.session.principal_id),
            since: None,
            now: self.services.ctx.clock.now(),
        };
        let events = self
            .services
            .ctx
            .store
            .audit()
            .audit_events(query)
            .await
            .unwrap();
        let mut reasons: Vec<_> = events
            .into_iter()
            .filter_map(|event| match event.kind {
                AuditKind::PasskeyRefused { reason } => Some(reason),
                _ => None,
            })
            .collect();
        reasons.reverse();
        reasons
    }
}

fn refused(result: Result<User, PasskeyError>) -> PasskeyRefusal {
    match result {
        Err(Refusal::Denied(PasskeyDenial::SignIn(reason))) => reason,
        other => panic!("expected a refused sign-in, got {other:?}"),
    }
}

#[tokio::test]
async fn a_passkey_is_added_named_used_once_per_challenge_and_counted() {
    let mut f = fixture().await;
    let added = f.add_passkey().await;
    assert_eq!(added.name, "Laptop");
    assert_eq!(
        list(&f.services, &f.session.principal_id).await.unwrap(),
        vec![added.clone()]
    );

    let (ceremony, answer) = f.answer(&added.credential_id, ORIGIN, None).await;
    f.clock.advance(10);
    let user = authenticate(&f.services, &ceremony, &answer).await.unwrap();
    assert_eq!(user.id, f.session.principal_id);
    let used = f
        .services
        .ctx
        .store
        .passkeys()
        .get_passkey(&user.id, &added.credential_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(used.last_used_at, Some(1_800_000_010));
    assert_ne!(used.passkey, added.passkey, "the counter moved");

    // The same answer again: its ceremony was taken by the first.
    assert_eq!(
        refused(authenticate(&f.services, &ceremony, &answer).await),
        PasskeyRefusal::Ceremony
    );
    assert_eq!(
        f.refusals().await,
        vec![],
        "an unknown ceremony names no user"
    );
}

#[tokio::test]
async fn an_expired_challenge_is_refused() {
    let mut f = fixture().await;
    let added = f.add_passkey().await;
    let (ceremony, answer) = f.answer(&added.credential_id, ORIGIN, None).await;
    f.clock.advance(PASSKEY_CEREMONY_TTL_SECONDS);
    assert_eq!(
        refused(authenticate(&f.services, &ceremony, &answer).await),
        PasskeyRefusal::Ceremony
    );
}

#[tokio::test]
async fn an_unknown_or_removed_credential_is_refused() {
    let mut f = fixture().await;
    let added = f.add_passkey().await;
    let (ceremony, answer) = f.answer(&added.credential_id, ORIGIN, None).await;
    assert!(
        remove(&f.services, &f.session.principal_id, &added.credential_id)
            .await
            .unwrap()
    );
    assert!(
        !remove(&f.services, &f.session.principal_id, &added.credential_id)
            .await
            .unwrap()
    );
    assert_eq!(
        refused(authenticate(&f.services, &ceremony, &answer).await),
        PasskeyRefusal::UnknownCredential
    );

    // Another user's handle with this credential id: no such passkey either.
    let mut other = fixture().await;
    let theirs = other.add_passkey().await;
    let (ceremony, answer) = other.answer(&theirs.credential_id, ORIGIN, None).await;
    let mut answer: Value = serde_json::from_str(&answer).unwrap();
    answer["response"]["userHandle"] = Value::String(base64::Engine::encode(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        f.session.principal_id.as_uuid().as_bytes(),
    ));
    let forged = authenticate(&other.services, &ceremony, &answer.to_string()).await;
    assert_eq!(refused(forged), PasskeyRefusal::UnknownCredential);
}

#[tokio::test]
async fn an_answer_for_another_rp_id_is_refused() {
    let mut f = fixture().await;
    let added = f.add_passkey().await;
    // A parent domain the browser would allow this origin to use: the authenticator signs its
    // hash, which is not the server's RP ID's.
    let (ceremony, answer) = f
        .answer(&added.credential_id, ORIGIN, Some("example.com"))
        .await;
    assert_eq!(
        refused(authenticate(&f.services, &ceremony, &answer).await),
        PasskeyRefusal::Invalid
    );
    assert_eq!(
        f.refusals().await,
        vec![PasskeyRefusal::Invalid],
        "audited with the user"
    );
}

#[tokio::test]
async fn an_answer_from_another_origin_is_refused() {
    let mut f = fixture().await;
    let added = f.add_passkey().await;
    // The RP ID is the server's, but the browser was on another host under it (a subdomain an
    // attacker may control): the signed client data names that origin.
    let start = authentication_options(&f.services).await.unwrap();
    let mut phished = f
        .authenticator
        .do_authentication(
            origin("https://login.eu.example.com"),
            request_options(&start, &added.credential_id, None),
        )
        .unwrap();
    phished.response.user_handle = Some(f.session.principal_id.as_uuid().as_bytes().to_vec());
    let phished = serde_json::to_string(&phished).unwrap();
    assert_eq!(
        refused(authenticate(&f.services, &start.ceremony, &phished).await),
        PasskeyRefusal::Invalid
    );
}

#[tokio::test]
async fn registration_state_is_not_a_sign_in_and_a_sign_in_is_not_a_registration() {
    let mut f = fixture().await;
    let added = f.add_passkey().await;
    let registration = registration_options(&f.services, &f.session).await.unwrap();
    let (_, answer) = f.answer(&added.credential_id, ORIGIN, None).await;
    assert_eq!(
        refused(authenticate(&f.services, &registration.ceremony, &answer).await),
        PasskeyRefusal::Ceremony
    );
    let sign_in = authentication_options(&f.services).await.unwrap();
    let added_again = add(&f.services, &f.session, &sign_in.ceremony, "{}", "x").await;
    assert!(matches!(
        added_again,
        Err(Refusal::Denied(PasskeyDenial::Registration(
            PasskeyRefusal::Ceremony
        )))
    ));
}

#[tokio::test]
async fn passkeys_are_renamed_and_names_checked() {
    let mut f = fixture().await;
    let added = f.add_passkey().await;
    let user = f.session.principal_id;
    assert!(rename(&f.services, &user, &added.credential_id, "Phone")
        .await
        .unwrap());
    assert!(!rename(&f.services, &user, "unknown", "Phone")
        .await
        .unwrap());
    assert!(matches!(
        rename(&f.services, &user, &added.credential_id, "  ").await,
        Err(Refusal::Denied(PasskeyDenial::NoName))
    ));
    assert_eq!(list(&f.services, &user).await.unwrap()[0].name, "Phone");
}

#[test]
fn the_rp_id_defaults_to_the_geolocation_host_and_must_fit_the_origin() {
    let geolocation = Geolocation::parse("https://eu.example.com:8443/base").unwrap();
    assert_eq!(default_rp_id(&geolocation), "eu.example.com");
    assert!(RelyingParty::new("example.com", "https://eu.example.com:8443/base").is_ok());
    assert!(RelyingParty::new("other.example", "https://eu.example.com").is_err());
    assert!(RelyingParty::new("localhost", "http://localhost:8080").is_ok());
}

#[tokio::test]
async fn without_a_usable_rp_id_passkeys_are_refused_not_failed() {
    let f = fixture().await;
    let local = Services::new(
        f.services.ctx.clone(),
        AccessTokenCodec::new(
            Arc::new(KeyRing::generate(&OsRandom, f.clock.as_ref())),
            Geolocation::parse("http://127.0.0.1:8080").unwrap(),
        ),
        Default::default(),
    );
    assert!(matches!(
        authentication_options(&local).await,
        Err(Refusal::Denied(PasskeyDenial::Unavailable))
    ));
    assert!(matches!(
        registration_options(&local, &f.session).await,
        Err(Refusal::Denied(PasskeyDenial::Unavailable))
    ));
}
