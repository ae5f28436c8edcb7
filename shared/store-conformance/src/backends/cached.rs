//! The cache's bound, measured on a manual clock: a change made by another process (tokenctl)
//! is seen within the TTL, one made through the cache at once.

use std::sync::Arc;

use tempfile::TempDir;

use crate::records;
use token_domain::clock::{Clock, ManualClock};
use token_domain::Client;
use token_store::cached::*;
use token_store::prelude::*;
use token_store::sqlite::SqliteStore;
use token_store::{ClientStore, LegacyStore, PrincipalStore};

const TTL: u64 = 5;

/// A cached store and a second, uncached handle on the same database: the other process.
fn stores() -> (TempDir, CachedStore, SqliteStore, Arc<ManualClock>) {
    let dir = tempfile::Builder::new()
        .prefix("cached-store-")
        .tempdir()
        .unwrap();
    let clock = Arc::new(ManualClock::new(records::now()));
    let inner = Arc::new(SqliteStore::open_in_dir(dir.path()).unwrap());
    let other = SqliteStore::open_in_dir(dir.path()).unwrap();
    let cached = CachedStore::new(inner, clock.clone(), TTL);
    (dir, cached, other, clock)
}

#[tokio::test]
async fn another_process_disabling_a_client_is_seen_within_the_ttl() {
    let (_dir, cached, other, clock) = stores();
    let mut client = records::client(clock.now());
    let id = client.id;
    let served_enabled = async || cached.get_client(&id).await.unwrap().unwrap().enabled;
    other.put_client(&client).await.unwrap();
    assert!(served_enabled().await);

    client.enabled = false;
    other.put_client(&client).await.unwrap();
    clock.advance(TTL as i64 - 1);
    assert!(
        served_enabled().await,
        "served from the cache within the TTL"
    );
    clock.advance(1);
    assert!(!served_enabled().await);
}

#[tokio::test]
async fn a_write_through_the_cache_is_seen_at_once() {
    let (_dir, cached, _other, clock) = stores();
    let mut company = records::company(clock.now());
    cached.put_company(&company).await.unwrap();
    assert_eq!(
        cached.get_company(&company.id).await.unwrap(),
        Some(company.clone())
    );
    company.status = crate::domain::CompanyStatus::Disabled;
    cached.put_company(&company).await.unwrap();
    assert_eq!(
        cached.get_company(&company.id).await.unwrap(),
        Some(company)
    );
}

#[tokio::test]
async fn a_secrets_change_through_the_cache_is_served_from_it_at_once() {
    let (_dir, cached, other, clock) = stores();
    let client = records::client(clock.now());
    let id = client.id;
    other.put_client(&client).await.unwrap();
    let read = cached.get_client(&id).await.unwrap().unwrap();
    let secret_id = crate::domain::SecretId::new(uuid::Uuid::new_v4());
    let added = crate::domain::ClientSecret {
        hash: crate::secrets::TokenHash::of("a new secret"),
        created: clock.now(),
        expires: None,
        last_used: None,
    };
    let next = read
        .secrets
        .with_added(read.created_at, secret_id, added)
        .unwrap();
    let version = read.secrets.version();
    assert!(cached
        .replace_client_secrets(&id, version, &next)
        .await
        .unwrap());

    // Disabled by another process: still enabled here, so what follows came from the cache.
    other
        .put_client(&Client {
            enabled: false,
            ..other.get_client(&id).await.unwrap().unwrap()
        })
        .await
        .unwrap();
    let served = cached.get_client(&id).await.unwrap().unwrap();
    assert!(served.enabled, "served from the cache");
    let stored = other.get_client(&id).await.unwrap().unwrap();
    assert_eq!(
        served.secrets, stored.secrets,
        "the cache holds what was written"
    );

    // A change that loses (another version) drops the entry: the next read is the store's.
    assert!(!cached
        .replace_client_secrets(&id, version, &next)
        .await
        .unwrap());
    assert!(!cached.get_client(&id).await.unwrap().unwrap().enabled);
}

#[tokio::test]
async fn absent_items_and_users_by_login_are_never_cached() {
    let (_dir, cached, other, clock) = stores();
    let client = records::client(clock.now());
    assert_eq!(cached.get_client(&client.id).await.unwrap(), None);
    other.put_client(&client).await.unwrap();
    assert!(
        cached.get_client(&client.id).await.unwrap().is_some(),
        "a new client works at once"
    );

    let mut user = records::user(clock.now(), &records::unique_login());
    other.insert_user(&user).await.unwrap();
    assert!(cached
        .get_user_by_login(&user.login)
        .await
        .unwrap()
        .is_some());
    user.status = crate::domain::UserStatus::Disabled;
    other.put_user(&user).await.unwrap();
    let by_login = cached
        .get_user_by_login(&user.login)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(by_login.status, crate::domain::UserStatus::Disabled);
}

#[tokio::test]
async fn enablement_is_cached_both_ways_within_the_ttl() {
    let (_dir, cached, other, clock) = stores();
    let company = records::company(clock.now());
    let client = records::client(clock.now());
    assert!(!cached
        .is_company_enabled_for_client(&company.id, &client.id)
        .await
        .unwrap());
    other
        .enable_company_for_client(&company.id, &client.id)
        .await
        .unwrap();
    assert!(!cached
        .is_company_enabled_for_client(&company.id, &client.id)
        .await
        .unwrap());
    clock.advance(TTL as i64);
    assert!(cached
        .is_company_enabled_for_client(&company.id, &client.id)
        .await
        .unwrap());
}

#[test]
fn the_ttl_is_capped_and_zero_means_no_cache() {
    let dir = tempfile::tempdir().unwrap();
    let inner = Arc::new(SqliteStore::open_in_dir(dir.path()).unwrap());
    let clock: Arc<dyn Clock> = Arc::new(ManualClock::new(0));
    assert_eq!(
        CachedStore::new(inner.clone(), clock.clone(), 60).ttl_seconds(),
        MAX_TTL_SECONDS as i64
    );
    let uncached = wrap(inner, clock, 0);
    assert!(
        format!("{uncached:?}").starts_with("SqliteStore"),
        "{uncached:?}"
    );
}

#[tokio::test]
async fn a_relinked_consumer_key_is_seen_within_the_ttl() {
    let (_dir, cached, other, clock) = stores();
    let key = records::consumer_key();
    let mut link = crate::domain::LegacyApp {
        consumer_key: key.clone(),
        client_id: records::client(clock.now()).id,
        linked_at: clock.now(),
    };
    other.put_legacy_app(&link).await.unwrap();
    assert_eq!(
        cached.get_legacy_app(&key).await.unwrap(),
        Some(link.clone())
    );
    let first_client = link.client_id;
    link.client_id = records::client(clock.now()).id;
    other.put_legacy_app(&link).await.unwrap();
    let served = cached.get_legacy_app(&key).await.unwrap().unwrap();
    assert_eq!(served.client_id, first_client);
    clock.advance(TTL as i64);
    assert_eq!(cached.get_legacy_app(&key).await.unwrap(), Some(link));
}

/// Through [`wrap`], the store every caller gets: clients are the cache's, auth tokens (never
/// cached) the inner store's, written and read there at once.
#[tokio::test]
async fn the_wrapped_store_caches_only_its_own_aggregates() {
    let (_dir, _cached, other, clock) = stores();
    let inner: Arc<dyn Store> = Arc::new(other.clone());
    let wrapped = wrap(inner, clock.clone(), TTL);
    let mut client = records::client(clock.now());
    other.clients().put_client(&client).await.unwrap();
    assert!(wrapped
        .clients()
        .get_client(&client.id)
        .await
        .unwrap()
        .is_some());
    client.enabled = false;
    other.clients().put_client(&client).await.unwrap();
    let served = wrapped.clients().get_client(&client.id).await.unwrap();
    assert!(
        served.unwrap().enabled,
        "served from the cache within the TTL"
    );

    let now = clock.now();
    let token = records::auth_token(now, now + 100);
    let hash = token.token_hash.clone();
    wrapped.auth_tokens().put_auth_token(&token).await.unwrap();
    let stored = other.auth_tokens().get_auth_token(&hash, now).await;
    assert_eq!(
        stored.unwrap(),
        Some(token.clone()),
        "written to the inner store"
    );
    assert!(wrapped
        .auth_tokens()
        .get_auth_token(&hash, now)
        .await
        .unwrap()
        .is_some());
    let longer = crate::domain::AuthToken {
        expires_at: now + 200,
        ..token
    };
    other.auth_tokens().put_auth_token(&longer).await.unwrap();
    let read = wrapped.auth_tokens().get_auth_token(&hash, now).await;
    assert_eq!(
        read.unwrap(),
        Some(longer),
        "never cached: the inner store's at once"
    );
}
