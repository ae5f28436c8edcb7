//! The storage conformance suite against SQLite, and what only SQLite has to prove: two
//! processes (the local server and `tokenctl`) on one database file at once.

use std::sync::Arc;
use std::time::Instant;

use futures::future::join_all;
use integration_tests::sqlite::temp_dir;
use token_service::clock::{Clock, SystemClock};
use token_service::domain::{
    AccessTokenRecord, ClientId, Family, FamilyId, GrantType, LegacyToken, Login, PrincipalId,
    PrincipalType, RefreshTokenRecord, Scopes, TokenId,
};
use token_service::random::{OsRandom, RandomExt};
use token_service::secrets::TokenHash;
use token_service::store::sqlite::SqliteStore;
use token_service::store::{NewFamily, Rotated, Rotation, Store};

token_service::conformance_suite!(integration_tests::sqlite::make_store);

fn legacy_tokens(count: usize) -> Vec<LegacyToken> {
    (0..count)
        .map(|_| LegacyToken {
            token_hash: TokenHash::of(&OsRandom.opaque_token()),
            consumer_key: token_service::domain::ConsumerKey::parse("qyprd-local").unwrap(),
            principal_type: PrincipalType::User,
            principal_id: PrincipalId::new(OsRandom.uuid()),
            scopes: Scopes::parse("accounting").unwrap(),
            wsadmin: false,
            company_id: None,
            expires_at: None,
        })
        .collect()
}

/// A family with its first refresh and access token, as the password grant writes it.
fn new_family(now: i64) -> (Family, RefreshTokenRecord, AccessTokenRecord) {
    let client_id = ClientId::new(OsRandom.uuid());
    let id = FamilyId::new(OsRandom.uuid());
    let refresh = new_successor(id, client_id, 0, now);
    let family = Family {
        id,
        client_id,
        principal_type: PrincipalType::User,
        principal_id: PrincipalId::new(OsRandom.uuid()),
        scopes: Scopes::parse("read").unwrap(),
        geolocation: token_service::domain::Geolocation::parse("http://127.0.0.1:8080").unwrap(),
        current_token: refresh.token_hash.clone(),
        generation: 0,
        created_at: now,
        expires_at: refresh.expires_at,
        revoked_at: None,
    };
    let access = new_access(id, client_id, now);
    (family, refresh, access)
}

fn new_successor(
    family_id: FamilyId,
    client_id: ClientId,
    generation: u32,
    now: i64,
) -> RefreshTokenRecord {
    RefreshTokenRecord {
        token_hash: TokenHash::of(&OsRandom.opaque_token()),
        family_id,
        client_id,
        generation,
        issued_at: now,
        expires_at: now + 86_400,
        rotated_at: None,
    }
}

fn new_access(family_id: FamilyId, client_id: ClientId, now: i64) -> AccessTokenRecord {
    AccessTokenRecord {
        jti: TokenId::new(OsRandom.uuid()),
        client_id,
        principal_type: PrincipalType::User,
        subject: OsRandom.uuid(),
        family_id: Some(family_id),
        scopes: Scopes::parse("read").unwrap(),
        issued_at: now,
        expires_at: now + 3600,
        revoked: false,
    }
}

/// The local server and `tokenctl` each open the file; a large import by one must not make the
/// other's grants fail, and each sees what the other wrote.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_stores_on_one_file_read_and_write_concurrently() {
    let dir = temp_dir();
    let server: Arc<dyn Store> = Arc::new(SqliteStore::open_in_dir(dir.path()).unwrap());
    let admin: Arc<dyn Store> = Arc::new(SqliteStore::open_in_dir(dir.path()).unwrap());
    let now = SystemClock.now();

    let imported = legacy_tokens(20_000);
    let import = {
        let admin = Arc::clone(&admin);
        let imported = imported.clone();
        tokio::spawn(async move { admin.put_legacy_tokens(&imported).await })
    };

    // Meanwhile the server creates and rotates families, and counts failed logins.
    let grants = (0..8).map(|_| {
        let server = Arc::clone(&server);
        tokio::spawn(async move {
            let mut families = Vec::new();
            for _ in 0..10 {
                let (family, refresh, access) = new_family(now);
                server
                    .create_family(NewFamily {
                        family: &family,
                        refresh_token: &refresh,
                        access_token: &access,
                        legacy_exchange: None,
                    })
                    .await?;
                let next = new_successor(family.id, family.client_id, 1, now);
                let next_access = new_access(family.id, family.client_id, now);
                let rotated = server
                    .rotate_refresh_token(Rotation {
                        family_id: family.id,
                        presented: &refresh.token_hash,
                        successor: &next,
                        access_token: &next_access,
                        now,
                    })
                    .await?;
                assert_eq!(rotated, Rotated::Rotated);
                let login = Login::parse("someone@example.com").unwrap();
                server.record_failed_login(&login, now, now + 900).await?;
                server.count_failed_logins(&login, now - 900).await?;
                families.push((family.id, next.token_hash));
            }
            Ok::<_, token_service::store::StoreError>(families)
        })
    });
    let families: Vec<_> = join_all(grants)
        .await
        .into_iter()
        .flat_map(|task| {
            task.expect("grant task")
                .expect("server writes during an import")
        })
        .collect();
    import
        .await
        .expect("import task")
        .expect("import while the server writes");

    // Each side reads what the other wrote.
    for (id, current) in &families {
        let family = admin
            .get_family(id, now)
            .await
            .unwrap()
            .expect("the admin tool sees the server's family");
        assert_eq!(&family.current_token, current);
        assert_eq!(family.generation, 1);
    }
    for token in imported.iter().step_by(97) {
        assert_eq!(
            server
                .get_legacy_token(&token.token_hash, now)
                .await
                .unwrap()
                .as_ref(),
            Some(token),
            "the server sees the admin tool's import"
        );
    }
    assert!(admin.revoke_family(&families[0].0, now).await.unwrap());
    assert!(server
        .get_family(&families[0].0, now)
        .await
        .unwrap()
        .unwrap()
        .revoked_at
        .is_some());
}

/// The conditional rotation holds across connections too, not only within one process's mutex.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rotations_through_two_stores_on_one_file_have_one_winner() {
    let dir = temp_dir();
    let stores: Vec<Arc<dyn Store>> = (0..2)
        .map(|_| Arc::new(SqliteStore::open_in_dir(dir.path()).unwrap()) as Arc<dyn Store>)
        .collect();
    let now = SystemClock.now();
    for _ in 0..5 {
        let (family, refresh, first_access) = new_family(now);
        stores[0]
            .create_family(NewFamily {
                family: &family,
                refresh_token: &refresh,
                access_token: &first_access,
                legacy_exchange: None,
            })
            .await
            .unwrap();
        let family = Arc::new(family);
        let refresh = Arc::new(refresh);
        let barrier = Arc::new(tokio::sync::Barrier::new(20));
        let tasks = (0..20).map(|i| {
            let store = Arc::clone(&stores[i % 2]);
            let (family, refresh, barrier) = (family.clone(), refresh.clone(), barrier.clone());
            tokio::spawn(async move {
                let next = new_successor(family.id, family.client_id, 1, now);
                let next_access = new_access(family.id, family.client_id, now);
                barrier.wait().await;
                store
                    .rotate_refresh_token(Rotation {
                        family_id: family.id,
                        presented: &refresh.token_hash,
                        successor: &next,
                        access_token: &next_access,
                        now,
                    })
                    .await
                    .expect("rotation through either store")
            })
        });
        let outcomes: Vec<Rotated> = join_all(tasks)
            .await
            .into_iter()
            .map(|t| t.expect("rotation task"))
            .collect();
        assert_eq!(
            outcomes.iter().filter(|o| **o == Rotated::Rotated).count(),
            1,
            "exactly one rotation wins across two connections: {outcomes:?}"
        );
    }
}

#[tokio::test]
async fn reopening_keeps_data_and_creates_missing_directories() {
    let dir = temp_dir();
    let data_dir = dir.path().join("nested").join("data");
    let now = SystemClock.now();
    let client = token_service::domain::Client {
        id: ClientId::new(OsRandom.uuid()),
        name: "reopened".into(),
        secret_hash: TokenHash::of("secret"),
        allowed_scopes: Scopes::parse("read").unwrap(),
        grants: [GrantType::ClientCredentials].into_iter().collect(),
        connect_url: None,
        refresh_allowed: false,
        enabled: true,
        created_at: now,
    };
    {
        let store = SqliteStore::open_in_dir(&data_dir).expect("open creates DATA_DIR");
        store.put_client(&client).await.unwrap();
        assert_eq!(
            store.path(),
            data_dir.join(token_service::store::sqlite::FILE_NAME)
        );
    }
    let reopened = SqliteStore::open_in_dir(&data_dir).expect("reopen an existing database");
    assert_eq!(reopened.get_client(&client.id).await.unwrap(), Some(client));
}

/// The migration imports hundreds of thousands of old tokens; batching keeps that quick.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn import_of_100000_legacy_tokens_is_quick() {
    let dir = temp_dir();
    let store = SqliteStore::open_in_dir(dir.path()).unwrap();
    let tokens = legacy_tokens(100_000);
    let started = Instant::now();
    store.put_legacy_tokens(&tokens).await.unwrap();
    let elapsed = started.elapsed();
    // Generous for an unoptimised build on a busy CI machine; row-at-a-time autocommit would
    // take minutes.
    assert!(
        elapsed.as_secs() < 60,
        "importing 100,000 tokens took {elapsed:?}"
    );
    let now = SystemClock.now();
    for token in [&tokens[0], &tokens[49_999], &tokens[99_999]] {
        assert_eq!(
            store
                .get_legacy_token(&token.token_hash, now)
                .await
                .unwrap()
                .as_ref(),
            Some(token)
        );
    }
}
