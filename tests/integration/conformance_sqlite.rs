//! The storage conformance suite against SQLite, and what only SQLite has to prove: two
//! processes (the local server and `tokenctl`) on one database file at once.

use std::sync::Arc;
use std::time::Instant;

use crate::support::sqlite::temp_dir;
use futures::future::join_all;
use token_domain::clock::{Clock, SystemClock, UnixTime};
use token_domain::{AccessTokenRecord, LegacyToken, Login, RefreshTokenRecord};
use token_store::prelude::*;
use token_store::sqlite::SqliteStore;
use token_store::{AttemptLimit, Rotation};
use token_store_conformance::records::{self, Bundle};
use token_store_conformance::writes::{create_family, rotate_refresh_token, Rotated};

fn legacy_tokens(count: usize) -> Vec<LegacyToken> {
    (0..count).map(|_| records::legacy_token(None)).collect()
}

/// A successor of the bundle's current refresh token, and the access token minted with it, as
/// [`Rotation`] takes them.
fn rotation_of(
    bundle: &Bundle,
    successor: &(RefreshTokenRecord, AccessTokenRecord),
    now: UnixTime,
) -> Rotation {
    records::rotation(
        bundle.family.id,
        &bundle.refresh.token_hash,
        &successor.0,
        &successor.1,
        now,
    )
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
        tokio::spawn(async move { admin.legacy().put_legacy_tokens(&imported).await })
    };

    // Meanwhile the server creates and rotates families, and counts failed logins.
    let grants = (0..8).map(|_| {
        let server = Arc::clone(&server);
        tokio::spawn(async move {
            let mut families = Vec::new();
            for _ in 0..10 {
                let bundle = Bundle::live(now);
                create_family(server.as_ref(), bundle.new_family()).await;
                let next = bundle.successor(now, 1);
                let rotated =
                    rotate_refresh_token(server.as_ref(), rotation_of(&bundle, &next, now), vec![])
                        .await;
                assert_eq!(rotated, Rotated::Rotated);
                let login = Login::parse("someone@example.com").unwrap();
                let limit = AttemptLimit {
                    threshold: 1000,
                    window_seconds: 900,
                };
                server
                    .lockout()
                    .register_login_attempt(&login, limit, now)
                    .await?;
                families.push((bundle.family.id, next.0.token_hash));
            }
            Ok::<_, token_store::StoreError>(families)
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
            .families()
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
                .legacy()
                .get_legacy_token(&token.token_hash, now)
                .await
                .unwrap()
                .as_ref(),
            Some(token),
            "the server sees the admin tool's import"
        );
    }
    assert!(admin
        .families()
        .revoke_family(&families[0].0, now)
        .await
        .unwrap());
    assert!(server
        .families()
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
        let bundle = Arc::new(Bundle::live(now));
        create_family(stores[0].as_ref(), bundle.new_family()).await;
        let barrier = Arc::new(tokio::sync::Barrier::new(20));
        let tasks = (0..20).map(|i| {
            let store = Arc::clone(&stores[i % 2]);
            let (bundle, barrier) = (bundle.clone(), barrier.clone());
            tokio::spawn(async move {
                let next = bundle.successor(now, 1);
                barrier.wait().await;
                rotate_refresh_token(store.as_ref(), rotation_of(&bundle, &next, now), vec![]).await
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
    let client = records::client(now);
    {
        let store = SqliteStore::open_in_dir(&data_dir).expect("open creates DATA_DIR");
        store.clients().put_client(&client).await.unwrap();
        assert_eq!(store.path(), data_dir.join(token_store::sqlite::FILE_NAME));
    }
    let reopened = SqliteStore::open_in_dir(&data_dir).expect("reopen an existing database");
    assert_eq!(
        reopened.clients().get_client(&client.id).await.unwrap(),
        Some(client)
    );
}

/// The migration imports hundreds of thousands of old tokens in batches; all of them must
/// land. How long it takes is printed, not asserted: a debug build on a busy machine proves
/// nothing about speed, so the figure is for the reader, not a pass condition.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn import_of_100000_legacy_tokens_keeps_every_token() {
    let dir = temp_dir();
    let store = SqliteStore::open_in_dir(dir.path()).unwrap();
    let tokens = legacy_tokens(100_000);
    let started = Instant::now();
    store.legacy().put_legacy_tokens(&tokens).await.unwrap();
    eprintln!(
        "imported {} legacy tokens into SQLite in {:?}",
        tokens.len(),
        started.elapsed()
    );
    let now = SystemClock.now();
    for token in [&tokens[0], &tokens[49_999], &tokens[99_999]] {
        assert_eq!(
            store
                .legacy()
                .get_legacy_token(&token.token_hash, now)
                .await
                .unwrap()
                .as_ref(),
            Some(token)
        );
    }
}
