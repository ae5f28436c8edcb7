//! The conformance suite every backend must pass.
//!
//! Plain async functions, each taking a fresh store and panicking with a message that says which
//! rule of the [`Store`] contract was broken. A backend's test module runs them all with
//! [`conformance_suite!`](crate::conformance_suite), so every backend is held to the same list.
//!
//! Timestamps are real (`SystemClock`) and expiries are relative to them, because DynamoDB Local
//! may look at TTL attributes; ids are random, so the functions never depend on a store being
//! empty.

use std::collections::HashSet;
use std::sync::Arc;

use futures::stream::{self, StreamExt};

use crate::clock::{Clock, SystemClock, UnixTime};
use crate::domain::{
    AccessTokenRecord, AuthToken, Client, ClientId, Company, CompanyStatus, ConsumerKey, Family,
    FamilyId, Geolocation, GrantType, LegacyApp, LegacyExchange, LegacyToken, Login, PrincipalId,
    PrincipalType, RefreshTokenRecord, Scopes, TokenId, User, UserStatus, ACCESS_TOKEN_TTL_SECONDS,
    AUTH_TOKEN_TTL_SECONDS,
};
use crate::random::{OsRandom, RandomExt};
use crate::secrets::{PasswordHash, TokenHash};
use crate::store::{
    FamilyCreated, Inserted, LegacyExchangeUpdate, NewFamily, Rotated, Rotation, Store,
};

/// Expands to one `#[tokio::test]` per suite function, named after it, each calling the suite
/// function with a store from `$factory`: a path to an `async fn` returning `Arc<dyn Store>`,
/// or `Option<Arc<dyn Store>>` where `None` means the backend was explicitly opted out.
///
/// Every `pub async fn` of this module must be listed here; the unit test
/// `every_suite_function_is_registered` enforces it.
#[macro_export]
macro_rules! conformance_suite {
    ($factory:path) => {
        $crate::conformance_suite!(@tests $factory;
            client_round_trip_and_replace,
            user_round_trip_and_case_insensitive_login,
            duplicate_user_id_or_login_is_rejected,
            company_round_trip_and_client_enablement,
            legacy_app_round_trip_and_relink,
            legacy_token_round_trip_and_replace,
            legacy_tokens_repeated_within_one_import_are_written_once,
            legacy_tokens_batch_import_of_10000_loses_nothing,
            auth_token_is_reusable_for_24_hours,
            family_refresh_and_access_records_round_trip,
            application_access_token_round_trip,
            expired_items_read_as_absent,
            rotation_replaces_current_token,
            rotation_with_non_current_token_writes_nothing,
            rotation_of_revoked_or_expired_family_is_refused,
            rotation_has_exactly_one_winner_of_20,
            revoke_family_revokes_its_tokens,
            legacy_exchange_link_moves_only_from_the_seen_family,
            concurrent_first_legacy_exchanges_have_one_winner,
            failed_logins_are_counted_within_the_window,
        );
    };
    (@tests $factory:path; $($name:ident),+ $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $name() {
                // A factory returns the store, or `None` when its backend was explicitly
                // opted out (and has said so); `Option<T>: From<T>` accepts both.
                let store: ::std::option::Option<::std::sync::Arc<dyn $crate::store::Store>> =
                    $factory().await.into();
                if let ::std::option::Option::Some(store) = store {
                    $crate::store::conformance::$name(store).await;
                }
            }
        )+
    };
}

// ---------------------------------------------------------------------------------------------
// Builders. Everything random, so suite functions may share a store without colliding.

fn now() -> UnixTime {
    SystemClock.now()
}

fn geolocation() -> Geolocation {
    Geolocation::parse("https://us.api.example.com").expect("valid geolocation")
}

fn scopes(text: &str) -> Scopes {
    Scopes::parse(text).expect("valid scopes")
}

fn random_hash() -> TokenHash {
    TokenHash::of(&OsRandom.opaque_token())
}

fn client(now: UnixTime) -> Client {
    Client {
        id: ClientId::new(OsRandom.uuid()),
        name: "conformance client".into(),
        secret_hash: random_hash(),
        allowed_scopes: scopes("read write"),
        grants: GrantType::ALL.into_iter().collect(),
        connect_url: Some("https://app.example.com/connect".into()),
        refresh_allowed: true,
        enabled: true,
        created_at: now,
    }
}

fn user(now: UnixTime, login: &str) -> User {
    User {
        id: PrincipalId::new(OsRandom.uuid()),
        login: Login::parse(login).expect("valid login"),
        // A fixed PHC string: hashing a real password would only slow the suite down.
        password_hash: PasswordHash::from_phc(
            "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA".into(),
        ),
        company_id: None,
        is_admin: false,
        geolocation: geolocation(),
        status: UserStatus::Active,
        created_at: now,
    }
}

/// A login no other call of the suite uses, in mixed case.
fn unique_login() -> String {
    format!("Conformance.User-{}@Example.COM", OsRandom.uuid().simple())
}

fn company(now: UnixTime) -> Company {
    Company {
        id: PrincipalId::new(OsRandom.uuid()),
        name: "Conformance Inc.".into(),
        geolocation: geolocation(),
        status: CompanyStatus::Active,
        created_at: now,
    }
}

fn consumer_key() -> ConsumerKey {
    ConsumerKey::parse(&format!("qyprd-{}", OsRandom.uuid().simple())).expect("valid key")
}

fn legacy_token(expires_at: Option<UnixTime>) -> LegacyToken {
    LegacyToken {
        token_hash: random_hash(),
        consumer_key: consumer_key(),
        principal_type: PrincipalType::Company,
        principal_id: PrincipalId::new(OsRandom.uuid()),
        scopes: scopes("accounting payroll"),
        wsadmin: true,
        company_id: Some(PrincipalId::new(OsRandom.uuid())),
        expires_at,
    }
}

fn access_token(
    now: UnixTime,
    client_id: ClientId,
    family_id: Option<FamilyId>,
    expires_at: UnixTime,
) -> AccessTokenRecord {
    AccessTokenRecord {
        jti: TokenId::new(OsRandom.uuid()),
        client_id,
        principal_type: if family_id.is_some() {
            PrincipalType::User
        } else {
            PrincipalType::Application
        },
        subject: OsRandom.uuid(),
        family_id,
        scopes: scopes("read"),
        issued_at: now,
        expires_at,
        revoked: false,
    }
}

/// A family with its first refresh token and first access token, none of them written yet.
struct Bundle {
    family: Family,
    refresh: RefreshTokenRecord,
    access: AccessTokenRecord,
}

impl Bundle {
    /// The family and its refresh token expire at `expires_at`; the access token in an hour
    /// or at `expires_at`, whichever is first.
    fn new(now: UnixTime, expires_at: UnixTime) -> Self {
        let client_id = ClientId::new(OsRandom.uuid());
        let family_id = FamilyId::new(OsRandom.uuid());
        let refresh = RefreshTokenRecord {
            token_hash: random_hash(),
            family_id,
            client_id,
            generation: 0,
            issued_at: now,
            expires_at,
            rotated_at: None,
        };
        let family = Family {
            id: family_id,
            client_id,
            principal_type: PrincipalType::User,
            principal_id: PrincipalId::new(OsRandom.uuid()),
            scopes: scopes("read write"),
            geolocation: geolocation(),
            current_token: refresh.token_hash.clone(),
            generation: 0,
            created_at: now,
            expires_at,
            revoked_at: None,
        };
        let access = access_token(
            now,
            client_id,
            Some(family_id),
            expires_at.min(now + ACCESS_TOKEN_TTL_SECONDS),
        );
        Self {
            family,
            refresh,
            access,
        }
    }

    fn live(now: UnixTime) -> Self {
        Self::new(now, now + 180 * 86_400)
    }

    fn new_family(&self) -> NewFamily<'_> {
        NewFamily {
            family: &self.family,
            refresh_token: &self.refresh,
            access_token: &self.access,
            legacy_exchange: None,
        }
    }

    async fn create(&self, store: &dyn Store) {
        let created = store
            .create_family(self.new_family())
            .await
            .expect("create_family");
        assert_eq!(
            created,
            FamilyCreated::Created,
            "create_family without a legacy exchange always creates"
        );
    }

    /// The successor of the family's current token at `now`, and the access token minted with
    /// it, neither written yet.
    fn successor(&self, now: UnixTime, generation: u32) -> (RefreshTokenRecord, AccessTokenRecord) {
        let expires_at = now + 180 * 86_400;
        let successor = RefreshTokenRecord {
            token_hash: random_hash(),
            family_id: self.family.id,
            client_id: self.family.client_id,
            generation,
            issued_at: now,
            expires_at,
            rotated_at: None,
        };
        let access = access_token(
            now,
            self.family.client_id,
            Some(self.family.id),
            now + ACCESS_TOKEN_TTL_SECONDS,
        );
        (successor, access)
    }
}

fn rotation<'a>(
    family_id: FamilyId,
    presented: &'a TokenHash,
    successor: &'a RefreshTokenRecord,
    access_token: &'a AccessTokenRecord,
    now: UnixTime,
) -> Rotation<'a> {
    Rotation {
        family_id,
        presented,
        successor,
        access_token,
        now,
    }
}

// ---------------------------------------------------------------------------------------------
// Entities.

pub async fn client_round_trip_and_replace(store: Arc<dyn Store>) {
    let now = now();
    let mut client = client(now);
    store.put_client(&client).await.expect("put_client");
    assert_eq!(
        store.get_client(&client.id).await.expect("get_client"),
        Some(client.clone()),
        "a client reads back as written"
    );

    client.enabled = false;
    client.connect_url = None;
    store.put_client(&client).await.expect("put_client again");
    assert_eq!(
        store.get_client(&client.id).await.expect("get_client"),
        Some(client),
        "put_client replaces the stored client"
    );

    let unknown = ClientId::new(OsRandom.uuid());
    assert_eq!(
        store.get_client(&unknown).await.expect("get_client"),
        None,
        "an unknown client is absent"
    );
}

pub async fn user_round_trip_and_case_insensitive_login(store: Arc<dyn Store>) {
    let now = now();
    let login = unique_login();
    let mut user = user(now, &login);
    user.company_id = Some(PrincipalId::new(OsRandom.uuid()));
    user.is_admin = true;
    assert_eq!(
        store.insert_user(&user).await.expect("insert_user"),
        Inserted::Inserted
    );
    assert_eq!(
        store.get_user(&user.id).await.expect("get_user"),
        Some(user.clone()),
        "a user reads back by id as written"
    );
    let other_case = Login::parse(&login.to_uppercase()).expect("valid login");
    assert_eq!(
        store
            .get_user_by_login(&other_case)
            .await
            .expect("get_user_by_login"),
        Some(user.clone()),
        "a user is found by login in any case"
    );

    user.status = UserStatus::LogonDenied;
    store.put_user(&user).await.expect("put_user");
    assert_eq!(
        store.get_user(&user.id).await.expect("get_user"),
        Some(user.clone()),
        "put_user replaces the stored user"
    );
    assert_eq!(
        store
            .get_user_by_login(&user.login)
            .await
            .expect("get_user_by_login"),
        Some(user),
        "the replaced user is still found by login"
    );

    let unknown_login = Login::parse(&unique_login()).expect("valid login");
    assert_eq!(
        store
            .get_user_by_login(&unknown_login)
            .await
            .expect("get_user_by_login"),
        None,
        "an unknown login is absent"
    );
    assert_eq!(
        store
            .get_user(&PrincipalId::new(OsRandom.uuid()))
            .await
            .expect("get_user"),
        None,
        "an unknown user id is absent"
    );
}

pub async fn duplicate_user_id_or_login_is_rejected(store: Arc<dyn Store>) {
    let now = now();
    let login = unique_login();
    let first = user(now, &login);
    assert_eq!(
        store.insert_user(&first).await.expect("insert_user"),
        Inserted::Inserted
    );

    // Same login in another case, another id.
    let same_login = user(now, &login.to_uppercase());
    assert_eq!(
        store.insert_user(&same_login).await.expect("insert_user"),
        Inserted::AlreadyExists,
        "a taken login (compared case-insensitively) is rejected"
    );
    assert_eq!(
        store.get_user(&same_login.id).await.expect("get_user"),
        None,
        "a rejected user is not written"
    );

    // Same id, another login.
    let mut same_id = user(now, &unique_login());
    same_id.id = first.id;
    assert_eq!(
        store.insert_user(&same_id).await.expect("insert_user"),
        Inserted::AlreadyExists,
        "a taken user id is rejected"
    );
    assert_eq!(
        store
            .get_user_by_login(&same_id.login)
            .await
            .expect("get_user_by_login"),
        None,
        "a user rejected for its id does not claim its login"
    );
    assert_eq!(
        store.get_user(&first.id).await.expect("get_user"),
        Some(first.clone()),
        "the first user is unchanged by rejected inserts"
    );
    assert_eq!(
        store
            .get_user_by_login(&first.login)
            .await
            .expect("get_user_by_login"),
        Some(first),
        "the first user still owns the login"
    );
}

pub async fn company_round_trip_and_client_enablement(store: Arc<dyn Store>) {
    let now = now();
    let mut company = company(now);
    store.put_company(&company).await.expect("put_company");
    assert_eq!(
        store.get_company(&company.id).await.expect("get_company"),
        Some(company.clone()),
        "a company reads back as written"
    );
    company.status = CompanyStatus::Maintenance;
    store
        .put_company(&company)
        .await
        .expect("put_company again");
    assert_eq!(
        store.get_company(&company.id).await.expect("get_company"),
        Some(company.clone()),
        "put_company replaces the stored company"
    );
    assert_eq!(
        store
            .get_company(&PrincipalId::new(OsRandom.uuid()))
            .await
            .expect("get_company"),
        None,
        "an unknown company is absent"
    );

    let enabled = ClientId::new(OsRandom.uuid());
    let other = ClientId::new(OsRandom.uuid());
    assert!(
        !store
            .is_company_enabled_for_client(&company.id, &enabled)
            .await
            .expect("is_company_enabled_for_client"),
        "a company is not enabled for a client before enable_company_for_client"
    );
    store
        .enable_company_for_client(&company.id, &enabled)
        .await
        .expect("enable_company_for_client");
    store
        .enable_company_for_client(&company.id, &enabled)
        .await
        .expect("enable_company_for_client is idempotent");
    assert!(
        store
            .is_company_enabled_for_client(&company.id, &enabled)
            .await
            .expect("is_company_enabled_for_client"),
        "an enabled company reads as enabled"
    );
    assert!(
        !store
            .is_company_enabled_for_client(&company.id, &other)
            .await
            .expect("is_company_enabled_for_client"),
        "enabling for one client does not enable for another"
    );
    assert!(
        !store
            .is_company_enabled_for_client(&PrincipalId::new(OsRandom.uuid()), &enabled)
            .await
            .expect("is_company_enabled_for_client"),
        "enabling one company does not enable another"
    );
}

pub async fn legacy_app_round_trip_and_relink(store: Arc<dyn Store>) {
    let now = now();
    let mut app = LegacyApp {
        consumer_key: consumer_key(),
        client_id: ClientId::new(OsRandom.uuid()),
        linked_at: now,
    };
    store.put_legacy_app(&app).await.expect("put_legacy_app");
    assert_eq!(
        store
            .get_legacy_app(&app.consumer_key)
            .await
            .expect("get_legacy_app"),
        Some(app.clone()),
        "a legacy app reads back as written"
    );
    app.client_id = ClientId::new(OsRandom.uuid());
    app.linked_at = now + 1;
    store
        .put_legacy_app(&app)
        .await
        .expect("put_legacy_app again");
    assert_eq!(
        store
            .get_legacy_app(&app.consumer_key)
            .await
            .expect("get_legacy_app"),
        Some(app),
        "re-linking a consumer key moves it to the new client"
    );
    assert_eq!(
        store
            .get_legacy_app(&consumer_key())
            .await
            .expect("get_legacy_app"),
        None,
        "an unknown consumer key is absent"
    );
}

pub async fn legacy_token_round_trip_and_replace(store: Arc<dyn Store>) {
    let now = now();
    let forever = legacy_token(None);
    let mut expiring = legacy_token(Some(now + 3600));
    expiring.principal_type = PrincipalType::User;
    expiring.wsadmin = false;
    expiring.company_id = None;
    store
        .put_legacy_tokens(&[forever.clone(), expiring.clone()])
        .await
        .expect("put_legacy_tokens");
    for token in [&forever, &expiring] {
        assert_eq!(
            store
                .get_legacy_token(&token.token_hash, now)
                .await
                .expect("get_legacy_token"),
            Some(token.clone()),
            "a legacy token reads back as written"
        );
    }
    assert_eq!(
        store
            .get_legacy_token(&forever.token_hash, now + 10 * 365 * 86_400)
            .await
            .expect("get_legacy_token"),
        Some(forever.clone()),
        "a legacy token without expires_at never expires"
    );

    let mut replaced = forever.clone();
    replaced.scopes = scopes("accounting");
    store
        .put_legacy_tokens(std::slice::from_ref(&replaced))
        .await
        .expect("put_legacy_tokens again");
    assert_eq!(
        store
            .get_legacy_token(&forever.token_hash, now)
            .await
            .expect("get_legacy_token"),
        Some(replaced),
        "importing a token again replaces it"
    );
    assert_eq!(
        store
            .get_legacy_token(&random_hash(), now)
            .await
            .expect("get_legacy_token"),
        None,
        "an unknown legacy token is absent"
    );
    assert_eq!(
        store
            .get_legacy_exchange(&forever.token_hash)
            .await
            .expect("get_legacy_exchange"),
        None,
        "a token never exchanged has no exchange link"
    );
    store
        .put_legacy_tokens(&[])
        .await
        .expect("importing nothing succeeds");
}

/// An import file may list a token twice; the import must neither fail nor duplicate it (a
/// DynamoDB batch write refuses two writes of one key in one request).
pub async fn legacy_tokens_repeated_within_one_import_are_written_once(store: Arc<dyn Store>) {
    let now = now();
    let tokens: Vec<LegacyToken> = (0..30).map(|_| legacy_token(None)).collect();
    let mut batch = tokens.clone();
    batch.extend(tokens.iter().take(10).cloned());
    batch.push(tokens[0].clone());
    store
        .put_legacy_tokens(&batch)
        .await
        .expect("put_legacy_tokens with repeated tokens");
    for token in &tokens {
        assert_eq!(
            store
                .get_legacy_token(&token.token_hash, now)
                .await
                .expect("get_legacy_token"),
            Some(token.clone()),
            "a token listed twice in one import is written"
        );
    }
}

pub async fn legacy_tokens_batch_import_of_10000_loses_nothing(store: Arc<dyn Store>) {
    const COUNT: usize = 10_000;
    let now = now();
    let tokens: Vec<LegacyToken> = (0..COUNT)
        .map(|i| legacy_token((i % 3 == 0).then_some(now + 86_400 + i as i64)))
        .collect();

    store
        .put_legacy_tokens(&tokens)
        .await
        .expect("put_legacy_tokens of 10,000 tokens");
    assert_all_readable(store.as_ref(), &tokens, now, "after the import").await;

    // A re-run of the same import: no failure, no change, nothing lost.
    store
        .put_legacy_tokens(&tokens)
        .await
        .expect("put_legacy_tokens re-import");
    assert_all_readable(store.as_ref(), &tokens, now, "after the re-import").await;
}

async fn assert_all_readable(store: &dyn Store, tokens: &[LegacyToken], now: UnixTime, when: &str) {
    // Concurrent reads: the trait has no batch get, and one by one is slow on DynamoDB.
    let wrong: Vec<String> = stream::iter(tokens)
        .map(|token| async move {
            let read = store
                .get_legacy_token(&token.token_hash, now)
                .await
                .expect("get_legacy_token");
            match read {
                Some(read) if &read == token => None,
                Some(_) => Some(format!("{:?} differs", token.token_hash)),
                None => Some(format!("{:?} missing", token.token_hash)),
            }
        })
        .buffer_unordered(32)
        .filter_map(|outcome| async move { outcome })
        .collect()
        .await;
    assert!(
        wrong.is_empty(),
        "{} of {} imported legacy tokens are missing or differ {when}; first: {:?}",
        wrong.len(),
        tokens.len(),
        wrong.iter().take(5).collect::<Vec<_>>()
    );
}

pub async fn auth_token_is_reusable_for_24_hours(store: Arc<dyn Store>) {
    let now = now();
    let token = AuthToken {
        token_hash: random_hash(),
        company_id: PrincipalId::new(OsRandom.uuid()),
        client_id: ClientId::new(OsRandom.uuid()),
        issued_by: PrincipalId::new(OsRandom.uuid()),
        issued_at: now,
        expires_at: now + AUTH_TOKEN_TTL_SECONDS,
    };
    store.put_auth_token(&token).await.expect("put_auth_token");
    for (at, what) in [(now, "at issue"), (now + 23 * 3600, "23 hours later")] {
        for _ in 0..2 {
            assert_eq!(
                store
                    .get_auth_token(&token.token_hash, at)
                    .await
                    .expect("get_auth_token"),
                Some(token.clone()),
                "an auth token is readable, repeatedly, {what}"
            );
        }
    }
    assert_eq!(
        store
            .get_auth_token(&token.token_hash, now + AUTH_TOKEN_TTL_SECONDS)
            .await
            .expect("get_auth_token"),
        None,
        "an auth token is absent 24 hours after issue"
    );
    assert_eq!(
        store
            .get_auth_token(&random_hash(), now)
            .await
            .expect("get_auth_token"),
        None,
        "an unknown auth token is absent"
    );
}

// ---------------------------------------------------------------------------------------------
// Families, refresh tokens, access tokens.

pub async fn family_refresh_and_access_records_round_trip(store: Arc<dyn Store>) {
    let now = now();
    let bundle = Bundle::live(now);
    bundle.create(store.as_ref()).await;

    assert_eq!(
        store
            .get_family(&bundle.family.id, now)
            .await
            .expect("get_family"),
        Some(bundle.family.clone()),
        "a family reads back as created"
    );
    assert_eq!(
        store
            .get_refresh_token(&bundle.refresh.token_hash, now)
            .await
            .expect("get_refresh_token"),
        Some(bundle.refresh.clone()),
        "the first refresh token reads back as created"
    );
    assert_eq!(
        store
            .get_access_token(&bundle.access.jti, now)
            .await
            .expect("get_access_token"),
        Some(bundle.access.clone()),
        "the first access token reads back as created, not revoked"
    );

    assert_eq!(
        store
            .get_family(&FamilyId::new(OsRandom.uuid()), now)
            .await
            .expect("get_family"),
        None,
        "an unknown family is absent"
    );
    assert_eq!(
        store
            .get_refresh_token(&random_hash(), now)
            .await
            .expect("get_refresh_token"),
        None,
        "an unknown refresh token is absent"
    );
    assert_eq!(
        store
            .get_access_token(&TokenId::new(OsRandom.uuid()), now)
            .await
            .expect("get_access_token"),
        None,
        "an unknown access token is absent"
    );
}

pub async fn application_access_token_round_trip(store: Arc<dyn Store>) {
    let now = now();
    let record = access_token(
        now,
        ClientId::new(OsRandom.uuid()),
        None,
        now + ACCESS_TOKEN_TTL_SECONDS,
    );
    store
        .put_access_token(&record)
        .await
        .expect("put_access_token");
    assert_eq!(
        store
            .get_access_token(&record.jti, now)
            .await
            .expect("get_access_token"),
        Some(record.clone()),
        "an application access token reads back as written"
    );
    assert_eq!(
        store
            .get_access_token(&record.jti, now + ACCESS_TOKEN_TTL_SECONDS - 1)
            .await
            .expect("get_access_token"),
        Some(record.clone()),
        "an access token is present until its last second"
    );
    assert_eq!(
        store
            .get_access_token(&record.jti, now + ACCESS_TOKEN_TTL_SECONDS)
            .await
            .expect("get_access_token"),
        None,
        "an access token is absent from its expires_at on"
    );
}

/// Items written with `expires_at` already past are still physically stored (DynamoDB deletes
/// late, SQLite never), and must read as absent.
pub async fn expired_items_read_as_absent(store: Arc<dyn Store>) {
    let now = now();
    let past = now - 60;

    let access = access_token(now - 7200, ClientId::new(OsRandom.uuid()), None, past);
    store
        .put_access_token(&access)
        .await
        .expect("put_access_token");
    assert_eq!(
        store
            .get_access_token(&access.jti, now)
            .await
            .expect("get_access_token"),
        None,
        "an expired access token is absent"
    );

    let auth = AuthToken {
        token_hash: random_hash(),
        company_id: PrincipalId::new(OsRandom.uuid()),
        client_id: ClientId::new(OsRandom.uuid()),
        issued_by: PrincipalId::new(OsRandom.uuid()),
        issued_at: past - AUTH_TOKEN_TTL_SECONDS,
        expires_at: past,
    };
    store.put_auth_token(&auth).await.expect("put_auth_token");
    assert_eq!(
        store
            .get_auth_token(&auth.token_hash, now)
            .await
            .expect("get_auth_token"),
        None,
        "an expired auth token is absent"
    );

    let expired = Bundle::new(now - 86_400, past);
    expired.create(store.as_ref()).await;
    assert_eq!(
        store
            .get_family(&expired.family.id, now)
            .await
            .expect("get_family"),
        None,
        "an expired family is absent"
    );
    assert_eq!(
        store
            .get_refresh_token(&expired.refresh.token_hash, now)
            .await
            .expect("get_refresh_token"),
        None,
        "an expired refresh token is absent"
    );
    assert_eq!(
        store
            .get_access_token(&expired.access.jti, now)
            .await
            .expect("get_access_token"),
        None,
        "an expired access token of a family is absent"
    );

    let legacy_expired = legacy_token(Some(past));
    let legacy_live = legacy_token(Some(now + 60));
    store
        .put_legacy_tokens(&[legacy_expired.clone(), legacy_live.clone()])
        .await
        .expect("put_legacy_tokens");
    assert_eq!(
        store
            .get_legacy_token(&legacy_expired.token_hash, now)
            .await
            .expect("get_legacy_token"),
        None,
        "an expired legacy token is absent"
    );
    assert_eq!(
        store
            .get_legacy_token(&legacy_live.token_hash, now)
            .await
            .expect("get_legacy_token"),
        Some(legacy_live.clone()),
        "a legacy token expiring later is present"
    );
    assert_eq!(
        store
            .get_legacy_token(&legacy_live.token_hash, now + 60)
            .await
            .expect("get_legacy_token"),
        None,
        "a legacy token is absent from its expires_at on"
    );

    // The same family read at two instants: present before its expiry, absent at it.
    let soon = Bundle::new(now, now + 120);
    soon.create(store.as_ref()).await;
    assert_eq!(
        store
            .get_family(&soon.family.id, now + 119)
            .await
            .expect("get_family"),
        Some(soon.family.clone()),
        "a family expiring later is present"
    );
    assert_eq!(
        store
            .get_refresh_token(&soon.refresh.token_hash, now + 119)
            .await
            .expect("get_refresh_token"),
        Some(soon.refresh.clone()),
        "a refresh token expiring later is present"
    );
    assert_eq!(
        store
            .get_family(&soon.family.id, now + 120)
            .await
            .expect("get_family"),
        None,
        "a family is absent from its expires_at on"
    );
    assert_eq!(
        store
            .get_refresh_token(&soon.refresh.token_hash, now + 120)
            .await
            .expect("get_refresh_token"),
        None,
        "a refresh token is absent from its expires_at on"
    );
}

pub async fn rotation_replaces_current_token(store: Arc<dyn Store>) {
    let now = now();
    let bundle = Bundle::live(now);
    bundle.create(store.as_ref()).await;

    let later = now + 10;
    let (successor, access) = bundle.successor(later, 1);
    let outcome = store
        .rotate_refresh_token(rotation(
            bundle.family.id,
            &bundle.refresh.token_hash,
            &successor,
            &access,
            later,
        ))
        .await
        .expect("rotate_refresh_token");
    assert_eq!(
        outcome,
        Rotated::Rotated,
        "rotating the current token works"
    );

    let family = store
        .get_family(&bundle.family.id, later)
        .await
        .expect("get_family")
        .expect("the family is present after rotation");
    assert_eq!(
        family.current_token, successor.token_hash,
        "the successor is the current token"
    );
    assert_eq!(family.generation, 1, "rotation increments the generation");
    assert_eq!(
        family.expires_at, successor.expires_at,
        "the family's expiry becomes the successor's"
    );
    assert_eq!(family.revoked_at, None, "rotation does not revoke");
    assert_eq!(
        Family {
            current_token: bundle.family.current_token.clone(),
            generation: 0,
            expires_at: bundle.family.expires_at,
            ..family
        },
        bundle.family,
        "rotation changes nothing else in the family"
    );

    let old = store
        .get_refresh_token(&bundle.refresh.token_hash, later)
        .await
        .expect("get_refresh_token")
        .expect("a rotated refresh token is still readable");
    assert_eq!(
        old.rotated_at,
        Some(later),
        "the rotated token records when it was rotated"
    );
    assert_eq!(
        RefreshTokenRecord {
            rotated_at: None,
            ..old
        },
        bundle.refresh,
        "rotation changes nothing else in the rotated token"
    );
    assert_eq!(
        store
            .get_refresh_token(&successor.token_hash, later)
            .await
            .expect("get_refresh_token"),
        Some(successor.clone()),
        "the successor reads back as written"
    );
    assert_eq!(
        store
            .get_access_token(&access.jti, later)
            .await
            .expect("get_access_token"),
        Some(access),
        "the access token minted with the rotation reads back"
    );

    // And the successor rotates in turn.
    let (third, third_access) = bundle.successor(later + 10, 2);
    assert_eq!(
        store
            .rotate_refresh_token(rotation(
                bundle.family.id,
                &successor.token_hash,
                &third,
                &third_access,
                later + 10,
            ))
            .await
            .expect("rotate_refresh_token"),
        Rotated::Rotated,
        "the successor can be rotated in turn"
    );
    let family = store
        .get_family(&bundle.family.id, later + 10)
        .await
        .expect("get_family")
        .expect("family present");
    assert_eq!(family.current_token, third.token_hash);
    assert_eq!(family.generation, 2);
}

pub async fn rotation_with_non_current_token_writes_nothing(store: Arc<dyn Store>) {
    let now = now();
    let bundle = Bundle::live(now);
    bundle.create(store.as_ref()).await;
    let (first, first_access) = bundle.successor(now, 1);
    assert_eq!(
        store
            .rotate_refresh_token(rotation(
                bundle.family.id,
                &bundle.refresh.token_hash,
                &first,
                &first_access,
                now,
            ))
            .await
            .expect("rotate_refresh_token"),
        Rotated::Rotated
    );

    // The original token again (a replay), then a token that was never issued.
    for (presented, what) in [
        (
            bundle.refresh.token_hash.clone(),
            "an already rotated token",
        ),
        (random_hash(), "an unknown token"),
    ] {
        let (second, second_access) = bundle.successor(now + 5, 2);
        assert_eq!(
            store
                .rotate_refresh_token(rotation(
                    bundle.family.id,
                    &presented,
                    &second,
                    &second_access,
                    now + 5,
                ))
                .await
                .expect("rotate_refresh_token"),
            Rotated::NotCurrent,
            "rotating {what} is refused"
        );
        assert_eq!(
            store
                .get_refresh_token(&second.token_hash, now + 5)
                .await
                .expect("get_refresh_token"),
            None,
            "a refused rotation of {what} writes no successor"
        );
        assert_eq!(
            store
                .get_access_token(&second_access.jti, now + 5)
                .await
                .expect("get_access_token"),
            None,
            "a refused rotation of {what} writes no access token"
        );
    }

    let family = store
        .get_family(&bundle.family.id, now + 5)
        .await
        .expect("get_family")
        .expect("family present");
    assert_eq!(
        (family.current_token, family.generation),
        (first.token_hash.clone(), 1),
        "refused rotations leave the family as it was"
    );
    let original = store
        .get_refresh_token(&bundle.refresh.token_hash, now + 5)
        .await
        .expect("get_refresh_token")
        .expect("rotated token still readable");
    assert_eq!(
        original.rotated_at,
        Some(now),
        "a refused rotation does not touch the presented token's rotated_at"
    );

    // The family's current token presented under another family's id.
    let other = Bundle::live(now);
    other.create(store.as_ref()).await;
    let (stray, stray_access) = other.successor(now + 5, 1);
    assert_eq!(
        store
            .rotate_refresh_token(rotation(
                other.family.id,
                &first.token_hash,
                &stray,
                &stray_access,
                now + 5,
            ))
            .await
            .expect("rotate_refresh_token"),
        Rotated::NotCurrent,
        "a token is only current in its own family"
    );
    assert_eq!(
        store
            .get_refresh_token(&stray.token_hash, now + 5)
            .await
            .expect("get_refresh_token"),
        None,
        "a refused rotation writes no successor"
    );
}

pub async fn rotation_of_revoked_or_expired_family_is_refused(store: Arc<dyn Store>) {
    let now = now();

    let revoked = Bundle::live(now);
    revoked.create(store.as_ref()).await;
    assert!(store
        .revoke_family(&revoked.family.id, now)
        .await
        .expect("revoke_family"));
    let (successor, access) = revoked.successor(now + 1, 1);
    assert_eq!(
        store
            .rotate_refresh_token(rotation(
                revoked.family.id,
                &revoked.refresh.token_hash,
                &successor,
                &access,
                now + 1,
            ))
            .await
            .expect("rotate_refresh_token"),
        Rotated::NotCurrent,
        "the current token of a revoked family does not rotate"
    );
    assert_eq!(
        store
            .get_refresh_token(&successor.token_hash, now + 1)
            .await
            .expect("get_refresh_token"),
        None,
        "a refused rotation of a revoked family writes no successor"
    );

    let expiring = Bundle::new(now, now + 100);
    expiring.create(store.as_ref()).await;
    let (successor, access) = expiring.successor(now + 100, 1);
    assert_eq!(
        store
            .rotate_refresh_token(rotation(
                expiring.family.id,
                &expiring.refresh.token_hash,
                &successor,
                &access,
                now + 100,
            ))
            .await
            .expect("rotate_refresh_token"),
        Rotated::NotCurrent,
        "the current token of an expired family does not rotate"
    );
    assert_eq!(
        store
            .get_refresh_token(&successor.token_hash, now + 100)
            .await
            .expect("get_refresh_token"),
        None,
        "a refused rotation of an expired family writes no successor"
    );
    assert_eq!(
        store
            .get_access_token(&access.jti, now + 100)
            .await
            .expect("get_access_token"),
        None,
        "a refused rotation of an expired family writes no access token"
    );
}

/// From one refresh token at most one successor is ever issued (contract part 2), also when
/// many requests present it at the same moment.
pub async fn rotation_has_exactly_one_winner_of_20(store: Arc<dyn Store>) {
    const RACERS: u32 = 20;
    let now = now();
    let bundle = Arc::new(Bundle::live(now));
    bundle.create(store.as_ref()).await;

    // All tasks wait at the barrier so the rotations really overlap.
    let barrier = Arc::new(tokio::sync::Barrier::new(RACERS as usize));
    let tasks: Vec<_> = (0..RACERS)
        .map(|_| {
            let store = Arc::clone(&store);
            let bundle = Arc::clone(&bundle);
            let barrier = Arc::clone(&barrier);
            tokio::spawn(async move {
                let (successor, access) = bundle.successor(now + 1, 1);
                barrier.wait().await;
                let outcome = store
                    .rotate_refresh_token(rotation(
                        bundle.family.id,
                        &bundle.refresh.token_hash,
                        &successor,
                        &access,
                        now + 1,
                    ))
                    .await
                    .expect("rotate_refresh_token");
                (outcome, successor, access)
            })
        })
        .collect();
    let mut results = Vec::new();
    for task in tasks {
        results.push(task.await.expect("rotation task panicked"));
    }

    let winners: Vec<_> = results
        .iter()
        .filter(|(outcome, _, _)| *outcome == Rotated::Rotated)
        .collect();
    assert_eq!(
        winners.len(),
        1,
        "exactly one of {RACERS} concurrent rotations of one token wins ({} won)",
        winners.len()
    );
    assert_eq!(
        results
            .iter()
            .filter(|(outcome, _, _)| *outcome == Rotated::NotCurrent)
            .count(),
        RACERS as usize - 1,
        "every other concurrent rotation reads NotCurrent"
    );
    let (_, winner, winner_access) = winners[0];

    let family = store
        .get_family(&bundle.family.id, now + 1)
        .await
        .expect("get_family")
        .expect("family present");
    assert_eq!(
        family.current_token, winner.token_hash,
        "the family's current token is the winner's successor"
    );
    assert_eq!(family.generation, 1, "the generation moved by exactly one");

    for (outcome, successor, access) in &results {
        let stored = store
            .get_refresh_token(&successor.token_hash, now + 1)
            .await
            .expect("get_refresh_token");
        let stored_access = store
            .get_access_token(&access.jti, now + 1)
            .await
            .expect("get_access_token");
        if *outcome == Rotated::Rotated {
            assert_eq!(
                stored.as_ref(),
                Some(winner),
                "the winner's successor exists"
            );
            assert_eq!(
                stored_access.as_ref(),
                Some(winner_access),
                "the winner's access token exists"
            );
        } else {
            assert_eq!(stored, None, "a losing rotation's successor does not exist");
            assert_eq!(
                stored_access, None,
                "a losing rotation's access token does not exist"
            );
        }
    }
}

pub async fn revoke_family_revokes_its_tokens(store: Arc<dyn Store>) {
    let now = now();
    let bundle = Bundle::live(now);
    bundle.create(store.as_ref()).await;
    let (successor, rotated_access) = bundle.successor(now, 1);
    assert_eq!(
        store
            .rotate_refresh_token(rotation(
                bundle.family.id,
                &bundle.refresh.token_hash,
                &successor,
                &rotated_access,
                now,
            ))
            .await
            .expect("rotate_refresh_token"),
        Rotated::Rotated
    );
    // A bystander family and an application token must be untouched by the revocation.
    let bystander = Bundle::live(now);
    bystander.create(store.as_ref()).await;
    let application = access_token(
        now,
        ClientId::new(OsRandom.uuid()),
        None,
        now + ACCESS_TOKEN_TTL_SECONDS,
    );
    store
        .put_access_token(&application)
        .await
        .expect("put_access_token");

    let revoked_at = now + 5;
    assert!(
        store
            .revoke_family(&bundle.family.id, revoked_at)
            .await
            .expect("revoke_family"),
        "revoking an existing family returns true"
    );
    let family = store
        .get_family(&bundle.family.id, revoked_at)
        .await
        .expect("get_family")
        .expect("a revoked family is still returned");
    assert_eq!(
        family.revoked_at,
        Some(revoked_at),
        "the family records when it was revoked"
    );
    assert!(!family.is_live(revoked_at));

    let (next, next_access) = bundle.successor(revoked_at, 2);
    assert_eq!(
        store
            .rotate_refresh_token(rotation(
                bundle.family.id,
                &successor.token_hash,
                &next,
                &next_access,
                revoked_at,
            ))
            .await
            .expect("rotate_refresh_token"),
        Rotated::NotCurrent,
        "the current token of a revoked family no longer rotates"
    );
    assert_eq!(
        store
            .get_refresh_token(&next.token_hash, revoked_at)
            .await
            .expect("get_refresh_token"),
        None,
        "a refused rotation writes no successor"
    );
    assert!(
        store
            .get_refresh_token(&successor.token_hash, revoked_at)
            .await
            .expect("get_refresh_token")
            .is_some(),
        "the refresh tokens of a revoked family stay readable (reuse detection)"
    );

    for (jti, what) in [
        (&bundle.access.jti, "the family's first access token"),
        (&rotated_access.jti, "an access token minted by rotation"),
    ] {
        let record = store
            .get_access_token(jti, revoked_at)
            .await
            .expect("get_access_token")
            .unwrap_or_else(|| panic!("{what} is still present after revocation"));
        assert!(record.revoked, "{what} reads as revoked");
    }
    let untouched = store
        .get_access_token(&bystander.access.jti, revoked_at)
        .await
        .expect("get_access_token")
        .expect("bystander access token present");
    assert!(
        !untouched.revoked,
        "revoking one family does not revoke another's access tokens"
    );
    assert_eq!(
        store
            .get_access_token(&application.jti, revoked_at)
            .await
            .expect("get_access_token"),
        Some(application),
        "revoking a family does not touch application tokens"
    );
    assert_eq!(
        store
            .get_family(&bystander.family.id, revoked_at)
            .await
            .expect("get_family")
            .and_then(|f| f.revoked_at),
        None,
        "revoking one family does not revoke another"
    );

    assert!(
        store
            .revoke_family(&bundle.family.id, revoked_at + 60)
            .await
            .expect("revoke_family again"),
        "revoking a revoked family again returns true"
    );
    assert_eq!(
        store
            .get_family(&bundle.family.id, revoked_at + 60)
            .await
            .expect("get_family")
            .and_then(|f| f.revoked_at),
        Some(revoked_at),
        "revoking again keeps the first revocation time"
    );
    assert!(
        !store
            .revoke_family(&FamilyId::new(OsRandom.uuid()), now)
            .await
            .expect("revoke_family of an unknown id"),
        "revoking an unknown family returns false"
    );
    assert_eq!(
        store
            .get_family(&FamilyId::new(OsRandom.uuid()), now)
            .await
            .expect("get_family"),
        None,
        "revoking an unknown family creates nothing"
    );
}

fn exchange_of<'a>(
    bundle: &'a Bundle,
    token_hash: &TokenHash,
    previous_family: Option<FamilyId>,
    now: UnixTime,
) -> NewFamily<'a> {
    NewFamily {
        legacy_exchange: Some(LegacyExchangeUpdate {
            exchange: LegacyExchange {
                token_hash: token_hash.clone(),
                family_id: bundle.family.id,
                exchanged_at: now,
            },
            previous_family,
        }),
        ..bundle.new_family()
    }
}

pub async fn legacy_exchange_link_moves_only_from_the_seen_family(store: Arc<dyn Store>) {
    let now = now();
    let legacy = legacy_token(None);
    store
        .put_legacy_tokens(std::slice::from_ref(&legacy))
        .await
        .expect("put_legacy_tokens");

    // First exchange: never exchanged before.
    let first = Bundle::live(now);
    assert_eq!(
        store
            .create_family(exchange_of(&first, &legacy.token_hash, None, now))
            .await
            .expect("create_family"),
        FamilyCreated::Created,
        "the first exchange of a legacy token creates its family"
    );
    assert_eq!(
        store
            .get_legacy_exchange(&legacy.token_hash)
            .await
            .expect("get_legacy_exchange"),
        Some(LegacyExchange {
            token_hash: legacy.token_hash.clone(),
            family_id: first.family.id,
            exchanged_at: now,
        }),
        "the exchange link points at the new family"
    );

    // A racing exchange that also saw "never exchanged": it must write nothing.
    let stale = Bundle::live(now);
    assert_eq!(
        store
            .create_family(exchange_of(&stale, &legacy.token_hash, None, now + 1))
            .await
            .expect("create_family"),
        FamilyCreated::LegacyExchangeRaced,
        "an exchange that saw a stale link loses"
    );
    assert_eq!(
        store
            .get_family(&stale.family.id, now + 1)
            .await
            .expect("get_family"),
        None,
        "the losing exchange's family is not written"
    );
    assert_eq!(
        store
            .get_refresh_token(&stale.refresh.token_hash, now + 1)
            .await
            .expect("get_refresh_token"),
        None,
        "the losing exchange's refresh token is not written"
    );
    assert_eq!(
        store
            .get_access_token(&stale.access.jti, now + 1)
            .await
            .expect("get_access_token"),
        None,
        "the losing exchange's access token is not written"
    );
    assert_eq!(
        store
            .get_legacy_exchange(&legacy.token_hash)
            .await
            .expect("get_legacy_exchange")
            .map(|e| e.family_id),
        Some(first.family.id),
        "the losing exchange leaves the link alone"
    );
    assert_eq!(
        store
            .get_family(&first.family.id, now + 1)
            .await
            .expect("get_family")
            .and_then(|f| f.revoked_at),
        None,
        "the losing exchange revokes nothing"
    );

    // A stale previous family that is some other family: also loses.
    let wrong_previous = Bundle::live(now);
    assert_eq!(
        store
            .create_family(exchange_of(
                &wrong_previous,
                &legacy.token_hash,
                Some(FamilyId::new(OsRandom.uuid())),
                now + 1,
            ))
            .await
            .expect("create_family"),
        FamilyCreated::LegacyExchangeRaced,
        "an exchange that saw another family linked loses"
    );
    assert_eq!(
        store
            .get_family(&wrong_previous.family.id, now + 1)
            .await
            .expect("get_family"),
        None,
        "the losing exchange's family is not written"
    );

    // The repeated exchange that saw the current link: moves it and revokes the previous family.
    let second = Bundle::live(now + 2);
    assert_eq!(
        store
            .create_family(exchange_of(
                &second,
                &legacy.token_hash,
                Some(first.family.id),
                now + 2,
            ))
            .await
            .expect("create_family"),
        FamilyCreated::Created,
        "an exchange that saw the current link creates its family"
    );
    assert_eq!(
        store
            .get_legacy_exchange(&legacy.token_hash)
            .await
            .expect("get_legacy_exchange"),
        Some(LegacyExchange {
            token_hash: legacy.token_hash.clone(),
            family_id: second.family.id,
            exchanged_at: now + 2,
        }),
        "the link moves to the new family"
    );
    assert!(
        store
            .get_family(&first.family.id, now + 2)
            .await
            .expect("get_family")
            .expect("previous family still present")
            .revoked_at
            .is_some(),
        "the previously linked family is revoked"
    );
    let old_access = store
        .get_access_token(&first.access.jti, now + 2)
        .await
        .expect("get_access_token")
        .expect("previous family's access token present");
    assert!(
        old_access.revoked,
        "the previous family's access token reads revoked"
    );
    assert_eq!(
        store
            .get_family(&second.family.id, now + 2)
            .await
            .expect("get_family"),
        Some(second.family.clone()),
        "the new family is live"
    );
    assert_eq!(
        store
            .get_legacy_token(&legacy.token_hash, now + 2)
            .await
            .expect("get_legacy_token"),
        Some(legacy),
        "exchanging leaves the imported legacy token as it was"
    );
}

pub async fn concurrent_first_legacy_exchanges_have_one_winner(store: Arc<dyn Store>) {
    const RACERS: usize = 10;
    let now = now();
    let legacy = legacy_token(None);
    store
        .put_legacy_tokens(std::slice::from_ref(&legacy))
        .await
        .expect("put_legacy_tokens");

    let barrier = Arc::new(tokio::sync::Barrier::new(RACERS));
    let tasks: Vec<_> = (0..RACERS)
        .map(|_| {
            let store = Arc::clone(&store);
            let barrier = Arc::clone(&barrier);
            let token_hash = legacy.token_hash.clone();
            tokio::spawn(async move {
                let bundle = Bundle::live(now);
                barrier.wait().await;
                let outcome = store
                    .create_family(exchange_of(&bundle, &token_hash, None, now))
                    .await
                    .expect("create_family");
                (outcome, bundle.family.id)
            })
        })
        .collect();
    let mut results = Vec::new();
    for task in tasks {
        results.push(task.await.expect("exchange task panicked"));
    }
    let winners: Vec<FamilyId> = results
        .iter()
        .filter(|(outcome, _)| *outcome == FamilyCreated::Created)
        .map(|(_, id)| *id)
        .collect();
    assert_eq!(
        winners.len(),
        1,
        "exactly one of {RACERS} concurrent first exchanges of one legacy token wins"
    );
    assert_eq!(
        store
            .get_legacy_exchange(&legacy.token_hash)
            .await
            .expect("get_legacy_exchange")
            .map(|e| e.family_id),
        Some(winners[0]),
        "the link points at the winner's family"
    );
    let mut live = HashSet::new();
    for (_, id) in &results {
        if store
            .get_family(id, now)
            .await
            .expect("get_family")
            .is_some()
        {
            live.insert(*id);
        }
    }
    assert_eq!(
        live,
        HashSet::from([winners[0]]),
        "only the winner's family was written"
    );
}

// ---------------------------------------------------------------------------------------------
// Password lockout.

pub async fn failed_logins_are_counted_within_the_window(store: Arc<dyn Store>) {
    let now = now();
    let window = 15 * 60;
    let raw = unique_login();
    let login = Login::parse(&raw).expect("valid login");
    let other = Login::parse(&unique_login()).expect("valid login");

    assert_eq!(
        store
            .count_failed_logins(&login, now - window)
            .await
            .expect("count_failed_logins"),
        0,
        "no failures recorded yet"
    );
    // One long before the window (its record already expired), three within it.
    for at in [now - 3600, now - 600, now - 30, now] {
        store
            .record_failed_login(&login, at, at + window)
            .await
            .expect("record_failed_login");
    }
    store
        .record_failed_login(&other, now, now + window)
        .await
        .expect("record_failed_login");

    assert_eq!(
        store
            .count_failed_logins(&login, now - window)
            .await
            .expect("count_failed_logins"),
        3,
        "failures within the window are counted, older ones are not"
    );
    assert_eq!(
        store
            .count_failed_logins(&login, now - 30)
            .await
            .expect("count_failed_logins"),
        2,
        "a failure exactly at `since` is counted"
    );
    let same_login_other_case = Login::parse(&raw.to_uppercase()).expect("valid login");
    assert_eq!(
        store
            .count_failed_logins(&same_login_other_case, now - window)
            .await
            .expect("count_failed_logins"),
        3,
        "failures count per login, whatever its case"
    );
    assert_eq!(
        store
            .count_failed_logins(&other, now - window)
            .await
            .expect("count_failed_logins"),
        1,
        "failures of another login are counted apart"
    );

    // Two failures in the same second are two failures.
    store
        .record_failed_login(&other, now, now + window)
        .await
        .expect("record_failed_login");
    assert_eq!(
        store
            .count_failed_logins(&other, now - window)
            .await
            .expect("count_failed_logins"),
        2,
        "two failures in the same second count twice"
    );
}

#[cfg(test)]
mod tests {
    /// The macro's list and this module's functions must not drift apart: a suite function
    /// missing from the macro would silently never run.
    #[test]
    fn every_suite_function_is_registered() {
        let source = include_str!("conformance.rs");
        let (macro_part, _) = source
            .split_once("// ---")
            .expect("the macro precedes the builders");
        let listed: Vec<&str> = macro_part
            .lines()
            .map(str::trim)
            .filter_map(|line| line.strip_suffix(','))
            .filter(|name| {
                !name.is_empty()
                    && name
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            })
            .collect();
        let defined: Vec<&str> = source
            .lines()
            .filter_map(|line| line.strip_prefix("pub async fn "))
            .filter_map(|rest| rest.split('(').next())
            .collect();
        assert!(!defined.is_empty());
        for name in &defined {
            assert!(listed.contains(name), "{name} is not in conformance_suite!");
        }
        for name in &listed {
            assert!(defined.contains(name), "{name} is listed but not defined");
        }
    }
}
