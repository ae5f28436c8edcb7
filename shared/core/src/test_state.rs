//! The unit tests' in-process service: [`Services`] over a SQLite file of its own (a temporary
//! directory, opened as the binaries open a store) and a [`ManualClock`], so that a test calls
//! a grant or a flow directly, moves time instead of sleeping, and reads back what was stored.
//!
//! Built from the crate's own parts only (no HTTP, no `tests/support`), and importing neither
//! `grants` nor `flows`, so that both may use it without an import cycle
//! (`infra/check-layers.py`).

use std::sync::Arc;

use tempfile::TempDir;

use crate::clock::{Clock, ManualClock, UnixTime};
use crate::config::Policy;
use crate::context::Context;
use crate::domain::audit::{AuditEvent, AuditKind, AuditSubject, StartedBy};
use crate::domain::{
    Client, ClientId, ClientSecrets, Family, FamilyId, Geolocation, Login, NewClient, PrincipalId,
    PrincipalType, RefreshTokenRecord, Scopes, User, UserStatus,
};
use crate::issuance::{FamilyStart, IssuedRefresh};
use crate::jwt::AccessTokenCodec;
use crate::random::{OsRandom, RandomExt};
use crate::secrets::{PasswordHash, Secret, TokenHash};
use crate::services::Services;
use crate::signing::KeyRing;
use crate::store::{AuditQuery, Store, StoreKind, StoreLocation};

/// Where the clock starts: a fixed instant, so that expiries are the same on every run.
pub const START: UnixTime = 1_700_000_000;

/// This deployment's geolocation.
pub const GEOLOCATION: &str = "https://us.api.example.com";

/// A client as the harness registered it, with the secret it authenticates with.
#[derive(Debug, Clone)]
pub struct TestClient {
    pub client: Client,
    pub secret: String,
}

impl TestClient {
    /// The `client_id` and `client_secret` body parameters of a token request.
    pub fn credentials(&self) -> [(&'static str, String); 2] {
        [
            ("client_id", self.client.id.to_string()),
            ("client_secret", self.secret.clone()),
        ]
    }
}

/// Services over a fresh SQLite file and a manual clock.
pub struct TestState {
    pub services: Arc<Services>,
    pub clock: Arc<ManualClock>,
    // Kept for the store's lifetime: dropping it deletes the file.
    _dir: TempDir,
}

impl TestState {
    /// The default policy (`Policy::default()`), at [`START`].
    pub async fn new() -> Self {
        Self::with_policy(Policy::default()).await
    }

    pub async fn with_policy(policy: Policy) -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let store = crate::store::open(&StoreLocation {
            kind: StoreKind::Sqlite,
            data_dir: dir.path().to_owned(),
            table_name: String::new(),
            dynamodb_endpoint: None,
        })
        .await
        .expect("a SQLite store in a temporary directory");
        let clock = Arc::new(ManualClock::new(START));
        let ctx = Context::new(store).with_clock(clock.clone());
        let keys = KeyRing::generate(ctx.random.as_ref(), clock.as_ref());
        let codec = AccessTokenCodec::new(Arc::new(keys), Self::geolocation());
        Self {
            services: Arc::new(Services::new(ctx, codec, policy)),
            clock,
            _dir: dir,
        }
    }

    pub fn geolocation() -> Geolocation {
        Geolocation::parse(GEOLOCATION).expect("a valid geolocation")
    }

    pub fn store(&self) -> &dyn Store {
        self.services.ctx.store.as_ref()
    }

    pub fn now(&self) -> UnixTime {
        self.clock.now()
    }

    /// Moves the clock forward.
    pub fn advance(&self, seconds: i64) {
        self.clock.advance(seconds);
    }

    /// Registers `client` with a random secret of its own.
    pub async fn client(&self, client: NewClient) -> TestClient {
        let secret = OsRandom.opaque_token();
        let client = client.into_client(
            ClientId::new(OsRandom.uuid()),
            ClientSecrets::from_single_hash(TokenHash::of(&secret)),
            self.now(),
        );
        self.store()
            .clients()
            .put_client(&client)
            .await
            .expect("client stored");
        TestClient { client, secret }
    }

    /// A client with every grant, refresh allowed, scopes `read write`, rotating its refresh
    /// tokens.
    pub async fn default_client(&self) -> TestClient {
        self.client(NewClient::named("test client", scopes("read write")))
            .await
    }

    /// An active user of this deployment whose password is `password` (Argon2id hashed, as a
    /// real one is).
    pub async fn user(&self, login: &str, password: &str) -> User {
        let user = User {
            id: PrincipalId::new(OsRandom.uuid()),
            login: Login::parse(login).expect("a valid login"),
            password_hash: PasswordHash::new(password, &OsRandom),
            company_id: None,
            is_admin: false,
            geolocation: Self::geolocation(),
            status: UserStatus::Active,
            created_at: self.now(),
            email: None,
            local_sign_in: false,
            directory: None,
            revision: 0,
            deprovisioned_at: None,
            external_id: None,
        };
        self.store()
            .principals()
            .insert_user(&user)
            .await
            .expect("user stored");
        user
    }

    /// Starts a family of `user` for `client` with `scopes`, as a password grant would: its
    /// first refresh token.
    pub async fn family(&self, client: &Client, user: &User, scopes_text: &str) -> IssuedRefresh {
        self.services
            .issuer()
            .start_family(FamilyStart {
                client_id: client.id,
                principal_type: PrincipalType::User,
                principal_id: user.id,
                scopes: scopes(scopes_text),
                geolocation: user.geolocation.clone(),
                jkt: None,
                grant: StartedBy::Password,
                auth_time: Some(self.now()),
                sid: None,
                amr: Vec::new(),
                idp: None,
                issued_by: None,
                resources: Vec::new(),
                audience: Vec::new(),
            })
            .await
            .expect("family started")
            .refresh
    }

    /// The family as stored now (`None` once expired or forgotten).
    pub async fn stored_family(&self, id: &FamilyId) -> Option<Family> {
        self.store()
            .families()
            .get_family(id, self.now())
            .await
            .expect("store read")
    }

    /// The record of the refresh token `token`, as stored now, if it has one (a token naming
    /// its family is found through the family instead: [`Self::stored_family`]).
    pub async fn stored_refresh_token(&self, token: &Secret) -> Option<RefreshTokenRecord> {
        self.store()
            .families()
            .get_refresh_token(&token.hash(), self.now())
            .await
            .expect("store read")
    }

    /// The audit events filed under `subject`, newest first.
    pub async fn audit_events(&self, subject: AuditSubject) -> Vec<AuditEvent> {
        self.store()
            .audit()
            .audit_events(AuditQuery {
                subject,
                since: None,
                now: self.now(),
            })
            .await
            .expect("store read")
    }

    /// The kinds of the audit events filed under `subject`, oldest first.
    pub async fn audit_kinds(&self, subject: AuditSubject) -> Vec<AuditKind> {
        let mut kinds: Vec<AuditKind> = self
            .audit_events(subject)
            .await
            .into_iter()
            .map(|event| event.kind)
            .collect();
        kinds.reverse();
        kinds
    }
}

pub fn scopes(text: &str) -> Scopes {
    Scopes::parse(text).expect("valid scopes")
}
