//! Legacy apps and imported legacy tokens.

use futures::stream::{self, StreamExt};

use super::fixtures::*;
use super::records::*;
use crate::clock::UnixTime;
use crate::domain::{ClientId, ConsumerKey, LegacyApp, LegacyToken, PrincipalType};
use crate::random::{OsRandom, RandomExt};
use crate::store::prelude::*;

async fn legacy_app(store: &dyn Store, key: &ConsumerKey) -> Option<LegacyApp> {
    store
        .legacy()
        .get_legacy_app(key)
        .await
        .expect("get_legacy_app")
}

pub async fn legacy_app_round_trip_and_relink(store: &dyn Store) {
    let now = now();
    let mut app = LegacyApp {
        consumer_key: consumer_key(),
        client_id: ClientId::new(OsRandom.uuid()),
        linked_at: now,
    };
    store
        .legacy()
        .put_legacy_app(&app)
        .await
        .expect("put_legacy_app");
    assert_eq!(
        legacy_app(store, &app.consumer_key).await,
        Some(app.clone()),
        "a legacy app reads back as written"
    );
    app.client_id = ClientId::new(OsRandom.uuid());
    app.linked_at = now + 1;
    store
        .legacy()
        .put_legacy_app(&app)
        .await
        .expect("put_legacy_app again");
    assert_eq!(
        legacy_app(store, &app.consumer_key).await,
        Some(app),
        "re-linking a consumer key moves it to the new client"
    );
    assert_eq!(
        store
            .legacy()
            .get_legacy_app(&consumer_key())
            .await
            .expect("get_legacy_app"),
        None,
        "an unknown consumer key is absent"
    );
}

pub async fn legacy_token_round_trip_and_replace(store: &dyn Store) {
    let now = now();
    let forever = legacy_token(None);
    let mut expiring = legacy_token(Some(now + 3600));
    expiring.principal_type = PrincipalType::User;
    expiring.wsadmin = false;
    expiring.company_id = None;
    store
        .legacy()
        .put_legacy_tokens(&[forever.clone(), expiring.clone()])
        .await
        .expect("put_legacy_tokens");
    for token in [&forever, &expiring] {
        assert_eq!(
            read_legacy_token(store, &token.token_hash, now).await,
            Some(token.clone()),
            "a legacy token reads back as written"
        );
    }
    assert_eq!(
        read_legacy_token(store, &forever.token_hash, now + 10 * 365 * 86_400).await,
        Some(forever.clone()),
        "a legacy token without expires_at never expires"
    );

    let mut replaced = forever.clone();
    replaced.scopes = scopes("accounting");
    store
        .legacy()
        .put_legacy_tokens(std::slice::from_ref(&replaced))
        .await
        .expect("put_legacy_tokens again");
    assert_eq!(
        read_legacy_token(store, &forever.token_hash, now).await,
        Some(replaced),
        "importing a token again replaces it"
    );
    assert_eq!(
        read_legacy_token(store, &random_hash(), now).await,
        None,
        "an unknown legacy token is absent"
    );
    assert_eq!(
        read_legacy_exchange(store, &forever.token_hash).await,
        None,
        "a token never exchanged has no exchange link"
    );
    store
        .legacy()
        .put_legacy_tokens(&[])
        .await
        .expect("importing nothing succeeds");
}

/// An import file may list a token twice; the import must neither fail nor duplicate it (a
/// DynamoDB batch write refuses two writes of one key in one request).
pub async fn legacy_tokens_repeated_within_one_import_are_written_once(store: &dyn Store) {
    let now = now();
    let tokens: Vec<LegacyToken> = (0..30).map(|_| legacy_token(None)).collect();
    let mut batch = tokens.clone();
    batch.extend(tokens.iter().take(10).cloned());
    batch.push(tokens[0].clone());
    store
        .legacy()
        .put_legacy_tokens(&batch)
        .await
        .expect("put_legacy_tokens with repeated tokens");
    for token in &tokens {
        assert_eq!(
            read_legacy_token(store, &token.token_hash, now).await,
            Some(token.clone()),
            "a token listed twice in one import is written"
        );
    }
}

pub async fn legacy_tokens_batch_import_of_10000_loses_nothing(store: &dyn Store) {
    const COUNT: usize = 10_000;
    let now = now();
    let tokens: Vec<LegacyToken> = (0..COUNT)
        .map(|i| legacy_token((i % 3 == 0).then_some(now + 86_400 + i as i64)))
        .collect();

    store
        .legacy()
        .put_legacy_tokens(&tokens)
        .await
        .expect("put_legacy_tokens of 10,000 tokens");
    assert_all_readable(store, &tokens, now, "after the import").await;

    // A re-run of the same import: no failure, no change, nothing lost. Every tenth token is
    // read back, each batch of the import included: a re-run either rewrites an item with the
    // same value or skips it, so a fault would show in every batch; the 9,000 other reads
    // would find nothing more, and took this test from 13 s to 21 s on DynamoDB Local.
    store
        .legacy()
        .put_legacy_tokens(&tokens)
        .await
        .expect("put_legacy_tokens re-import");
    let sample: Vec<LegacyToken> = tokens.iter().step_by(10).cloned().collect();
    assert_all_readable(store, &sample, now, "after the re-import").await;
}

async fn assert_all_readable(store: &dyn Store, tokens: &[LegacyToken], now: UnixTime, when: &str) {
    // Concurrent reads: the trait has no batch get, and one by one is slow on DynamoDB.
    let wrong: Vec<String> = stream::iter(tokens)
        .map(|token| async move {
            let read = read_legacy_token(store, &token.token_hash, now).await;
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
