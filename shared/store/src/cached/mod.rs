//! [`CachedStore`]: a per-instance read cache for what changes rarely (clients, companies and
//! which clients they enabled, users by id, which client a legacy consumer key is linked to) in
//! front of any [`Store`]. It is a [`StoreLayer`]: it answers the client, principal and legacy
//! aggregates itself, and every other aggregate is the store's behind it, untouched.
//!
//! Why: on DynamoDB every read is a round trip in series with the request; a warm Lambda
//! instance asks for the same client on every `client_credentials`.
//!
//! The bound: an entry is served for at most `ttl_seconds` (at most [`MAX_TTL_SECONDS`]) after
//! it was read, measured on the injected [`Clock`]. A client or company disabled by `tokenctl`
//! (another process) therefore stops working on every running instance within that time; a
//! write through this same instance takes effect at once, since it replaces the cached entry.
//!
//! What is never cached: users by login (the password grant must see a password change or a
//! lockout at once), tokens, families, auth tokens, legacy tokens and their exchange links, and
//! failed logins: all of those are read on each use, with expiry checked on read. Absent items are not cached either,
//! so unknown ids cannot fill the cache, and a new client works at once.

mod ttl_map;

use std::sync::Arc;

use async_trait::async_trait;

use super::{
    ClientStore, DirectoryStore, EmailUpdate, ExternalIdUpdate, Inserted, Layered, LegacyStore,
    PrincipalStore, Store, StoreLayer, StoreResult,
};
use crate::clock::{Clock, UnixTime};
use crate::domain::ChannelHandle;
use crate::domain::{
    Client, ClientId, ClientSecrets, Company, ConsumerKey, LegacyApp, LegacyExchange, LegacyToken,
    Login, PrincipalId, SecretId, User,
};
use crate::secrets::TokenHash;
use ttl_map::TtlMap;

/// The longest freshness the configuration may ask for (`READ_CACHE_SECONDS`): the documented
/// delay after which a disabled client or company stops working everywhere.
pub const MAX_TTL_SECONDS: u64 = 5;

/// Entries per kind: far more than the clients and companies one instance serves in a few
/// seconds, small enough to never matter for memory.
const CAPACITY: usize = 10_000;

/// A read cache in front of a store; what it does not cache is the inner store's, unchanged.
pub struct CachedStore {
    inner: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    ttl_seconds: i64,
    // Values as the store answers them; only `Some` is ever inserted (see [`Cacheable`]).
    clients: TtlMap<ClientId, Option<Client>>,
    companies: TtlMap<PrincipalId, Option<Company>>,
    users: TtlMap<PrincipalId, Option<User>>,
    enablements: TtlMap<(PrincipalId, ClientId), bool>,
    legacy_apps: TtlMap<ConsumerKey, Option<LegacyApp>>,
}

impl std::fmt::Debug for CachedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedStore")
            .field("ttl_seconds", &self.ttl_seconds)
            .finish_non_exhaustive()
    }
}

impl CachedStore {
    /// How long an entry is served, after the cap.
    pub fn ttl_seconds(&self) -> i64 {
        self.ttl_seconds
    }

    /// Caches reads of `inner` for `ttl_seconds` (capped at [`MAX_TTL_SECONDS`]) on `clock`.
    pub fn new(inner: Arc<dyn Store>, clock: Arc<dyn Clock>, ttl_seconds: u64) -> Self {
        Self {
            inner,
            clock,
            ttl_seconds: ttl_seconds.min(MAX_TTL_SECONDS) as i64,
            clients: TtlMap::with_capacity(CAPACITY),
            companies: TtlMap::with_capacity(CAPACITY),
            users: TtlMap::with_capacity(CAPACITY),
            enablements: TtlMap::with_capacity(CAPACITY),
            legacy_apps: TtlMap::with_capacity(CAPACITY),
        }
    }

    /// The cached value of `key`, or `load`'s, which is cached if present.
    async fn read_through<K, V, F>(&self, map: &TtlMap<K, V>, key: K, load: F) -> StoreResult<V>
    where
        K: Eq + std::hash::Hash,
        V: Clone + Cacheable,
        F: std::future::Future<Output = StoreResult<V>>,
    {
        let now = self.clock.now();
        if let Some(value) = map.get(&key, now) {
            return Ok(value);
        }
        let value = load.await?;
        if value.worth_caching() {
            map.insert(key, value.clone(), now, self.fresh_until(now));
        }
        Ok(value)
    }

    /// `write`'s outcome; once it has succeeded the entry of `key` is dropped, so that this
    /// instance reads the new value next.
    async fn write_through<K, V, T, F>(
        &self,
        map: &TtlMap<K, V>,
        key: &K,
        write: F,
    ) -> StoreResult<T>
    where
        K: Eq + std::hash::Hash,
        V: Clone,
        F: std::future::Future<Output = StoreResult<T>>,
    {
        let written = write.await?;
        map.remove(key);
        Ok(written)
    }

    /// After a client write: the cached client, if any, changed by `amend` and kept (with its
    /// age, so the cache's bound on other changes holds) when `amend` says it now matches the
    /// store's record; otherwise the entry is dropped and the next request reads the store.
    fn amend_cached_client(&self, id: &ClientId, amend: impl FnOnce(&mut Client) -> bool) {
        let amended = self
            .clients
            .get(id, self.clock.now())
            .flatten()
            .and_then(|mut client| amend(&mut client).then_some(client));
        match amended {
            Some(client) => self.clients.update(id, Some(client)),
            None => self.clients.remove(id),
        }
    }

    fn fresh_until(&self, now: UnixTime) -> UnixTime {
        now + self.ttl_seconds
    }
}

/// Whether a loaded value is kept: absent items are not (see the module's documentation).
trait Cacheable {
    fn worth_caching(&self) -> bool;
}

impl<T> Cacheable for Option<T> {
    fn worth_caching(&self) -> bool {
        self.is_some()
    }
}

/// Enablement is asked only for a company and a client that exist, so both answers are kept.
impl Cacheable for bool {
    fn worth_caching(&self) -> bool {
        true
    }
}

/// With `ttl_seconds` 0 (`READ_CACHE_SECONDS=0`), `store` itself: no cache at all.
pub fn wrap(store: Arc<dyn Store>, clock: Arc<dyn Clock>, ttl_seconds: u64) -> Arc<dyn Store> {
    if ttl_seconds == 0 {
        store
    } else {
        Arc::new(Layered(CachedStore::new(store, clock, ttl_seconds)))
    }
}

impl StoreLayer for CachedStore {
    fn behind(&self) -> &dyn Store {
        &*self.inner
    }

    fn clients(&self) -> &dyn ClientStore {
        self
    }

    fn principals(&self) -> &dyn PrincipalStore {
        self
    }

    fn legacy(&self) -> &dyn LegacyStore {
        self
    }

    fn directory(&self) -> &dyn DirectoryStore {
        self
    }
}

/// The directory's writes drop the user or company they change from the cache, so that a
/// provisioning client reads back what it wrote; nothing of the directory itself is cached.
#[async_trait]
impl DirectoryStore for CachedStore {
    async fn insert_provisioning_token(
        &self,
        token: &crate::domain::ProvisioningToken,
    ) -> StoreResult<()> {
        self.inner
            .directory()
            .insert_provisioning_token(token)
            .await
    }

    async fn get_provisioning_token(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<crate::domain::ProvisioningToken>> {
        self.inner
            .directory()
            .get_provisioning_token(hash, now)
            .await
    }

    async fn list_provisioning_tokens(
        &self,
        company: &PrincipalId,
    ) -> StoreResult<Vec<crate::domain::ProvisioningToken>> {
        self.inner
            .directory()
            .list_provisioning_tokens(company)
            .await
    }

    async fn delete_provisioning_token(
        &self,
        company: &PrincipalId,
        id: &uuid::Uuid,
    ) -> StoreResult<bool> {
        self.inner
            .directory()
            .delete_provisioning_token(company, id)
            .await
    }

    async fn replace_user(&self, previous: &User, next: &User) -> StoreResult<crate::Replaced> {
        self.write_through(
            &self.users,
            &next.id,
            self.inner.directory().replace_user(previous, next),
        )
        .await
    }

    async fn delete_user(&self, user: &User) -> StoreResult<crate::Replaced> {
        self.write_through(
            &self.users,
            &user.id,
            self.inner.directory().delete_user(user),
        )
        .await
    }

    async fn company_users(
        &self,
        company: &PrincipalId,
        skip: usize,
        limit: usize,
    ) -> StoreResult<crate::UserPage> {
        self.inner
            .directory()
            .company_users(company, skip, limit)
            .await
    }

    async fn company_users_after(
        &self,
        company: &PrincipalId,
        after: Option<&PrincipalId>,
        limit: usize,
    ) -> StoreResult<Vec<User>> {
        self.inner
            .directory()
            .company_users_after(company, after, limit)
            .await
    }

    async fn insert_group(&self, group: &crate::domain::DirectoryGroup) -> StoreResult<bool> {
        self.inner.directory().insert_group(group).await
    }

    async fn get_group(
        &self,
        company: &PrincipalId,
        id: &uuid::Uuid,
    ) -> StoreResult<Option<crate::domain::DirectoryGroup>> {
        self.inner.directory().get_group(company, id).await
    }

    async fn replace_group(
        &self,
        previous: &crate::domain::DirectoryGroup,
        next: &crate::domain::DirectoryGroup,
    ) -> StoreResult<crate::Replaced> {
        self.inner.directory().replace_group(previous, next).await
    }

    async fn delete_group(
        &self,
        group: &crate::domain::DirectoryGroup,
    ) -> StoreResult<crate::Replaced> {
        self.inner.directory().delete_group(group).await
    }

    async fn company_groups(
        &self,
        company: &PrincipalId,
    ) -> StoreResult<Vec<crate::domain::DirectoryGroup>> {
        self.inner.directory().company_groups(company).await
    }
}

#[async_trait]
impl ClientStore for CachedStore {
    async fn put_client(&self, client: &Client) -> StoreResult<()> {
        self.write_through(
            &self.clients,
            &client.id,
            self.inner.clients().put_client(client),
        )
        .await
    }

    async fn get_client(&self, id: &ClientId) -> StoreResult<Option<Client>> {
        self.read_through(&self.clients, *id, self.inner.clients().get_client(id))
            .await
    }

    async fn replace_registered_client(
        &self,
        client: &Client,
        expected_token: &TokenHash,
    ) -> StoreResult<bool> {
        self.write_through(
            &self.clients,
            &client.id,
            self.inner
                .clients()
                .replace_registered_client(client, expected_token),
        )
        .await
    }

    async fn list_clients(&self) -> StoreResult<Vec<Client>> {
        self.inner.clients().list_clients().await
    }

    /// A change written from the cached version is written into the cached record too: the
    /// store's record now holds exactly `secrets`, so the app's next request on this instance
    /// (a rotation's revoke right after its add) finds its client here instead of reading it
    /// again. Nothing written, or a cached record of another version: the entry is dropped.
    /// The entry keeps its age, so the cache's bound on other changes holds.
    async fn replace_client_secrets(
        &self,
        id: &ClientId,
        expected_version: u64,
        secrets: &ClientSecrets,
    ) -> StoreResult<bool> {
        let written = self
            .inner
            .clients()
            .replace_client_secrets(id, expected_version, secrets)
            .await;
        let stored = matches!(written, Ok(true));
        self.amend_cached_client(id, |client| {
            let current = stored && client.secrets.version() == expected_version;
            if current {
                client.secrets = secrets.clone();
            }
            current
        });
        written
    }

    /// A recorded use is written into the cached record too, so that the next requests on this
    /// instance see it and do not write it again within the hour. When nothing was written
    /// (another instance recorded it, or the secret is gone) the entry is dropped, so that the
    /// next request reads the store's record.
    async fn record_secret_use(
        &self,
        id: &ClientId,
        secret: &SecretId,
        at: UnixTime,
    ) -> StoreResult<bool> {
        let written = self
            .inner
            .clients()
            .record_secret_use(id, secret, at)
            .await?;
        self.amend_cached_client(id, |client| {
            if written {
                client.secrets.note_use(secret, at);
            }
            written
        });
        Ok(written)
    }

    /// Read from the store and cached afresh.
    async fn get_client_uncached(&self, id: &ClientId) -> StoreResult<Option<Client>> {
        self.clients.remove(id);
        self.get_client(id).await
    }

    fn caches_clients(&self) -> bool {
        true
    }
}

#[async_trait]
impl PrincipalStore for CachedStore {
    async fn insert_user(&self, user: &User) -> StoreResult<Inserted> {
        self.inner.principals().insert_user(user).await
    }

    async fn put_user(&self, user: &User) -> StoreResult<()> {
        self.write_through(
            &self.users,
            &user.id,
            self.inner.principals().put_user(user),
        )
        .await
    }

    async fn get_user(&self, id: &PrincipalId) -> StoreResult<Option<User>> {
        self.read_through(&self.users, *id, self.inner.principals().get_user(id))
            .await
    }

    /// Never cached: the password grant must see a changed password or status at once.
    async fn get_user_by_login(&self, login: &Login) -> StoreResult<Option<User>> {
        self.inner.principals().get_user_by_login(login).await
    }

    /// Never cached, like the login: the one-time-password grant must see a changed address.
    async fn get_user_by_email(&self, address: &ChannelHandle) -> StoreResult<Option<User>> {
        self.inner.principals().get_user_by_email(address).await
    }

    async fn set_user_email(
        &self,
        id: &PrincipalId,
        address: &ChannelHandle,
    ) -> StoreResult<EmailUpdate> {
        self.write_through(
            &self.users,
            id,
            self.inner.principals().set_user_email(id, address),
        )
        .await
    }

    /// Never cached, like the address: a federated sign-in must see a changed external id.
    async fn get_user_by_external_id(
        &self,
        company: &PrincipalId,
        external_id: &str,
    ) -> StoreResult<Option<User>> {
        self.inner
            .principals()
            .get_user_by_external_id(company, external_id)
            .await
    }

    async fn set_user_external_id(
        &self,
        id: &PrincipalId,
        external_id: Option<&str>,
    ) -> StoreResult<ExternalIdUpdate> {
        self.write_through(
            &self.users,
            id,
            self.inner
                .principals()
                .set_user_external_id(id, external_id),
        )
        .await
    }

    async fn put_company(&self, company: &Company) -> StoreResult<()> {
        self.write_through(
            &self.companies,
            &company.id,
            self.inner.principals().put_company(company),
        )
        .await
    }

    async fn get_company(&self, id: &PrincipalId) -> StoreResult<Option<Company>> {
        self.read_through(
            &self.companies,
            *id,
            self.inner.principals().get_company(id),
        )
        .await
    }

    async fn enable_company_for_client(
        &self,
        company: &PrincipalId,
        client: &ClientId,
    ) -> StoreResult<()> {
        let write = self
            .inner
            .principals()
            .enable_company_for_client(company, client);
        self.write_through(&self.enablements, &(*company, *client), write)
            .await
    }

    async fn is_company_enabled_for_client(
        &self,
        company: &PrincipalId,
        client: &ClientId,
    ) -> StoreResult<bool> {
        let load = self
            .inner
            .principals()
            .is_company_enabled_for_client(company, client);
        self.read_through(&self.enablements, (*company, *client), load)
            .await
    }
}

#[async_trait]
impl LegacyStore for CachedStore {
    /// Relinking a consumer key to another client is as rare as disabling a client.
    async fn put_legacy_app(&self, app: &LegacyApp) -> StoreResult<()> {
        let write = self.inner.legacy().put_legacy_app(app);
        self.write_through(&self.legacy_apps, &app.consumer_key, write)
            .await
    }

    async fn get_legacy_app(&self, key: &ConsumerKey) -> StoreResult<Option<LegacyApp>> {
        self.read_through(
            &self.legacy_apps,
            key.clone(),
            self.inner.legacy().get_legacy_app(key),
        )
        .await
    }

    /// Legacy tokens and their exchange links are read on every use, never cached.
    async fn put_legacy_tokens(&self, tokens: &[LegacyToken]) -> StoreResult<()> {
        self.inner.legacy().put_legacy_tokens(tokens).await
    }

    async fn get_legacy_token(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<LegacyToken>> {
        self.inner.legacy().get_legacy_token(hash, now).await
    }

    async fn get_legacy_exchange(&self, hash: &TokenHash) -> StoreResult<Option<LegacyExchange>> {
        self.inner.legacy().get_legacy_exchange(hash).await
    }
}

// Its tests, which build their data with the conformance suite's records, are in
// `token-store-conformance` (src/backends/).
